"""``--select KEY=GLOB``: keep the rollouts whose keys match (spec: OUT-SELECT).

Keys: ``dataset``, ``model``, ``method``, ``task_id``. A value is a shell-style glob matched
case-sensitively against the whole key (``fnmatch.fnmatchcase``), or ``@FILE``: a file of task
ids (or names), one per line (blank lines and lines starting with ``#`` are skipped), or a JSON
list of ids, or a JSON object of such lists (BFCL's ``test_case_ids_to_generate.json``, as
``prefixexec sample`` writes it), matched exactly. Repeated ``--select`` with the same key are
alternatives (a rollout needs to match one of them); different keys must all match.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import attrs

from prefixexec.adapters.errors import InputError
from prefixexec.kernel import Rollout

KEYS = ("dataset", "model", "method", "task_id")
#: Longest id file read by ``KEY=@FILE`` (bytes).
MAX_ID_FILE = 64 * 1024 * 1024


@attrs.frozen(slots=True)
class Pattern:
    """One ``KEY=GLOB`` or ``KEY=@FILE``."""

    key: str
    glob: str | None = None
    names: frozenset[str] | None = None

    def matches(self, value: str) -> bool:
        if self.names is not None:
            return value in self.names
        return fnmatch.fnmatchcase(value, self.glob or "")


def _id_file(path: str) -> frozenset[str]:
    from prefixexec.adapters.inputs import open_binary

    file = Path(path)
    try:
        if not file.is_file():
            raise InputError("--select", f"{path!r}: not a regular file of ids")
        # The checks of every input (no FIFO or pseudo-file: HOSTILE-FIFO, HOSTILE-PSEUDO), and
        # never more than the bound read, whatever size the file claims.
        with open_binary(path, "a file of ids") as handle:
            data = handle.read(MAX_ID_FILE + 1)
        if len(data) > MAX_ID_FILE:
            raise InputError("--select", f"{path!r}: larger than {MAX_ID_FILE} bytes")
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError("--select", f"{path!r}: not UTF-8 text") from None
    except OSError as exc:
        raise InputError("--select", f"{path!r}: cannot read it: {exc.strerror or exc}") from None
    if text.lstrip().startswith(("{", "[")):
        return _json_ids(path, text)
    return frozenset(  # lines end at "\n" only (HOSTILE-LINES)
        line.strip() for line in text.split("\n") if line.strip() and not line.lstrip().startswith("#")
    )


def _json_ids(path: str, text: str) -> frozenset[str]:
    """The ids of a JSON id file: a list of ids, or an object of lists (category -> ids)."""
    import json

    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:  # HOSTILE-BIGINT: ValueError, not only JSON's
        from prefixexec.adapters.numbers import json_fault

        what = json_fault(exc) if not isinstance(exc, RecursionError) else "nested too deeply"
        raise InputError("--select", f"{path!r}: starts like JSON but is not valid JSON: {what}") from None
    lists = list(value.values()) if isinstance(value, dict) else [value]
    ids: set[str] = set()
    for items in lists:
        if not isinstance(items, list) or not all(
            isinstance(i, str | int) and not isinstance(i, bool) for i in items
        ):
            raise InputError(
                "--select", f"{path!r}: a JSON id file is a list of ids or an object of lists of ids"
            )
        ids.update(str(i) for i in items)
    return frozenset(ids)


def parse(items: Sequence[str] | None) -> tuple[Pattern, ...]:
    """The ``--select`` values, checked: ``KEY=GLOB`` with a known key."""
    out: list[Pattern] = []
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or key not in KEYS:
            raise InputError("--select", f"expected KEY=GLOB with KEY one of {', '.join(KEYS)}: {item!r}")
        if value.startswith("@"):
            out.append(Pattern(key, names=_id_file(value[1:])))
        else:
            out.append(Pattern(key, glob=value))
    return tuple(out)


def keys_of(rollout: Rollout) -> Mapping[str, str]:
    c = rollout.condition
    return {"dataset": c.dataset, "model": c.model, "method": c.method, "task_id": rollout.task_id}


def selected(patterns: Sequence[Pattern], keys: Mapping[str, str]) -> bool:
    """Whether a rollout with ``keys`` is kept: every key named matches one of its patterns."""
    by_key: dict[str, list[Pattern]] = {}
    for p in patterns:
        by_key.setdefault(p.key, []).append(p)
    return all(any(p.matches(keys[key]) for p in group) for key, group in by_key.items())


def select(rollouts: Iterable[Rollout], patterns: Sequence[Pattern]) -> list[Rollout]:
    """The rollouts that ``patterns`` keep, in input order; an input error when none is kept."""
    items = list(rollouts)
    if not patterns:
        return items
    kept = [r for r in items if selected(patterns, keys_of(r))]
    if items and not kept:
        shown = " ".join(f"{p.key}={p.glob if p.glob is not None else '@FILE'}" for p in patterns)
        raise InputError("--select", f"no rollout matches {shown} (read {len(items)} rollouts)")
    return kept
