"""BFCL v3/v4 multi-turn: safe prefix replay on the benchmark's own classes (spec: spec/adapters/bfcl.md).

The adapter replays a model's predicted calls, prefix by prefix, on fresh instances of BFCL's
executable API classes (PyPI ``bfcl-eval``; install with
``pip install --no-deps bfcl-eval==2026.3.23 mpmath``). Outcomes come from the kernel's
:func:`~prefixexec.kernel.replay` driven by :class:`BfclSemantics`; the final success Y is BFCL's
own multi-turn rule re-implemented on the same single pass. Model output is never evaluated:
calls are parsed with :mod:`ast` / :mod:`json` into literal values and dispatched with
``getattr`` on the owning instance (BFCL-SECURITY).

Public entry points:

* :func:`read` — the ``score --adapter bfcl`` reader of BFCL result files;
* :func:`replay_calls` — replay call strings per turn for a task id, giving the outcome and Y;
* :func:`audit` — the ``audit --adapter bfcl`` report (gold trajectories and their mutants).
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import attrs

from prefixexec.kernel import (
    Accepted,
    ConditionKey,
    Label,
    Outcome,
    Rejected,
    Rollout,
    ToolCall,
    replay,
)
from prefixexec.kernel.actions import Action, NoToolAction

from ..errors import InputError
from ..records import parse_json_line
from . import backend
from .execute import (
    EXECUTION_ERROR,
    World,
    bind,
    classify,
    instance_snapshot,
    limit_fault,
    same_state,
    type_fault,
)
from .parse import DecodedStep, ParsedCall, StepFormatError, decode_step, parse_call_string

if TYPE_CHECKING:
    from .. import AdapterOptions
    from .operators import BfclAuditReport

#: Dataset name prefix; a condition's dataset is ``bfcl-multi-turn/<category>`` (BFCL-INPUT).
DATASET_PREFIX = "bfcl-multi-turn/"
#: Prefix of a crashed inference run in BFCL's result files (BFCL-INFERENCE-ERROR).
INFERENCE_ERROR = "Error during inference"
#: Method name used when ``--method`` is not given.
DEFAULT_METHOD = "default"

_RESULT_NAME = re.compile(r"^BFCL_v\d+_(.+)_result\.json$")


# --- tasks and runs ------------------------------------------------------------------------------


@attrs.frozen(slots=True)
class BfclTask:
    """A benchmark task as the semantics needs it: entry, parsed ground truth, withheld functions."""

    entry: backend.Entry
    gold: tuple[tuple[ParsedCall, ...], ...]
    #: miss_param: withholding turn k -> functions that turn k+1's gold calls with arguments.
    withheld: Mapping[int, frozenset[str]]

    @property
    def id(self) -> str:
        return self.entry.id


def _withheld(entry: backend.Entry, gold: tuple[tuple[ParsedCall, ...], ...]) -> Mapping[int, frozenset[str]]:
    """BFCL-MISS-PARAM: the turns that withhold a parameter and the functions that need it."""
    if entry.category != "multi_turn_miss_param":
        return MappingProxyType({})
    found: dict[int, frozenset[str]] = {}
    for k in range(len(gold) - 1):
        if not gold[k] and gold[k + 1]:
            names = frozenset(c.name for c in gold[k + 1] if c.args or c.kwargs)
            if names:
                found[k] = names
    return MappingProxyType(found)


@cache
def task(task_id: str) -> BfclTask:
    """The task with this id; raises ``KeyError`` if bfcl-eval has no such multi-turn task."""
    entry = backend.entry(task_id)
    gold = tuple(tuple(parse_call_string(c) for c in turn) for turn in entry.gold)
    return BfclTask(entry=entry, gold=gold, withheld=_withheld(entry, gold))


@attrs.frozen(slots=True, kw_only=True)
class BfclCall(ToolCall):
    """One tool action of a BFCL rollout: the parsed call and where it sits (turn, step)."""

    turn: int
    step: int
    call: ParsedCall = attrs.field(eq=False)


@attrs.frozen(slots=True)
class BfclRun:
    """What one replay needs: the task, the model's actions in order and its turn structure."""

    task: BfclTask
    actions: tuple[BfclCall, ...]
    #: Number of turns in the model's result.
    turns: int
    #: Per model turn, the number of steps BFCL's decoder hands to its executor (BFCL-STEP).
    decoded_steps: tuple[int, ...]


def make_run(task: BfclTask, turns: Sequence[Sequence[DecodedStep]]) -> BfclRun:
    """Build a run from decoded steps per turn (reply steps are not actions)."""
    actions: list[BfclCall] = []
    decoded: list[int] = []
    for t, steps in enumerate(turns):
        count = 0
        for s, step in enumerate(steps):
            if step.is_reply:
                continue
            if any(c.decoded for c in step.calls):
                count += 1
            for parsed in step.calls:
                actions.append(
                    BfclCall(
                        name=parsed.name,
                        arguments=dict(parsed.kwargs) if parsed.fault is None else {},
                        turn=t,
                        step=s,
                        call=parsed,
                    )
                )
        decoded.append(count)
    return BfclRun(task=task, actions=tuple(actions), turns=len(turns), decoded_steps=tuple(decoded))


def run_from_strings(task: BfclTask, turns: Sequence[Sequence[str]]) -> BfclRun:
    """A run whose turn t is one step making the calls ``turns[t]`` (call strings, as in the gold)."""
    steps = [[DecodedStep(tuple(parse_call_string(c) for c in turn))] if turn else [] for turn in turns]
    return make_run(task, steps)


# --- one call: checks, execution, verdict ----------------------------------------------------------


@attrs.frozen(slots=True)
class CallRecord:
    """What replay decided for one action (for diagnostics, the audit and the cross-check)."""

    position: int
    turn: int
    call: str
    executed: bool
    #: BFCL's rendering of the result (``Error during execution: ...`` when not executable).
    result: str
    labels: tuple[Label, ...] = ()
    reason: str | None = None
    #: The execution error matched no message family (BFCL-LABELS).
    unclassified: bool = False

    @property
    def accepted(self) -> bool:
        return self.reason is None


def _shown(call: ParsedCall) -> str:
    text = call.text or f"{call.name}(...)"
    return text if len(text) <= 160 else text[:157] + "..."


def check_and_run(world: World, task: BfclTask, action: BfclCall, position: int) -> CallRecord:
    """Decide and (where BFCL would) execute one call; the stages of BFCL-EXEC in order."""
    call, turn = action.call, action.turn
    shown = _shown(call)

    def reject(label: Label, message: str, result: str | None = None, executed: bool = False) -> CallRecord:
        text = result if result is not None else EXECUTION_ERROR + message
        return CallRecord(position, turn, shown, executed, text, (label,), f"turn {turn}: {shown}: {message}")

    if call.fault is not None:
        return reject(Label.SCHEMA, call.fault)
    info = world.method(call.name)
    if info is None:
        owner = world.catalogue.methods.get(call.name)
        if owner is not None:
            return reject(
                Label.SCHEMA, f"`{call.name}` belongs to {owner.cls}, which this task does not involve"
            )
        return reject(Label.SCHEMA, f"no function `{call.name}` in this task's classes")
    bound = bind(info, call.args, call.kwargs)
    if isinstance(bound, str):
        return reject(Label.SCHEMA, bound)
    limit = limit_fault(info, bound)
    if limit is not None:
        return reject(Label.SCHEMA, limit)
    static: tuple[Label, str] | None = None
    exposed_at = task.entry.missed.get(call.name)
    if exposed_at is not None and turn < exposed_at:
        static = (Label.SCHEMA, f"`{call.name}` is held out until turn {exposed_at} (missed_function)")
    else:
        wrong_type = type_fault(info, bound)
        if wrong_type is not None:
            static = (Label.SCHEMA, wrong_type)
        elif call.name in task.withheld.get(turn, ()):
            static = (
                Label.INFORMATION,
                f"`{call.name}` called in turn {turn}, which withholds a parameter "
                f"that turn {turn + 1} supplies",
            )
    execution = world.execute(info, bound)
    if static is not None:
        return reject(static[0], static[1], execution.text, executed=True)
    if execution.error is None:
        return CallRecord(position, turn, shown, True, execution.text)
    label = classify(execution.error)
    if label is None:
        return CallRecord(
            position,
            turn,
            shown,
            True,
            execution.text,
            (Label.STATE_CONSISTENCY,),
            f"turn {turn}: {shown}: unclassified error: {execution.error}",
            unclassified=True,
        )
    return CallRecord(
        position, turn, shown, True, execution.text, (label,), f"turn {turn}: {shown}: {execution.error}"
    )


# --- the session and the kernel semantics (BFCL-LINEAR, BFCL-SUCCESS) --------------------------------


class StaleStateError(RuntimeError):
    """A BFCL state was stepped after it had been superseded (states are linear, BFCL-LINEAR)."""


class _Session:
    """The mutable side of one replay: the model's and the gold's instance sets, stepped once each."""

    def __init__(self, run: BfclRun, track_success: bool) -> None:
        self.run = run
        self.model = World(run.task.entry)
        self.position = 0
        self.records: list[CallRecord] = []
        self.track = track_success
        self.gold = World(run.task.entry) if track_success else None
        self.closed = 0
        self.results: list[str] = []
        self.verdict: bool | None = None
        self.failure: str | None = None
        if track_success and run.turns != len(run.task.gold):
            self._fail(
                f"force_terminated: the result has {run.turns} turns, the ground truth {len(run.task.gold)}"
            )

    def _fail(self, why: str) -> None:
        self.verdict = False
        self.failure = why

    def execute(self, action: BfclCall) -> CallRecord:
        actions = self.run.actions
        if self.position >= len(actions) or actions[self.position] is not action:
            raise ValueError("a BFCL run is replayed along its own actions, in order")
        self._close_turns(action.turn)
        record = check_and_run(self.model, self.run.task, action, self.position + 1)
        self.position += 1
        self.records.append(record)
        if self.track and action.call.decoded:
            self.results.append(record.result)
        return record

    def _close_turns(self, upto: int) -> None:
        if not self.track:
            return
        while self.closed < upto:
            self._close_turn(self.closed)
            self.closed += 1

    def _close_turn(self, j: int) -> None:
        # BFCL's multi_turn_checker for turn j, run once the model's calls of turn j are done.
        if self.verdict is not None or self.gold is None:
            return
        expected = self.run.task.gold[j]
        gold_results = [self.gold.run_trusted(c) for c in expected]
        if not expected:
            return
        if self.run.decoded_steps[j] == 0:
            self._fail(
                f"empty_turn_model_response: turn {j} has no call, the ground truth has {len(expected)}"
            )
            return
        same, difference = same_state(self.model, self.gold)
        if not same:
            self._fail(f"instance_state_mismatch: turn {j}: {difference}")
            return
        missing = Counter(gold_results) - Counter(self.results)
        if missing:
            self._fail(
                f"execution_response_mismatch: turn {j}: "
                f"{sum(missing.values())} ground-truth result(s) missing"
            )

    def finish(self, execute_all: bool) -> bool | None:
        """Execute what replay left (for Y), close every turn, and return Y (``None`` if not tracked)."""
        if not self.track and not execute_all:
            return None
        while self.position < len(self.run.actions):
            if self.verdict is not None and not execute_all:
                break
            self.execute(self.run.actions[self.position])
        self._close_turns(self.run.turns)
        if not self.track:
            return None
        if self.verdict is None:
            self.verdict = True
        return self.verdict


@attrs.frozen(slots=True)
class BfclState:
    """The state handed to the kernel: a position in one session (used at most once, BFCL-LINEAR)."""

    session: _Session = attrs.field(eq=False, repr=False)
    position: int


class BfclSemantics:
    """The kernel :class:`~prefixexec.kernel.Semantics` of BFCL multi-turn, for one rollout.

    ``initial_state`` makes the rollout's own fresh instance set; ``step`` advances it in place
    and returns a new state. States are linear: each may be stepped once, and stepping a
    superseded one raises :class:`StaleStateError` instead of showing a mutated world. So no
    state is ever observed after a mutation, and each call runs once (BFCL-LINEAR).
    """

    def __init__(self, *, track_success: bool = True) -> None:
        self._track = track_success
        self._session: _Session | None = None

    @property
    def session(self) -> _Session:
        if self._session is None:
            raise RuntimeError("initial_state has not been called")
        return self._session

    def initial_state(self, task: BfclRun) -> BfclState:
        if self._session is not None:
            raise RuntimeError("a BfclSemantics replays one rollout; make a new one for the next")
        self._session = _Session(task, self._track)
        return BfclState(self._session, 0)

    def step(self, state: BfclState, action: Action) -> Accepted[BfclState] | Rejected:
        session = state.session
        if session is not self._session or state.position != session.position:
            raise StaleStateError("this BFCL state was already stepped; states are used once")
        if isinstance(action, NoToolAction):
            return Rejected((), "no tool call at all: every BFCL multi-turn task needs tool calls")
        if not isinstance(action, BfclCall):
            raise TypeError(f"BFCL semantics steps BfclCall actions, got {type(action).__name__}")
        record = session.execute(action)
        if record.accepted:
            return Accepted(BfclState(session, session.position), record.result)
        return Rejected(record.labels, record.reason)


@attrs.frozen(slots=True)
class Evaluation:
    """The outcome of prefix replay, BFCL's success Y and the per-call records of one rollout."""

    outcome: Outcome
    #: BFCL's success verdict; ``None`` when it was not computed.
    success: bool | None
    #: Why Y = 0, in BFCL's error-type words (``None`` when Y = 1 or not computed).
    failure: str | None
    records: tuple[CallRecord, ...]
    #: Snapshot of the model's final instance state (only when asked for).
    state: Mapping[str, Any] | None = attrs.field(default=None, eq=False, repr=False)

    @property
    def T(self) -> int:
        return self.outcome.T

    @property
    def fed(self) -> int:
        return self.outcome.fed


def evaluate(
    run: BfclRun, *, success: bool = True, execute_all: bool = False, snapshot: bool = False
) -> Evaluation:
    """Replay ``run``: the kernel outcome from prefix replay and, if ``success``, BFCL's Y.

    One pass: replay executes up to the first rejection; the same instance set then runs the
    remaining calls for Y (stopping early once Y is decided, unless ``execute_all``).
    """
    semantics = BfclSemantics(track_success=success)
    with backend.utc():
        outcome = replay(semantics, run, run.actions)
        session = semantics.session
        y = session.finish(execute_all)
        state = instance_snapshot(session.model.instances) if snapshot else None
    return Evaluation(outcome, y, session.failure, tuple(session.records), state)


def replay_calls(task_id: str, turns: Sequence[Sequence[str]], *, success: bool = True) -> Evaluation:
    """Replay call strings per turn for a BFCL task (BFCL-API): outcome and Y.

    ``turns[t]`` lists the calls made in turn t, written like the ground truth
    (``"cd(folder='document')"``, positional literals allowed); an empty list is a turn with no
    call. Raises ``KeyError`` for an unknown task id. Nothing is evaluated: strings that are not
    plain literal calls are schema failures.
    """
    return evaluate(run_from_strings(task(task_id), turns), success=success)


def gold_turns(task_id: str) -> tuple[tuple[str, ...], ...]:
    """The ground-truth call strings per turn of a task (to build perturbations on)."""
    return backend.entry(task_id).gold


# --- reading BFCL result files (BFCL-INPUT, BFCL-INFERENCE-ERROR) --------------------------------------


@attrs.frozen(slots=True)
class Excluded:
    """A result entry left out because inference crashed."""

    where: str
    task_id: str


@attrs.frozen(slots=True)
class ReadResult:
    rollouts: tuple[Rollout, ...]
    excluded: tuple[Excluded, ...]


def _model_from_path(path: str) -> str | None:
    parent = Path(path).resolve().parent
    if parent.name == "multi_turn":
        parent = parent.parent
    return parent.name or None


def _lines(path: str) -> list[tuple[int, str]]:
    try:
        if path == "-":
            return list(enumerate(sys.stdin.read().splitlines(), start=1))
        return list(enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1))
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except IsADirectoryError:
        raise InputError(path, "is a directory, expected a BFCL result file") from None
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except PermissionError:
        raise InputError(path, "permission denied") from None


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


def read_results(paths: Sequence[str], options: AdapterOptions) -> ReadResult:
    """Read and replay BFCL result files; every entry is validated before anything is returned."""
    wanted: str | None = None
    if options.category is not None:
        try:
            wanted = backend.normalise_category(options.category)
        except ValueError as exc:
            raise InputError("--category", str(exc)) from None
    backend.package()
    method = options.method or DEFAULT_METHOD
    rollouts: list[Rollout] = []
    excluded: list[Excluded] = []
    seen: dict[tuple[ConditionKey, str], str] = {}
    for path in paths:
        file_category = _file_category(path) if path != "-" else None
        if wanted is not None and file_category is not None and file_category != wanted:
            continue
        model = options.model or (None if path == "-" else _model_from_path(path))
        if not model:
            raise InputError(path, "cannot tell the model from the path: give --model")
        objects = _objects(path)
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
            result = record["result"]
            if isinstance(result, str) and result.startswith(INFERENCE_ERROR):
                excluded.append(Excluded(where, task_id))
                continue
            if not isinstance(result, list):
                raise InputError(where, f"'result' must be a list of turns, got {type(result).__name__}")
            run = make_run(bfcl_task, _decode_turns(where, result, function_calling))
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
                    {"source": where, "success_check": evaluation.failure or "valid"},
                )
            )
    if not rollouts:
        if excluded:
            raise InputError(", ".join(paths), f"all {len(excluded)} entries are '{INFERENCE_ERROR}' entries")
        raise InputError(", ".join(paths) or "<no input>", "no BFCL multi-turn entries found")
    return ReadResult(tuple(rollouts), tuple(excluded))


def read(paths: Sequence[str], options: AdapterOptions) -> list[Rollout]:
    """The ``score --adapter bfcl`` reader; reports excluded inference errors on stderr."""
    result = read_results(paths, options)
    if result.excluded:
        ids = ", ".join(e.task_id for e in result.excluded[:10])
        more = "" if len(result.excluded) <= 10 else f" and {len(result.excluded) - 10} more"
        sys.stderr.write(
            f"prefixexec: bfcl: excluded {len(result.excluded)} entries "
            f"with '{INFERENCE_ERROR}': {ids}{more}\n"
        )
    return list(result.rollouts)


def audit(options: AdapterOptions) -> BfclAuditReport:
    """The ``audit --adapter bfcl`` report: gold trajectories and their mutants (BFCL-AUDIT)."""
    from .operators import run_audit

    return run_audit(options)


__all__ = [
    "DATASET_PREFIX",
    "BfclCall",
    "BfclRun",
    "BfclSemantics",
    "BfclState",
    "BfclTask",
    "CallRecord",
    "Evaluation",
    "StaleStateError",
    "audit",
    "check_and_run",
    "evaluate",
    "gold_turns",
    "make_run",
    "read",
    "read_results",
    "replay_calls",
    "run_from_strings",
    "task",
]
