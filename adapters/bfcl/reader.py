"""Reading BFCL result files into rollouts (spec: BFCL-INPUT, BFCL-STEP, BFCL-INFERENCE-ERROR, BFCL-DROPPED).

A result file ``BFCL_v<N>_multi_turn_<category>_result.json`` holds one JSON object per line
with ``id`` and ``result`` (turns of steps of raw model output). Each entry is validated,
decoded without evaluation (:mod:`.parse`) and replayed with the semantics
(:mod:`.semantics`). Every entry is validated before anything is returned. Besides the
rollouts, the reader counts per file what it decoded (:class:`FileSummary`), for the audit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from prefixexec.kernel import ConditionKey, Outcome, Rollout

from .. import harness
from ..errors import InputError
from ..inputs import plain_name
from ..limits import notice
from ..numbers import json_fault
from ..records import open_lines, parse_json_line
from . import backend, decoders
from .parse import MAX_STEP_CHARS, DecodedStep, StepFormatError
from .semantics import (
    INFERENCE_ERROR,
    INFERENCE_MESSAGE_CHARS,
    BfclRun,
    CallRecord,
    Evaluation,
    evaluate,
    inference_error_message,
    make_run,
    task,
)

if TYPE_CHECKING:
    from .. import AdapterOptions

#: Dataset name prefix; a condition's dataset is ``bfcl-multi-turn/<category>`` (BFCL-INPUT).
DATASET_PREFIX = "bfcl-multi-turn/"
#: Method name used when ``--method`` is not given.
DEFAULT_METHOD = "default"
#: ``--inference-errors`` (BFCL's alias of ``--harness-errors``): a failed rollout, or left out.
INFERENCE_ERROR_CHOICES = harness.CHOICES
#: What BFCL's inference loop logs when it cannot decode a step (and ends the turn).
BFCL_DECODE_ERROR_LOG = "Error decoding the model response"

#: Decoders that read text steps as replies (or as Python calls): a text holding JSON tool calls
#: is counted and warned about in their files (BFCL-HANDLERS).
API_RULES = ("api", "fc", "prompting", "fc-list")

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
    #: Steps BFCL's decoder raises on (dropped call steps, text replies, steps mixing text and
    #: calls), in the entries that carry a log: each is one logged decoding error there.
    undecodable_in_logged: int = 0
    #: Function-calling steps of text only (e.g. Anthropic text blocks ``["Perfect! ..."]``):
    #: replies, which BFCL's loop skips.
    text_steps: int = 0
    #: Function-calling steps that mix calls with text: BFCL's decoder drops them (BFCL-STEP).
    mixed_steps: int = 0
    #: Calls in those steps: tool actions here, never run by BFCL's checker.
    mixed_calls: int = 0
    #: Turns written as one string instead of a list of steps (BFCL-STRING-TURN).
    string_turns: int = 0
    #: Calls decoded from those turns: tool actions here; BFCL's loop runs none of them.
    string_turn_calls: int = 0
    #: Text steps that hold JSON tool calls (``[{"name": ..., "arguments": ...}]``) in a file read
    #: with the API rules: what local models' handlers write and decode with decoders of their own
    #: (BFCL-HANDLERS); read as replies here unless ``--bfcl-decoder`` names the decoder.
    json_call_texts: int = 0
    #: The decoder that read the file (BFCL-HANDLERS) and why it was chosen.
    decoder: str = "api"
    decoder_why: str = ""
    #: Text steps BFCL's decoder would ``eval`` as Python beyond literals: not decoded (BFCL-DIFF).
    evaluated_steps: int = 0

    @property
    def log_agrees(self) -> bool | None:
        """Whether the steps BFCL's decoder raises on equal its logged decode errors (``None``: no log)."""
        if self.logged_entries == 0:
            return None
        return self.undecodable_in_logged == self.logged_decode_errors

    def to_json(self) -> dict[str, Any]:
        return {**attrs.asdict(self), "log_agrees": self.log_agrees}


@attrs.frozen(slots=True)
class ReadResult:
    rollouts: tuple[Rollout, ...]
    excluded: tuple[Excluded, ...]
    #: Rollouts that are inference errors counted as failures (``--inference-errors failure``).
    inference_failures: tuple[Excluded, ...] = ()
    files: tuple[FileSummary, ...] = ()
    #: Every inference-error entry as a harness error (HARNESS-WHICH), counted or left out.
    harness_errors: tuple[harness.HarnessError, ...] = ()


def _model_from_path(path: str) -> str | None:
    parent = Path(path).resolve().parent
    if parent.name == "multi_turn":
        parent = parent.parent
    return parent.name or None


def score_files(path: str) -> list[Path]:
    """BFCL-MODEL: where BFCL writes the score file of result file ``path``: in ``score/``
    beside the ``result/`` folder above it (the same sub-path), or in the result file's folder."""
    here = Path(path)
    name = plain_name(here.name)
    if not name.endswith("_result.json"):
        return []
    wanted = name[: -len("_result.json")] + "_score.json"
    folders = [here.parent]
    parts = here.parent.parts
    if "result" in parts[-3:]:
        at = len(parts) - 1 - parts[::-1].index("result")
        folders.insert(0, Path(*parts[:at], "score", *parts[at + 1 :]))
    return [f / (wanted + z) for f in folders for z in ("", ".gz", ".zst") if (f / (wanted + z)).is_file()]


def model_from_score(path: str) -> str | None:
    """BFCL-MODEL: the ``model_name`` BFCL's score file of result file ``path`` gives its entries
    (its first entry, the line after the summary), or ``None`` without one."""
    for score in score_files(path):
        for i, (_, line) in enumerate(open_lines(str(score))):
            if i > 1:
                break
            try:
                record = parse_json_line(line)
            except (ValueError, RecursionError):
                break
            name = record.get("model_name") if isinstance(record, dict) else None
            if isinstance(name, str) and name.strip():
                return name.strip()
    return None


def model_of(path: str) -> str | None:
    """BFCL-MODEL: a result file's model: the name of its folder (``result/<model>/multi_turn/``)
    when BFCL's model map knows it (BFCL names the folder after it), else the ``model_name`` of
    its score file, else the folder's name, said in one warning line naming ``--model``."""
    folder = _model_from_path(path)
    if folder and decoders.handler_map().get(folder) is not None:
        return folder
    found = model_from_score(path)
    if found is not None:
        return found
    if folder:
        notice(
            f"prefixexec: warning: {path}: the model {folder!r} is the name of the file's folder (no BFCL "
            "score file names it, and BFCL's model map does not know it): give --model if it is not the model"
        )
    return folder


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
            raise InputError(where, f"not valid JSON: {json_fault(exc)}") from None
        if not isinstance(record, dict):
            raise InputError(where, f"expected a JSON object, got {type(record).__name__}")
        if not isinstance(record.get("id"), str):
            raise InputError(where, "missing field 'id' (a string such as 'multi_turn_base_0')")
        if "result" not in record:
            raise InputError(where, "missing field 'result'")
        found.append((where, record))
    return found


def _file_category(path: str) -> str | None:
    match = _RESULT_NAME.match(plain_name(Path(path).name))  # INPUT-COMPRESSED: x_result.json.gz
    if match is None:
        return None
    category = match.group(1)
    if category not in backend.CATEGORIES:
        raise InputError(path, f"not a BFCL multi-turn result file (category {category})")
    return category


def _decode_turns(
    where: str, result: list[Any], function_calling: bool, decoder: decoders.Decoder
) -> list[list[DecodedStep]]:
    turns: list[list[DecodedStep]] = []
    for t, turn in enumerate(result):
        if isinstance(turn, str):
            # BFCL-STRING-TURN: a turn written as one string is decoded as one step; BFCL's loop
            # iterates its characters and decodes none of them, so its calls are not BFCL's.
            turns.append([decoders.decode_string_turn(decoder, turn)])
            continue
        if not isinstance(turn, list):
            raise InputError(
                where, f"result[{t}] must be a list of steps (or a string), got {type(turn).__name__}"
            )
        steps: list[DecodedStep] = []
        for s, raw in enumerate(turn):
            try:
                steps.append(decoders.decode(decoder, raw, function_calling=function_calling))
            except StepFormatError as exc:
                raise InputError(where, f"result[{t}][{s}]: {exc}") from None
        turns.append(steps)
    return turns


def inference_message(result: str) -> str:
    """What a string result says (BFCL-INFERENCE-ERROR): BFCL's ``Error during inference: <message>``
    with the message cut to its first 200 characters, or, for any other string, that it is one."""
    if result.startswith(INFERENCE_ERROR):
        return f"{INFERENCE_ERROR}: {inference_error_message(result)[:INFERENCE_MESSAGE_CHARS]}"
    return f"the result is a string, not a list of turns: {harness.shorten(result, INFERENCE_MESSAGE_CHARS)}"


_TOOL_TAGS = re.compile(r"<\|python_tag\|>|</?tool_call>|^```(?:json)?|```$")


def json_call_text(text: str) -> bool:
    """Whether a text step holds JSON tool calls as local models' BFCL handlers write them: an
    object with ``name`` and ``arguments`` (or ``parameters``), or a list of them, possibly in
    code fences, ``<tool_call>`` tags or after ``<|python_tag|>``, or several joined by ``;``.
    Only counted (BFCL-DIFF): the API handlers' rules read such a step as a reply."""
    if len(text) > MAX_STEP_CHARS or "name" not in text:
        return False
    body = _TOOL_TAGS.sub("", text.strip()).strip()
    parts = [body] if body.startswith("[") else body.split(";")
    for part in parts:
        try:
            value = json.loads(part)
        except (ValueError, RecursionError):
            return False
        items = value if isinstance(value, list) else [value]
        if not items or not all(
            isinstance(i, dict) and isinstance(i.get("name"), str) and ("arguments" in i or "parameters" in i)
            for i in items
        ):
            return False
    return True


def function_calling(model: str, records: Sequence[dict[str, Any]]) -> bool:
    """BFCL-STEP: a file is function-calling output when its model ends in ``-FC`` or any step of
    it is a list or an object (then text steps are replies); else text steps are prompting output."""
    return model.upper().endswith("-FC") or any(
        isinstance(step, dict | list)
        for record in records
        if isinstance(record["result"], list)
        for turn in record["result"]
        if isinstance(turn, list)
        for step in turn
    )


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


def _count(
    summary: FileSummary, turns: list[list[DecodedStep]], record: dict[str, Any], api_rules: bool
) -> FileSummary:
    strings = [t for t, turn in enumerate(record["result"]) if isinstance(turn, str)]
    string_calls = sum(len(step.calls) for t in strings for step in turns[t])
    turns = [turn for t, turn in enumerate(turns) if t not in strings]
    steps = [step for turn in turns for step in turn]
    mixed = [step for step in steps if step.text and step.calls]
    call_steps = [step for step in steps if not step.is_reply]
    dropped = [step for step in call_steps if not step.text and not any(c.decoded for c in step.calls)]
    logged = "inference_log" in record
    raw = [s for turn in record["result"] if isinstance(turn, list) for s in turn if isinstance(s, str)]
    return attrs.evolve(
        summary,
        json_call_texts=summary.json_call_texts + (sum(json_call_text(s) for s in raw) if api_rules else 0),
        evaluated_steps=summary.evaluated_steps
        + sum(any((c.fault or "").startswith(decoders.EVAL_FAULT) for c in step.calls) for step in steps),
        text_steps=summary.text_steps + sum(step.text and not step.calls for step in steps),
        mixed_steps=summary.mixed_steps + len(mixed),
        mixed_calls=summary.mixed_calls + sum(len(step.calls) for step in mixed),
        string_turns=summary.string_turns + len(strings),
        string_turn_calls=summary.string_turn_calls + string_calls,
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
        undecodable_in_logged=summary.undecodable_in_logged
        + (sum(step.raises for step in steps) if logged else 0),
    )


def _harness_fault(evaluation: Evaluation) -> CallRecord | None:
    """The record of the first failure when BFCL's own class failed there (BFCL-HARNESS), else ``None``."""
    if evaluation.outcome.fully_executable:
        return None
    first = next((r for r in evaluation.records if not r.accepted), None)
    if first is None or first.harness is None or first.position != evaluation.outcome.fed:
        return None
    return first


def read_results(paths: Sequence[str], options: AdapterOptions) -> ReadResult:
    """Read and replay BFCL result files; every entry is validated before anything is returned."""
    wanted: str | None = None
    if options.category is not None:
        try:
            wanted = backend.normalise_category(options.category)
        except ValueError as exc:
            raise InputError("--category", str(exc)) from None
    exclude = harness.policy(options, "bfcl") == "exclude"
    backend.package()
    requested = options.extra.get("bfcl_decoder")
    if requested is not None and not isinstance(requested, str):
        raise InputError("--bfcl-decoder", f"expected a decoder name, got {type(requested).__name__}")
    decoders.choose("", requested)  # an unknown name is an error before any file is read
    method = options.method or DEFAULT_METHOD
    rollouts: list[Rollout] = []
    excluded: list[Excluded] = []
    failed: list[Excluded] = []
    errors: list[harness.HarnessError] = []
    files: list[FileSummary] = []
    seen: dict[tuple[ConditionKey, str], str] = {}
    for path in paths:
        file_category = _file_category(path) if path != "-" else None
        if wanted is not None and file_category is not None and file_category != wanted:
            continue
        model = options.model or (None if path == "-" else model_of(path))
        if not model:
            raise InputError(path, "cannot tell the model from the path: give --model")
        choice = decoders.choose(model, requested)
        objects = _objects(path)
        summary = FileSummary(
            "<stdin>" if path == "-" else path, decoder=choice.decoder.name, decoder_why=choice.why
        )
        fc = function_calling(model, [record for _, record in objects])
        api_rules = choice.decoder.name in API_RULES
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
            key = ConditionKey(DATASET_PREFIX + category, model, method)
            if (key, task_id) in seen:
                raise InputError(
                    where,
                    f"task {task_id!r} repeats for {model}/{method}, first seen at {seen[key, task_id]}",
                )
            seen[key, task_id] = where
            summary = attrs.evolve(summary, entries=summary.entries + 1)
            result = record["result"]
            if isinstance(result, str):
                # BFCL-INFERENCE-ERROR: the handler wrote a string instead of turns (BFCL's own
                # "Error during inference: ..."); BFCL's runner marks the entry invalid.
                summary = attrs.evolve(summary, inference_errors=summary.inference_errors + 1)
                message = inference_message(result)
                errors.append(harness.HarnessError(where, key, task_id, 0, message, not exclude))
                if exclude:
                    excluded.append(Excluded(where, task_id))
                    continue
                failed.append(Excluded(where, task_id))
                outcome = harness.fault_outcome(Outcome(T=1, fed=1), message, 0)
                check = f"inference_error: {message}"
                meta = {"source": where, "success_check": check, "harness_error": message}
                rollouts.append(Rollout(key, task_id, 0, outcome, False, meta))
                continue
            if not isinstance(result, list):
                raise InputError(where, f"'result' must be a list of turns, got {type(result).__name__}")
            turns = _decode_turns(where, result, fc, choice.decoder)
            summary = _count(summary, turns, record, api_rules)
            run = make_run(bfcl_task, turns)
            evaluation = evaluate(run)
            rollout = Rollout(
                key,
                task_id,
                0,
                evaluation.outcome,
                bool(evaluation.success),
                _evidence(where, evaluation.failure or "valid", run, evaluation.outcome),
            )
            fault = _harness_fault(evaluation)
            if fault is not None:
                # BFCL-HARNESS: BFCL's own class failed on its own data at the first failure.
                errors.append(harness.HarnessError(where, key, task_id, 0, fault.harness or "", not exclude))
                if exclude:
                    excluded.append(Excluded(where, task_id))
                    continue
                rollout = harness.counted_rollout(rollout, fault.harness or "", fault.position - 1)
            rollouts.append(rollout)
        files.append(summary)
    if not rollouts:
        if excluded:
            raise harness.none_left(", ".join(paths), len(excluded))
        raise InputError(", ".join(paths) or "<no input>", "no BFCL multi-turn entries found")
    return ReadResult(tuple(rollouts), tuple(excluded), tuple(failed), tuple(files), tuple(errors))


def read(paths: Sequence[str], options: AdapterOptions) -> list[Rollout]:
    """The ``score --adapter bfcl`` reader; names its harness errors on stderr (HARNESS-REPORT)."""
    result = read_results(paths, options)
    for summary in result.files:
        if summary.json_call_texts:
            notice(
                f"prefixexec: warning: {summary.path}: {summary.json_call_texts} text steps hold JSON "
                'tool calls ([{"name": ..., "arguments": ...}]), which a local model\'s BFCL handler '
                f"decodes with a decoder of its own; the file is read with the {summary.decoder} "
                f"decoder ({summary.decoder_why}), as replies: name the model's decoder with "
                "--bfcl-decoder (e.g. xlam, llama-3.1, tool-call-tags; BFCL-HANDLERS), else T, FED "
                "and Y can differ from BFCL's"
            )
        if "not mirrored" in summary.decoder_why:
            notice(
                f"prefixexec: warning: {summary.path}: {summary.decoder_why}: read with BFCL's API "
                "rules, so T, FED and Y can differ from BFCL's (BFCL-DIFF)"
            )
        if summary.evaluated_steps:
            notice(
                f"prefixexec: warning: {summary.path}: {summary.evaluated_steps} text steps would be "
                "run by BFCL's decoder as Python (eval) beyond literals: not decoded here, each a schema "
                "failure (BFCL-DIFF)"
            )
    harness.report("bfcl", result.harness_errors)
    return list(result.rollouts)


__all__ = [
    "BFCL_DECODE_ERROR_LOG",
    "DATASET_PREFIX",
    "DEFAULT_METHOD",
    "INFERENCE_ERROR_CHOICES",
    "Excluded",
    "FileSummary",
    "ReadResult",
    "function_calling",
    "read",
    "read_results",
]


def _evidence(where: str, check: str, run: BfclRun, outcome: Outcome) -> dict[str, object]:
    """The rollout's meta: where it was read, the success check, and per-action evidence for the
    per-rollout rows (OUT-ROLLOUTS): each action's turn (from 1, BFCL-TURNS) and the call as the
    model wrote it (``explain`` shows it: positional arguments too), and the raw text of a failing
    call that could not be parsed into a tool and arguments."""
    meta: dict[str, object] = {
        "source": where,
        "success_check": check,
        "action_turns": [a.turn + 1 for a in run.actions],
        "action_texts": [a.call.text or f"{a.name}()" for a in run.actions],
        "turns": run.turns,  # user turns of the result (TURN-MAP)
    }
    if not outcome.fully_executable and outcome.fed <= len(run.actions):
        failing = run.actions[outcome.fed - 1]
        if failing.call.fault is not None:
            meta["failing_text"] = failing.call.text
    return meta
