"""Reading BFCL result files into rollouts (spec: BFCL-INPUT, BFCL-STEP, BFCL-INFERENCE-ERROR, BFCL-DROPPED).

A result file ``BFCL_v<N>_multi_turn_<category>_result.json`` holds one JSON object per line
with ``id`` and ``result`` (turns of steps of raw model output). Each entry is validated,
decoded without evaluation (:mod:`.parse`) and replayed with the semantics
(:mod:`.semantics`). Every entry is validated before anything is returned. Besides the
rollouts, the reader counts per file what it decoded (:class:`FileSummary`), for the audit.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from prefixexec.kernel import ConditionKey, Outcome, Rollout

from ..errors import InputError
from ..limits import notice
from ..records import open_lines, parse_json_line
from . import backend
from .parse import DecodedStep, StepFormatError, decode_step
from .semantics import INFERENCE_ERROR, BfclRun, evaluate, inference_error_run, make_run, task

if TYPE_CHECKING:
    from .. import AdapterOptions

#: Dataset name prefix; a condition's dataset is ``bfcl-multi-turn/<category>`` (BFCL-INPUT).
DATASET_PREFIX = "bfcl-multi-turn/"
#: Method name used when ``--method`` is not given.
DEFAULT_METHOD = "default"
#: ``--inference-errors``: the leaderboard's convention (a failed rollout) or leaving them out.
INFERENCE_ERROR_CHOICES = ("failure", "exclude")
#: What BFCL's inference loop logs when it cannot decode a step (and ends the turn).
BFCL_DECODE_ERROR_LOG = "Error decoding the model response"

_RESULT_NAME = re.compile(r"^BFCL_v\d+_(.+)_result\.json$")


@attrs.frozen(slots=True)
class Excluded:
    """A result entry whose inference crashed (left out with ``--inference-errors exclude``)."""

    where: str
    task_id: str


@attrs.frozen(slots=True)
class FileSummary:
    """What one result file holds, counted while decoding it (BFCL-DROPPED)."""

    path: str
    #: Entries read (after ``--category``).
    entries: int = 0
    #: Entries whose result is ``Error during inference ...``.
    inference_errors: int = 0
    #: Steps of the other entries, replies included.
    steps: int = 0
    #: Steps that make calls (tool actions), decodable or not.
    call_steps: int = 0
    #: Tool actions (calls) in all steps.
    calls: int = 0
    #: Calls that decode to a plain literal call (no schema fault from decoding).
    decodable_calls: int = 0
    #: Call steps BFCL's decoder fails on as a whole: its loop drops them and ends the turn.
    dropped_steps: int = 0
    #: Calls in those steps (each a schema failure here).
    dropped_calls: int = 0
    #: Steps with a function name that is not an identifier (e.g. chat-template tokens such as
    #: ``echo<|channel|>commentary``): BFCL decodes and executes them, as an execution error.
    bad_name_steps: int = 0
    #: Entries that carry BFCL's ``inference_log``.
    logged_entries: int = 0
    #: ``Error decoding the model response`` records in those logs.
    logged_decode_errors: int = 0
    #: Dropped steps counted here in the entries that carry a log.
    dropped_in_logged: int = 0

    @property
    def log_agrees(self) -> bool | None:
        """Whether the dropped steps equal BFCL's logged decode errors (``None``: no log)."""
        if self.logged_entries == 0:
            return None
        return self.dropped_in_logged == self.logged_decode_errors

    def to_json(self) -> dict[str, Any]:
        return {**attrs.asdict(self), "log_agrees": self.log_agrees}


@attrs.frozen(slots=True)
class ReadResult:
    rollouts: tuple[Rollout, ...]
    excluded: tuple[Excluded, ...]
    #: Rollouts that are inference errors counted as failures (``--inference-errors failure``).
    inference_failures: tuple[Excluded, ...] = ()
    files: tuple[FileSummary, ...] = ()


def _model_from_path(path: str) -> str | None:
    parent = Path(path).resolve().parent
    if parent.name == "multi_turn":
        parent = parent.parent
    return parent.name or None


def _lines(path: str) -> list[tuple[int, str]]:
    # JSON lines end at "\n" only (HOSTILE-LINES: str.splitlines also breaks at U+2028, U+0085,
    # \x0b, \x0c, \x1c-\x1e, which a result written with ensure_ascii=False holds raw in its
    # strings); the line reader of records bounds each line (HOSTILE-LINE) and checks the file.
    return list(open_lines(path))


def _objects(path: str) -> list[tuple[str, dict[str, Any]]]:
    name = "<stdin>" if path == "-" else path
    found: list[tuple[str, dict[str, Any]]] = []
    for number, line in _lines(path):
        where = f"{name}:{number}"
        if not line.strip():
            continue
        try:
            record = parse_json_line(line)
        except (ValueError, RecursionError) as exc:
            raise InputError(where, f"not valid JSON: {exc}") from None
        if not isinstance(record, dict):
            raise InputError(where, f"expected a JSON object, got {type(record).__name__}")
        if not isinstance(record.get("id"), str):
            raise InputError(where, "missing field 'id' (a string such as 'multi_turn_base_0')")
        if "result" not in record:
            raise InputError(where, "missing field 'result'")
        found.append((where, record))
    return found


def _file_category(path: str) -> str | None:
    match = _RESULT_NAME.match(Path(path).name)
    if match is None:
        return None
    category = match.group(1)
    if category not in backend.CATEGORIES:
        raise InputError(path, f"not a BFCL multi-turn result file (category {category})")
    return category


def _decode_turns(where: str, result: list[Any], function_calling: bool) -> list[list[DecodedStep]]:
    turns: list[list[DecodedStep]] = []
    for t, turn in enumerate(result):
        if not isinstance(turn, list):
            raise InputError(where, f"result[{t}] must be a list of steps, got {type(turn).__name__}")
        steps: list[DecodedStep] = []
        for s, raw in enumerate(turn):
            try:
                steps.append(decode_step(raw, function_calling=function_calling))
            except StepFormatError as exc:
                raise InputError(where, f"result[{t}][{s}]: {exc}") from None
        turns.append(steps)
    return turns


def _logged_decode_errors(log: Any) -> int:
    """``Error decoding the model response`` handler records anywhere in BFCL's ``inference_log``."""
    count = 0
    stack = [log]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            content = item.get("content")
            if (
                item.get("role") == "handler_log"
                and isinstance(content, str)
                and content.startswith(BFCL_DECODE_ERROR_LOG)
            ):
                count += 1
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return count


def _count(summary: FileSummary, turns: list[list[DecodedStep]], record: dict[str, Any]) -> FileSummary:
    steps = [step for turn in turns for step in turn]
    call_steps = [step for step in steps if not step.is_reply]
    dropped = [step for step in call_steps if not any(c.decoded for c in step.calls)]
    logged = "inference_log" in record
    return attrs.evolve(
        summary,
        steps=summary.steps + len(steps),
        call_steps=summary.call_steps + len(call_steps),
        calls=summary.calls + sum(len(step.calls) for step in call_steps),
        decodable_calls=summary.decodable_calls
        + sum(c.fault is None for step in call_steps for c in step.calls),
        dropped_steps=summary.dropped_steps + len(dropped),
        dropped_calls=summary.dropped_calls + sum(len(step.calls) for step in dropped),
        bad_name_steps=summary.bad_name_steps
        + sum(any(c.name and not c.name.isidentifier() for c in step.calls) for step in call_steps),
        logged_entries=summary.logged_entries + logged,
        logged_decode_errors=summary.logged_decode_errors
        + (_logged_decode_errors(record["inference_log"]) if logged else 0),
        dropped_in_logged=summary.dropped_in_logged + (len(dropped) if logged else 0),
    )


def read_results(paths: Sequence[str], options: AdapterOptions) -> ReadResult:
    """Read and replay BFCL result files; every entry is validated before anything is returned."""
    wanted: str | None = None
    if options.category is not None:
        try:
            wanted = backend.normalise_category(options.category)
        except ValueError as exc:
            raise InputError("--category", str(exc)) from None
    if options.inference_errors not in INFERENCE_ERROR_CHOICES:
        raise InputError(
            "--inference-errors",
            f"expected one of {', '.join(INFERENCE_ERROR_CHOICES)}, got {options.inference_errors!r}",
        )
    exclude = options.inference_errors == "exclude"
    backend.package()
    method = options.method or DEFAULT_METHOD
    rollouts: list[Rollout] = []
    excluded: list[Excluded] = []
    failed: list[Excluded] = []
    files: list[FileSummary] = []
    seen: dict[tuple[ConditionKey, str], str] = {}
    for path in paths:
        file_category = _file_category(path) if path != "-" else None
        if wanted is not None and file_category is not None and file_category != wanted:
            continue
        model = options.model or (None if path == "-" else _model_from_path(path))
        if not model:
            raise InputError(path, "cannot tell the model from the path: give --model")
        objects = _objects(path)
        summary = FileSummary("<stdin>" if path == "-" else path)
        function_calling = model.upper().endswith("-FC") or any(
            isinstance(step, dict | list)
            for _, record in objects
            if isinstance(record["result"], list)
            for turn in record["result"]
            if isinstance(turn, list)
            for step in turn
        )
        for where, record in objects:
            task_id: str = record["id"]
            category = backend.category_of(task_id)
            if category not in backend.CATEGORIES:
                raise InputError(where, f"task id {task_id!r} is not a BFCL multi-turn task")
            if file_category is not None and category != file_category:
                raise InputError(where, f"task id {task_id!r} does not belong to this {file_category} file")
            if wanted is not None and category != wanted:
                continue
            try:
                bfcl_task = task(task_id)
            except KeyError:
                raise InputError(
                    where, f"unknown task id {task_id!r} (not in bfcl-eval {backend.installed_version()})"
                ) from None
            summary = attrs.evolve(summary, entries=summary.entries + 1)
            result = record["result"]
            if isinstance(result, str) and result.startswith(INFERENCE_ERROR):
                summary = attrs.evolve(summary, inference_errors=summary.inference_errors + 1)
                if exclude:
                    excluded.append(Excluded(where, task_id))
                    continue
                failed.append(Excluded(where, task_id))
                run = inference_error_run(bfcl_task, result)
            elif not isinstance(result, list):
                raise InputError(where, f"'result' must be a list of turns, got {type(result).__name__}")
            else:
                turns = _decode_turns(where, result, function_calling)
                summary = _count(summary, turns, record)
                run = make_run(bfcl_task, turns)
            evaluation = evaluate(run)
            key = ConditionKey(DATASET_PREFIX + category, model, method)
            if (key, task_id) in seen:
                raise InputError(
                    where,
                    f"task {task_id!r} repeats for {model}/{method}, first seen at {seen[key, task_id]}",
                )
            seen[key, task_id] = where
            rollouts.append(
                Rollout(
                    key,
                    task_id,
                    0,
                    evaluation.outcome,
                    bool(evaluation.success),
                    _evidence(where, evaluation.failure or "valid", run, evaluation.outcome),
                )
            )
        files.append(summary)
    if not rollouts:
        if excluded:
            raise InputError(", ".join(paths), f"all {len(excluded)} entries are '{INFERENCE_ERROR}' entries")
        raise InputError(", ".join(paths) or "<no input>", "no BFCL multi-turn entries found")
    return ReadResult(tuple(rollouts), tuple(excluded), tuple(failed), tuple(files))


def _ids(entries: Sequence[Excluded]) -> str:
    ids = ", ".join(e.task_id for e in entries[:10])
    return ids + ("" if len(entries) <= 10 else f" and {len(entries) - 10} more")


def read(paths: Sequence[str], options: AdapterOptions) -> list[Rollout]:
    """The ``score --adapter bfcl`` reader; reports inference-error entries on stderr."""
    result = read_results(paths, options)
    if result.excluded:
        notice(
            f"prefixexec: bfcl: excluded {len(result.excluded)} entries "
            f"with '{INFERENCE_ERROR}': {_ids(result.excluded)}"
        )
    if result.inference_failures:
        notice(
            f"prefixexec: bfcl: {len(result.inference_failures)} entries with '{INFERENCE_ERROR}' "
            f"count as failed rollouts (--inference-errors exclude leaves them out): "
            f"{_ids(result.inference_failures)}"
        )
    return list(result.rollouts)


__all__ = [
    "BFCL_DECODE_ERROR_LOG",
    "DATASET_PREFIX",
    "DEFAULT_METHOD",
    "INFERENCE_ERROR_CHOICES",
    "Excluded",
    "FileSummary",
    "ReadResult",
    "read",
    "read_results",
]


def _evidence(where: str, check: str, run: BfclRun, outcome: Outcome) -> dict[str, object]:
    """The rollout's meta: where it was read, the success check, and per-action evidence for the
    per-rollout rows (OUT-ROLLOUTS): each action's 1-based turn, and the raw text of a failing
    call that could not be parsed into a tool and arguments."""
    meta: dict[str, object] = {
        "source": where,
        "success_check": check,
        "action_turns": [a.turn + 1 for a in run.actions],
    }
    if not outcome.fully_executable and outcome.fed <= len(run.actions):
        failing = run.actions[outcome.fed - 1]
        if failing.call.fault is not None:
            meta["failing_text"] = failing.call.text
    return meta
