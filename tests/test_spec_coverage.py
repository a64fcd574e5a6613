"""Every spec ID has a test that cites it, and every cited ID exists (style note 4)."""

from __future__ import annotations

from spec_ids import cited_ids, spec_ids


def test_spec_has_ids() -> None:
    ids = spec_ids()
    # The core equations of the paper must all be there.
    for n in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12):
        assert f"EQ-{n}" in ids


def test_every_spec_id_is_cited_by_a_test() -> None:
    missing = sorted(set(spec_ids()) - set(cited_ids()))
    assert not missing, f"spec IDs without a citing test: {missing}"


def test_every_cited_id_exists() -> None:
    unknown = {i: t for i, t in cited_ids().items() if i not in spec_ids()}
    assert not unknown, f"tests cite IDs that spec/ does not define: {unknown}"
