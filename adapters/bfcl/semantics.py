"""BFCL multi-turn semantics: tasks, the per-call rules and BFCL's success rule (spec: spec/adapters/bfcl.md).

The rules, each with its spec ID: which calls are acceptable (BFCL-PARSE, in :mod:`.parse`),
exposed (BFCL-EXPOSE), bound (BFCL-BIND), within the limits (BFCL-LIMITS), well typed
(BFCL-TYPES), made with the information the user has given (BFCL-MISS-PARAM), and executable
(BFCL-ERROR-MARKER, BFCL-LABELS, in :mod:`.execute`), checked in the order of BFCL-EXEC; the
no-tool action (BFCL-NOTOOL) and a crashed inference run (BFCL-INFERENCE-ERROR); the kernel
semantics with linear states (BFCL-LINEAR) and BFCL's own success rule Y (BFCL-SUCCESS).

This module reads no result files (that is :mod:`.reader`) and imports neither the reader nor
the audit (:mod:`.operators`).
"""

from __future__ import annotations

import ast
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from functools import cache
from types import MappingProxyType
from typing import Any

import attrs

from prefixexec.kernel import Accepted, Label, Outcome, Rejected, ToolCall, replay
from prefixexec.kernel.actions import Action, NoToolAction

from ..provenance import occurs
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
from .parse import DecodedStep, ParsedCall, parse_call_string

#: Prefix of a crashed inference run in BFCL's result files (BFCL-INFERENCE-ERROR).
INFERENCE_ERROR = "Error during inference"
#: How much of an inference error's message its reason keeps (BFCL-INFERENCE-ERROR).
INFERENCE_MESSAGE_CHARS = 200
#: The reason of a rollout without any tool call (BFCL-NOTOOL).
NO_TOOL_REASON = (
    "no tool call at all (the terminal no-tool action, unlabelled): "
    "every BFCL multi-turn task needs tool calls"
)


# --- the withheld parameter of miss_param (BFCL-MISS-PARAM) -----------------------------------------


def _atoms(value: Any) -> Iterator[str]:
    """The scalar leaves of a literal as text (booleans and None carry no information)."""
    if isinstance(value, list | tuple):
        for item in value:
            yield from _atoms(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _atoms(item)
    elif value is None or isinstance(value, bool):
        return
    elif isinstance(value, float) and value.is_integer():
        yield str(int(value))
    else:
        yield str(value)


def _normal(text: str) -> str:
    """Text as compared by BFCL-MISS-PARAM: Unicode NFKC, case-folded, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


_WORDLIKE = re.compile(r"[\w.\-]+")


def mentions(text: str, atom: str) -> bool:
    """Whether normalised ``text`` mentions ``atom``: as a whole word when it is word-like."""
    needle = _normal(atom)
    if not needle:
        return False
    if _WORDLIKE.fullmatch(needle):
        return re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", text) is not None
    return needle in text


def withheld_parameters(
    entry: backend.Entry, gold: tuple[tuple[ParsedCall, ...], ...]
) -> Mapping[int, frozenset[tuple[str, str]]]:
    """BFCL-MISS-PARAM: withholding turn k -> the (function, parameter) pairs turn k+1 supplies.

    A turn k withholds a parameter when its ground truth is empty and turn k+1's is not; the
    withheld parameters are the arguments of turn k+1's ground-truth calls whose value first
    appears in turn k+1's user message (mentioned there and in no earlier user message).
    A withholding turn whose next message mentions no such value gets no entry.
    """
    if entry.category != "multi_turn_miss_param":
        return MappingProxyType({})
    methods = backend.catalogue().methods
    found: dict[int, frozenset[tuple[str, str]]] = {}
    for k in range(len(gold) - 1):
        if gold[k] or not gold[k + 1]:
            continue
        message = _normal(" ".join(entry.questions[k + 1]))
        earlier = _normal(" ".join(m for turn in entry.questions[: k + 1] for m in turn))
        pairs: set[tuple[str, str]] = set()
        for call in gold[k + 1]:
            info = methods.get(call.name)
            bound = bind(info, call.args, call.kwargs) if info is not None and call.fault is None else None
            if not isinstance(bound, dict):
                continue
            for parameter, value in bound.items():
                if any(mentions(message, a) and not mentions(earlier, a) for a in _atoms(value)):
                    pairs.add((call.name, parameter))
        if pairs:
            found[k] = frozenset(pairs)
    return MappingProxyType(found)


def _informative(atom: str) -> bool:
    """Whether a value can carry the withheld information at all (``'..'`` or ``'/'`` cannot)."""
    return any(ch.isalnum() for ch in atom)


def information_fault(
    task: BfclTask, name: str, bound: Mapping[str, Any], turn: int, results: Sequence[str] = ()
) -> str | None:
    """BFCL-MISS-PARAM: why a call made in ``turn`` acts without a withheld parameter, or ``None``.

    A call to a function whose parameter ``p`` the turn withholds fails when it leaves ``p`` out
    (the function's default stands in for the user's value) or gives ``p`` a value that is not
    grounded (a guess). A value is grounded when the user mentioned it in this turn or before,
    or when it occurs in ``results``, the results of the rollout's earlier calls (the provenance
    rule of :func:`..provenance.occurs`: ``create_ticket`` returns ``{'id': 2}``, then
    ``resolve_ticket(ticket_id=2)`` acts on what the agent saw). A value without any letter or
    digit (``'..'``, ``'/'``) does not act on the withheld information.
    """
    needed = sorted(p for f, p in task.withheld.get(turn, ()) if f == name)
    if not needed:
        return None
    said = task.said.get(turn, "")
    for parameter in needed:
        if parameter not in bound:
            return (
                f"`{name}` called without `{parameter}`, which turn {turn + 1} withholds "
                f"and turn {turn + 2} supplies"
            )
        guessed = [
            a
            for a in _atoms(bound[parameter])
            if _informative(a) and not mentions(said, a) and not occurs(a, results)
        ]
        if guessed:
            return (
                f"`{name}` called with {parameter}={guessed[0]!r} before the user gives `{parameter}` "
                f"(turn {turn + 1} withholds it, turn {turn + 2} supplies it; it occurs in no earlier "
                "tool result)"
            )
    return None


#: A placeholder value (BFCL-PLACEHOLDER): a whole argument string that is one angle-bracketed
#: word or phrase, optionally after ``@`` or ``#`` (``'<UNKNOWN>'``, ``'@<UNKNOWN>'``, ``'<user_id>'``).
PLACEHOLDER = re.compile(r"[@#]?<[A-Za-z][\w \-]*>")


def placeholder_fault(
    task: BfclTask, name: str, bound: Mapping[str, Any], turn: int, results: Sequence[str] = ()
) -> str | None:
    """BFCL-PLACEHOLDER: a placeholder value that occurs nowhere is invented, or ``None``.

    Any category, any parameter: a string argument that is a placeholder (:data:`PLACEHOLDER`)
    and occurs neither in the user's messages up to ``turn`` nor in an earlier tool result
    (:func:`..provenance.occurs`) stands in for information the agent does not have.
    """
    said: list[str] | None = None
    for parameter, value in bound.items():
        for atom in _atoms(value):
            if not PLACEHOLDER.fullmatch(atom.strip()):
                continue
            if said is None:
                said = [m for t in task.entry.questions[: turn + 1] for m in t]
            if not occurs(atom, said) and not occurs(atom, results):
                return (
                    f"`{name}` called with {parameter}={atom!r}, a placeholder that occurs nowhere "
                    "earlier in the conversation or in a tool result"
                )
    return None


# --- tasks and runs ------------------------------------------------------------------------------


#: Longest text of a missing ground-truth result in Y's failure (OUT-EXPLAIN-SUCCESS).
MISSING_SHOWN = 160


@attrs.frozen(slots=True)
class BfclTask:
    """A benchmark task as the semantics needs it: entry, parsed ground truth, withheld functions."""

    entry: backend.Entry
    gold: tuple[tuple[ParsedCall, ...], ...]
    #: miss_param: withholding turn k -> the (function, parameter) pairs it withholds (BFCL-MISS-PARAM).
    withheld: Mapping[int, frozenset[tuple[str, str]]]
    #: miss_param: withholding turn k -> what the user said in turns 0..k, normalised.
    said: Mapping[int, str] = attrs.field(factory=dict, eq=False, repr=False)

    @property
    def id(self) -> str:
        return self.entry.id

    def withheld_functions(self, turn: int) -> frozenset[str]:
        """The functions that need a parameter turn ``turn`` withholds (empty for other turns)."""
        return frozenset(function for function, _ in self.withheld.get(turn, ()))


@cache
def task(task_id: str) -> BfclTask:
    """The task with this id; raises ``KeyError`` if bfcl-eval has no such multi-turn task."""
    entry = backend.entry(task_id)
    gold = tuple(tuple(parse_call_string(c) for c in turn) for turn in entry.gold)
    withheld = withheld_parameters(entry, gold)
    said = {k: _normal(" ".join(m for turn in entry.questions[: k + 1] for m in turn)) for k in withheld}
    return BfclTask(entry=entry, gold=gold, withheld=withheld, said=MappingProxyType(said))


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
    #: The message of a crashed inference run, without BFCL's prefix (BFCL-INFERENCE-ERROR).
    inference_error: str | None = None


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


def inference_error_message(result: str) -> str:
    """The message of an ``Error during inference: ...`` result, without BFCL's prefix."""
    rest = result[len(INFERENCE_ERROR) :] if result.startswith(INFERENCE_ERROR) else result
    return rest.lstrip(":").strip() or result


def inference_error_run(task: BfclTask, result: str) -> BfclRun:
    """The run of an entry whose inference crashed: no action, replayed as the no-tool action."""
    message = inference_error_message(result)
    return BfclRun(task=task, actions=(), turns=0, decoded_steps=(), inference_error=message)


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
    #: Why the call was rejected, without the turn, call and label of ``reason``.
    message: str | None = None
    #: BFCL's own class failed on its own data (BFCL-HARNESS): what the harness error says.
    harness: str | None = None

    @property
    def accepted(self) -> bool:
        return self.reason is None


def _shown(call: ParsedCall) -> str:
    text = call.text or f"{call.name}(...)"
    return text if len(text) <= 160 else text[:157] + "..."


def rejection_reason(position: int, turn: int, shown: str, label: Label | None, message: str) -> str:
    """BFCL-REASON: which call failed (position, turn, call), with its label, and why.

    ``turn`` counts from 0 as BFCL's data does; the reason numbers turns from 1 (BFCL-TURNS).
    """
    mark = label.value if label is not None else "unlabelled"
    return f"call {position} (turn {turn + 1}) {shown} [{mark}]: {message}"


def check_and_run(
    world: World, task: BfclTask, action: BfclCall, position: int, results: Sequence[str] = ()
) -> CallRecord:
    """Decide and (where BFCL would) execute one call; the stages of BFCL-EXEC in order.

    ``results`` are the results of the rollout's earlier calls that executed without an error,
    which ground argument values (BFCL-MISS-PARAM, BFCL-PLACEHOLDER).
    """
    call, turn = action.call, action.turn
    shown = _shown(call)

    def reject(label: Label, message: str, result: str | None = None, executed: bool = False) -> CallRecord:
        text = result if result is not None else EXECUTION_ERROR + message
        reason = rejection_reason(position, turn, shown, label, message)
        return CallRecord(position, turn, shown, executed, text, (label,), reason, message=message)

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
    limit = limit_fault(info, bound) or world.charge(info, bound)
    if limit is not None:
        return reject(Label.SCHEMA, limit)
    static: tuple[Label, str] | None = None
    exposed_at = task.entry.missed.get(call.name)
    if exposed_at is not None and turn < exposed_at:
        static = (Label.SCHEMA, f"`{call.name}` is held out until turn {exposed_at + 1} (missed_function)")
    else:
        wrong_type = type_fault(info, bound)
        if wrong_type is not None:
            static = (Label.SCHEMA, wrong_type)
        else:
            missing = information_fault(task, call.name, bound, turn, results) or placeholder_fault(
                task, call.name, bound, turn, results
            )
            if missing is not None:
                static = (Label.INFORMATION, missing)
    execution = world.execute(info, bound)
    if static is not None:
        return reject(static[0], static[1], execution.text, executed=True)
    if execution.error is None:
        return CallRecord(position, turn, shown, True, execution.text)
    fault = harness_fault(info.cls, execution.error, bound)
    if fault is not None:
        return CallRecord(
            position,
            turn,
            shown,
            True,
            execution.text,
            (),
            f"call {position} (turn {turn + 1}) {shown} [harness error]: {fault}",
            message=fault,
            harness=f"call {position} (turn {turn + 1}) {shown}: {fault}",
        )
    label = classify(execution.error)
    if label is None:
        message = f"unclassified error: {execution.error}"
        return CallRecord(
            position,
            turn,
            shown,
            True,
            execution.text,
            (),
            rejection_reason(position, turn, shown, None, message),
            unclassified=True,
            message=message,
        )
    return CallRecord(
        position,
        turn,
        shown,
        True,
        execution.text,
        (label,),
        rejection_reason(position, turn, shown, label, execution.error),
        message=execution.error,
    )


_KEY_ERROR = re.compile(r"KeyError: (.+)")


def harness_fault(cls: str, error: str, bound: Mapping[str, Any]) -> str | None:
    """BFCL-HARNESS: a ``KeyError`` BFCL's own class raises on a key no argument gave, or ``None``.

    A key the call passed (an unknown booking id) is the agent's; a key that is none of the
    call's argument values is a field BFCL's starting data lacks (TravelAPI reads a booking's
    ``travel_date`` that the initial config never wrote): the environment failed, not the agent.
    """
    match = _KEY_ERROR.fullmatch(error)
    if match is None:
        return None
    raw = match[1].strip()
    try:
        key = ast.literal_eval(raw)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        key = raw
    given = set(_atoms(dict(bound)))
    if isinstance(key, str | int | float) and not isinstance(key, bool) and str(key) in given:
        return None
    return (
        f"BFCL's {cls} raised KeyError: {raw} on its own data (the key is no argument of the call: "
        "the task's starting data lacks the field), an environment fault, not the agent's"
    )


# --- the session and the kernel semantics (BFCL-LINEAR, BFCL-SUCCESS) --------------------------------


def _diverges(call: ParsedCall) -> bool:
    """Whether BFCL's own run of ``call`` may differ from the replay's (BFCL-PARITY): BFCL drops
    a call the replay may execute (its step is not decoded by BFCL), or runs another call."""
    return (not call.decoded and call.fault is None) or (call.decoded and call.bfcl is not None)


class StaleStateError(RuntimeError):
    """A BFCL state was stepped after it had been superseded (states are linear, BFCL-LINEAR)."""


class _Session:
    """The mutable side of one replay: the model's and the gold's instance sets, stepped once each."""

    def __init__(self, run: BfclRun, track_success: bool) -> None:
        self.run = run
        self.model = World(run.task.entry)
        #: BFCL's own run of the model's calls, for Y: the same instance set as the replay's until
        #: a call that BFCL runs differently (or not at all) is executed, then a copy (BFCL-PARITY).
        self.checker = self.model
        self.position = 0
        self.records: list[CallRecord] = []
        #: Results of the calls accepted so far: what grounds later argument values (BFCL-MISS-PARAM).
        self.seen: list[str] = []
        self.track = track_success
        self.gold = World(run.task.entry) if track_success else None
        self.closed = 0
        self.results: list[str] = []
        self.verdict: bool | None = None
        self.failure: str | None = None
        if track_success and run.inference_error is not None:
            self._fail(f"inference_error: {run.inference_error[:INFERENCE_MESSAGE_CHARS]}")
        elif track_success and run.turns != len(run.task.gold):
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
        call = action.call
        if self.track and self.checker is self.model and _diverges(call):
            self.checker = self.model.fork()
        record = check_and_run(self.model, self.run.task, action, self.position + 1, self.seen)
        self.position += 1
        self.records.append(record)
        if record.accepted:
            self.seen.append(record.result)
        if self.track:
            if self.checker is self.model:
                if call.decoded:
                    self.results.append(record.result)
            elif call.decoded:
                self.results.append(self.checker.run_as_bfcl(call.bfcl or call))
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
                f"empty_turn_model_response: turn {j + 1} has no call BFCL decodes, "
                f"the ground truth has {len(expected)}"
            )
            return
        same, difference = same_state(self.checker, self.gold)
        if not same:
            self._fail(f"instance_state_mismatch: turn {j + 1}: {difference}")
            return
        missing = Counter(gold_results) - Counter(self.results)
        if missing:
            first = next(iter(missing))  # in the ground truth's order (BFCL's details list them so)
            shown = first if len(first) <= MISSING_SHOWN else first[: MISSING_SHOWN - 3] + "..."
            self._fail(
                f"execution_response_mismatch: turn {j + 1}: "
                f"{sum(missing.values())} ground-truth result(s) missing, the first: {shown}"
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
            error = session.run.inference_error
            if error is not None:
                return Rejected((), f"inference error: {error[:INFERENCE_MESSAGE_CHARS]}")
            return Rejected((), NO_TOOL_REASON)
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



__all__ = [
    "INFERENCE_ERROR",
    "INFERENCE_MESSAGE_CHARS",
    "NO_TOOL_REASON",
    "BfclCall",
    "BfclRun",
    "BfclSemantics",
    "BfclState",
    "BfclTask",
    "CallRecord",
    "Evaluation",
    "StaleStateError",
    "check_and_run",
    "evaluate",
    "gold_turns",
    "harness_fault",
    "inference_error_message",
    "inference_error_run",
    "information_fault",
    "make_run",
    "mentions",
    "placeholder_fault",
    "rejection_reason",
    "replay_calls",
    "run_from_strings",
    "task",
    "withheld_parameters",
]
