"""Per-rollout rows: where and why each rollout failed (spec: OUT-ROLLOUTS, OUT-ROLLOUTS-FILE).

One row per rollout, in input order, with the keys of :data:`ROW_KEYS` (a contract like
``score --json``: keys may be added, never renamed; JSON Schema spec/rollouts.schema.json).
``failing`` describes the first non-executable action a_FED: its 1-based ``position``, the
``turn`` where the benchmark has turns, the ``tool`` and its ``arguments`` (or ``text`` when the
call could not be parsed), or ``kind: "no_tool"`` for the terminal no-tool action, and where the
adapter knows it, the action's ``source`` in the input (OUT-SOURCE: its message, or its span).
``rejections`` lists every rejected action, not only a_FED, where the adapter judges every action
(OUT-REJECTIONS): position, label, reason, whether the agent recovered, and ``counted`` (true for
a_FED only: FED and every metric count the first rejection alone); ``null`` where it does not.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from prefixexec.adapters.errors import InputError
from prefixexec.adapters.files import atomic_path, output_directory
from prefixexec.adapters.harness import HarnessFault
from prefixexec.adapters.rejections import SOURCES_KEY, verdicts_of
from prefixexec.kernel import Rollout
from prefixexec.kernel.actions import Action, NoToolAction, ToolCall

#: The keys of a row, in order (OUT-ROLLOUTS).
ROW_KEYS: tuple[str, ...] = (
    "dataset",
    "model",
    "method",
    "task_id",
    "trial",
    "T",
    "fed",
    "executable",
    "label",
    "reason",
    "failing",
    "success",
    "source",
    "rejections",
)
#: Formats of ``--rollouts PATH``, by the path's extension (OUT-ROLLOUTS-FILE).
FORMATS = (".jsonl", ".csv", ".parquet")
#: Keys whose value is written as its JSON text in a CSV cell or a Parquet string.
_JSON_CELLS = frozenset({"failing", "rejections"})
#: Longest text of a value that cannot be written as JSON.
_REPR_LIMIT = 500


def json_value(value: object, depth: int = 0) -> Any:
    """``value`` as JSON data: mappings, sequences, strings, finite numbers, booleans, null.

    Anything else (a set, a float NaN, an object an adapter kept) is written as its ``repr``,
    cut to 500 characters, so a row can always be written.
    """
    if depth > 50:
        return "..."
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, Mapping):
        return {str(k): json_value(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_value(v, depth + 1) for v in value]
    text = repr(value)
    return text if len(text) <= _REPR_LIMIT else text[: _REPR_LIMIT - 3] + "..."


def action_json(
    action: Action,
    position: int,
    turns: Sequence[object] | None = None,
    sources: Sequence[object] | None = None,
) -> dict[str, Any]:
    """An action as the ``failing`` object (and as one step of ``explain``)."""
    out: dict[str, Any] = {"position": position}
    if turns is not None and 0 < position <= len(turns):
        out["turn"] = json_value(turns[position - 1])
    if sources is not None and 0 < position <= len(sources):
        out["source"] = json_value(sources[position - 1])
    if isinstance(action, HarnessFault):  # HARNESS-COUNT: the harness ended the rollout here
        out.update(kind="harness_error", tool=None, arguments=None)
        return out
    if isinstance(action, NoToolAction):
        out.update(kind="no_tool", tool=None, arguments=None)
        return out
    if not isinstance(action, ToolCall):
        raise TypeError(f"not an action: {action!r}")
    out.update(kind="tool_call", tool=action.name, arguments=json_value(dict(action.arguments)))
    if action.call_id is not None:
        out["call_id"] = action.call_id
    return out


def _turns(rollout: Rollout) -> Sequence[object] | None:
    turns = rollout.meta.get("action_turns")
    return turns if isinstance(turns, list | tuple) else None


def action_sources(rollout: Rollout) -> Sequence[object] | None:
    """Where each action a_1..a_T sits in the input (OUT-SOURCE), as the adapter recorded it: the
    1-based ``message`` of a message list (tau-bench, chat), or the ``span_id`` of a trace; ``None``
    when the adapter records no position for every action."""
    T = len(rollout.outcome.actions)
    sources = rollout.meta.get(SOURCES_KEY)
    if isinstance(sources, list | tuple) and len(sources) == T:
        return sources
    spans = rollout.meta.get("action_spans")  # traces: TRACE-EVALUATIONS keeps each call's span
    if isinstance(spans, list | tuple) and len(spans) == T:
        return [{"span_id": span} for span in spans]
    return None


def rejections_json(rollout: Rollout) -> list[dict[str, Any]] | None:
    """Every rejected action of the rollout (OUT-REJECTIONS), in order: the ``failing`` object's
    ``position``, ``turn``, ``source``, ``kind``, ``tool`` plus ``label``, ``reason``, ``counted``
    (a_FED: the only one FED counts), ``recovered`` (a later call of the same tool was accepted, or
    the rollout succeeded) and ``recovered_at`` (that later call's position, else null). ``None``
    when the adapter does not judge the actions after a_FED."""
    outcome = rollout.outcome
    verdicts = verdicts_of(rollout.meta, outcome)
    if verdicts is None:
        return None
    turns, sources = _turns(rollout), action_sources(rollout)
    # the next accepted call of each tool after position k, found in one backward pass
    next_accepted: dict[int, int | None] = {}
    accepted_at: dict[str, int] = {}
    for k in range(len(verdicts), 0, -1):
        action = outcome.actions[k - 1]
        if isinstance(action, ToolCall):
            if verdicts[k - 1] is None:
                accepted_at[action.name] = k
            else:
                next_accepted[k] = accepted_at.get(action.name)
    out: list[dict[str, Any]] = []
    for k, verdict in enumerate(verdicts, start=1):
        if verdict is None:
            continue
        item = action_json(outcome.actions[k - 1], k, turns, sources)
        item.pop("arguments", None)
        at = next_accepted.get(k)
        label = verdict.label
        item.update(
            label=None if label is None else label.value,
            reason=verdict.reason,
            counted=k == outcome.fed,
            recovered=at is not None or rollout.success,
            recovered_at=at,
        )
        out.append(item)
    return out


def failing_json(rollout: Rollout) -> dict[str, Any] | None:
    """The ``failing`` object of a rollout: ``None`` when it is fully executable."""
    outcome = rollout.outcome
    if outcome.fully_executable:
        return None
    failing = outcome.failing
    if failing is None and rollout.meta.get("unit") == "turn":
        return _failing_turn(rollout)
    if failing is None:
        # An outcome recorded without its actions: only the position is known.
        return {"position": outcome.fed, "kind": "unknown", "tool": None, "arguments": None}
    out = action_json(failing, outcome.fed, _turns(rollout), action_sources(rollout))
    text = rollout.meta.get("failing_text")
    texts = rollout.meta.get("action_texts")  # the calls as the model wrote them (BFCL)
    if not isinstance(text, str) and isinstance(texts, list | tuple) and len(texts) == outcome.T:
        text = texts[outcome.fed - 1]
    if isinstance(text, str):
        out["text"] = text
    return out


def _failing_turn(rollout: Rollout) -> dict[str, Any]:
    """TURN-UNIT: the failing turn, with the first non-executable call in it (``call``; its
    ``tool`` and ``arguments`` also at the top, as for a call)."""
    turn = rollout.outcome.fed
    out: dict[str, Any] = {"position": turn, "kind": "turn", "turn": turn, "tool": None, "arguments": None}
    actions, fed = rollout.meta.get("call_actions"), rollout.meta.get("call_fed")
    if isinstance(actions, tuple) and isinstance(fed, int) and 0 < fed <= len(actions):
        call = action_json(actions[fed - 1], fed, _turns(rollout))
        text = rollout.meta.get("failing_text")
        if isinstance(text, str):
            call["text"] = text
        out.update(tool=call["tool"], arguments=call["arguments"], call=call)
    return out


def source_of(rollout: Rollout) -> str | None:
    """Where the rollout was read: ``FILE:LINE``, or ``FILE`` and the record (adapter's words)."""
    source = rollout.meta.get("source")
    return source if isinstance(source, str) else None


def row(rollout: Rollout) -> dict[str, Any]:
    """One per-rollout row (OUT-ROLLOUTS)."""
    outcome = rollout.outcome
    return {
        "dataset": rollout.condition.dataset,
        "model": rollout.condition.model,
        "method": rollout.condition.method,
        "task_id": rollout.task_id,
        "trial": rollout.trial,
        "T": outcome.T,
        "fed": outcome.fed,
        "executable": outcome.fully_executable,
        "label": None if outcome.label is None else outcome.label.value,
        "reason": outcome.reason,
        "failing": failing_json(rollout),
        "success": rollout.success,
        "source": source_of(rollout),
        "rejections": rejections_json(rollout),
    }


def rows(rollouts: Iterable[Rollout]) -> list[dict[str, Any]]:
    """The rows of ``rollouts`` in input order."""
    return [row(r) for r in rollouts]


def safe_text(text: str) -> str:
    """``text`` with any lone surrogate written as its ``\\udXXX`` escape, so it encodes as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def json_line(document: Mapping[str, Any] | Sequence[Any]) -> str:
    """One JSON object on a line; ASCII escapes only when the text holds a lone surrogate."""
    line = json.dumps(document, ensure_ascii=False, allow_nan=False)
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        line = json.dumps(document, ensure_ascii=True, allow_nan=False)
    return line + "\n"


def jsonl_text(table: Sequence[Mapping[str, Any]]) -> str:
    """One JSON object per line, keys in contract order, UTF-8 text."""
    return "".join(json_line(r) for r in table)


def csv_text(table: Sequence[Mapping[str, Any]]) -> str:
    """CSV with a header; ``failing`` as its JSON text; null values as empty cells."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(ROW_KEYS)
    for r in table:
        cells: list[object] = []
        for key in ROW_KEYS:
            value = r[key]
            if value is None:
                cells.append("")
            elif key in _JSON_CELLS:
                cells.append(json_line(value).rstrip("\n"))
            elif isinstance(value, bool):
                cells.append("true" if value else "false")
            else:
                cells.append(safe_text(value) if isinstance(value, str) else value)
        writer.writerow(cells)
    return buffer.getvalue()


def check_path(path: str) -> str:
    """The format of ``--rollouts PATH`` from its extension; an input error for any other."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise InputError(
            "--rollouts", f"{path!r}: unknown format {suffix or '(no extension)'!r}: use {', '.join(FORMATS)}"
        )
    output_directory(path)
    return suffix


def write(path: str, table: Sequence[Mapping[str, Any]]) -> None:
    """Write the rows to ``path`` in the format its extension names (atomically)."""
    suffix = check_path(path)
    target = Path(path)
    if suffix == ".parquet":
        _write_parquet(target, table)
        return
    text = jsonl_text(table) if suffix == ".jsonl" else csv_text(table)
    with atomic_path(target) as tmp:
        Path(tmp).write_text(text, encoding="utf-8")


def _write_parquet(target: Path, table: Sequence[Mapping[str, Any]]) -> None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        from prefixexec.extras import install_hint

        raise InputError("--rollouts", f"writing Parquet needs pyarrow: {install_hint('parquet')}") from None
    schema = pa.schema(
        [
            ("dataset", pa.string()),
            ("model", pa.string()),
            ("method", pa.string()),
            ("task_id", pa.string()),
            ("trial", pa.int64()),
            ("T", pa.int64()),
            ("fed", pa.int64()),
            ("executable", pa.bool_()),
            ("label", pa.string()),
            ("reason", pa.string()),
            ("failing", pa.string()),
            ("success", pa.bool_()),
            ("source", pa.string()),
            ("rejections", pa.string()),
        ]
    )
    columns: dict[str, list[Any]] = {key: [] for key in ROW_KEYS}
    for r in table:
        for key in ROW_KEYS:
            value = r[key]
            if key in _JSON_CELLS and value is not None:
                value = json_line(value).rstrip("\n")
            elif isinstance(value, str):
                value = safe_text(value)
            columns[key].append(value)
    arrow = pa.table(columns, schema=schema)
    with atomic_path(target) as tmp:
        pq.write_table(arrow, tmp)
