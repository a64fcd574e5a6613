"""The guard's provenance check reads an index of what the session has seen (GUARD-PROVENANCE-INDEX):
the same answers as ``occurs`` over the texts, at a cost set by the call, not by the session."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given

from prefixexec.adapters import provenance
from prefixexec.adapters.provenance import SeenIndex, occurs
from prefixexec.guard import Guard

from strategies import seen_and_identifier

TOOLS = [
    {
        "name": "get_order",
        "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string"}}},
    },
    {"name": "list_orders", "inputSchema": {"type": "object", "properties": {}}},
]


@pytest.mark.spec("GUARD-PROVENANCE-INDEX", "TAU-ENTITY-NORM")
@given(seen_and_identifier())
@example((["order W-1024."], "w\u20131024"))  # two words, a normalised dash between them
@example((["x-a-b"], "a-b"))  # a core glued to a non-word character is still a whole token
@example((["ab-"], "-"))  # a core of non-word characters touching a word: not a whole token
@example((["-- x"], "--"))  # ... at the text's start: a whole token
@example((["#W1"], "##w1"))  # leading '#' stripped from the identifier, optional in the text
def test_the_index_answers_as_occurs_does(case: tuple[list[str], str]) -> None:
    texts, identifier = case
    assert SeenIndex(texts).occurs(identifier) == occurs(identifier, texts)


def session(results: int) -> Guard:
    """A guard told of order Q3-XK that has seen ``results`` results of 200 words each, every one
    holding W1 and W2."""
    guard = Guard(TOOLS, context=["my other order is Q3-XK"])
    for n in range(results):
        text = f"page {n}: orders W1, W2 and " + " ".join("item of 7 units" for _ in range(50))
        guard.run("list_orders", {}, lambda text=text: text)
    return guard


def work_of_checks(guard: Guard, monkeypatch: pytest.MonkeyPatch, values: list[str]) -> tuple[int, int]:
    """(characters normalised, places probed) while checking ``get_order`` with each value."""
    normalised = 0
    real = provenance.normalise

    def counting(text: str) -> str:
        nonlocal normalised
        normalised += len(text)
        return real(text)

    monkeypatch.setattr(provenance, "normalise", counting)
    before = guard.seen.probes
    for value in values:
        guard.check("get_order", {"order_id": value})
    monkeypatch.setattr(provenance, "normalise", real)
    return normalised, guard.seen.probes - before


@pytest.mark.spec("GUARD-PROVENANCE-INDEX")
def test_a_checks_work_does_not_grow_with_the_session(monkeypatch: pytest.MonkeyPatch) -> None:
    # seen (one word), invented (one word), seen as two words (in the context), invented with
    # a word that every result holds ("W1-W9": W1 is everywhere, W9 nowhere)
    values = ["W1", "W999", "Q3-XK", "W1-W9"]
    small, large = session(5), session(500)
    assert [small.check("get_order", {"order_id": v}).forward for v in values] == [True, False, True, False]
    assert [large.check("get_order", {"order_id": v}).forward for v in values] == [True, False, True, False]
    work_small = work_of_checks(small, monkeypatch, values)
    work_large = work_of_checks(large, monkeypatch, values)
    # every value is normalised once (its characters: 2 + 4 + 5 + 5 = 16), never a seen text;
    # a value of several words is compared at the occurrences of its rarest word: Q3-XK's 'q3'
    # once (the context), W1-W9's 'w9' nowhere: one probe in all
    assert work_small == work_large == (16, 1)


@pytest.mark.spec("GUARD-PROVENANCE-INDEX")
def test_each_seen_text_is_normalised_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = provenance.normalise

    def counting(text: str) -> str:
        calls.append(text)
        return real(text)

    monkeypatch.setattr(provenance, "normalise", counting)
    guard = Guard(TOOLS, context=["my orders are W1 and W2"])
    for value in ("W1", "W2", "W1"):
        assert guard.run("get_order", {"order_id": value}, lambda order_id: f"{order_id}: shipped")[0]
    seen: list[Any] = [c for c in calls if "W" in c and len(c) > 2]
    # the context and the three results, each once; the checks normalised only their values
    assert seen == ["my orders are W1 and W2", "W1: shipped", "W2: shipped", "W1: shipped"]
