"""tau-bench result files: v1 result lists and tau2/tau^3 ``results.json`` (spec: spec/adapters/taubench.md).

The grader does not re-run anything: executability is what the benchmark's environment did
with each call, read from the recorded trajectory (TAU-EXEC). Each rollout becomes a
:class:`TauTask` (the calls with their recorded verdicts and the conversation around them),
replayed by the kernel through :data:`TAU` so that T, FED and the label come from the kernel
contract. Reading validates every file completely before anything is returned (TAU-ERRORS).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

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

from ..audit import (
    AuditPlan,
    Check,
    Expect,
    GenericAuditReport,
    Mutant,
    Operator,
    accepted_prefixes,
    replace_at,
    run_audit,
    seed_of,
)
from ..errors import InputError
from ..records import STDIN, parse_json_line, unique_rollouts

if TYPE_CHECKING:
    from .. import AdapterOptions

#: Dataset names are ``tau-bench/<domain>`` (TAU-DATASET).
DATASET_PREFIX = "tau-bench/"
#: Domains recognised in a v1 file name (TAU-DATASET).
KNOWN_DOMAINS = ("airline", "retail", "telecom")
#: v1 method when neither ``--method`` nor the file name gives one: tau-bench's default strategy.
DEFAULT_METHOD_V1 = "tool-calling"
#: tau2 method when neither ``--method`` nor ``info.agent_info.implementation`` gives one.
DEFAULT_METHOD_TAU2 = "llm_agent"
#: tau2 termination reasons under which the benchmark grades the rollout (TAU-SUCCESS).
STOP_REASONS = frozenset({"user_stop", "agent_stop"})
#: Longest observation text kept in a rejection reason.
REASON_LIMIT = 300

# --- label families (TAU-LABELS); matched case-insensitively anywhere in the tool message ---------
_SCHEMA = re.compile(
    r"^unknown action\b|\btool '[^']*' not found|missing \d+ required|unexpected keyword argument"
    r"|got multiple values for|takes \d+ positional|validation error|\binvalid\b",
    re.IGNORECASE,
)
_PRECONDITION = re.compile(
    r"non-pending|non-delivered|not pending|not delivered|not available|not enough seats", re.IGNORECASE
)
_STATE = re.compile(r"does not add up|balance is not enough|not enough balance|insufficient", re.IGNORECASE)
_NOT_FOUND = re.compile(r"\bnot found\b", re.IGNORECASE)
_ID_CHARS = re.compile(r"[0-9_#]")
_WORD = re.compile(r"[a-z]+")
_STRIP = "'\".,:;()[]{}"

# --- file names (TAU-DATASET) -----------------------------------------------------------------------
#: tau-bench v1 ``run.py`` checkpoint name:
#: ``<strategy>-<model>-<temperature>_range_<start>-<end>_user-<user model>-<user strategy>_<time>``.
_V1_STRATEGIES = ("tool-calling", "act", "react", "few-shot")
_V1_CHECKPOINT = re.compile(
    r"^(?P<strategy>" + "|".join(_V1_STRATEGIES) + r")-(?P<model>.+)-(?P<temperature>\d+(?:\.\d+)?)"
    r"_range_\d+--?\d+_user-.+_\d+$"
)
#: ``<model>-<domain>`` as in tau-bench's ``historical_trajectories/gpt-4o-airline.json``.
_V1_MODEL_DOMAIN = re.compile(r"^(?P<model>.+)[-_](?P<domain>" + "|".join(KNOWN_DOMAINS) + r")$")
#: The first line of a tau-bench system prompt: ``# Airline Agent Policy``, ``# Retail agent policy``.
_POLICY_HEADING = re.compile(r"^#\s*(?P<domain>[A-Za-z]+)\s+agent\s+policy\b", re.IGNORECASE)


# ================================================================================ semantics


@attrs.frozen(slots=True)
class Exchange:
    """One call of the predicted trajectory with what the environment recorded for it.

    ``context`` holds the texts the agent saw for the first time just before issuing the
    call (user messages, observations of its earlier calls), in order; ``answered`` is false
    when no tool message answers the call (TAU-UNANSWERED).
    """

    call: ToolCall
    answered: bool
    accepted: bool
    observation: str
    context: tuple[str, ...]


@attrs.frozen(slots=True)
class TauTask:
    """What the semantics needs of one rollout: its exchanges and the no-tool rule."""

    exchanges: tuple[Exchange, ...]
    no_tool_allowed: bool
    no_tool_reason: str


@attrs.frozen(slots=True)
class TauState:
    """Position in the trajectory and the conversation the agent has seen so far."""

    task: TauTask
    position: int
    seen: tuple[str, ...]


def _occurs(identifier: str, texts: Sequence[str]) -> bool:
    """``identifier`` appears in one of ``texts`` as a whole token (case-insensitive)."""
    pattern = re.compile(r"(?<![A-Za-z0-9_])" + re.escape(identifier) + r"(?![A-Za-z0-9_])", re.IGNORECASE)
    return any(pattern.search(text) for text in texts)


def _string_leaves(value: object, key: str = "") -> Iterator[tuple[str, str]]:
    """``(key, string)`` for every string inside an argument value (list items keep their key)."""
    if isinstance(value, str):
        yield key, value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from _string_leaves(v, str(k))
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _string_leaves(v, key)


def _id_like(token: str) -> bool:
    return bool(_ID_CHARS.search(token)) or (len(token) >= 2 and token.isupper())


def missing_entity_ids(message: str, arguments: Mapping[str, Any]) -> tuple[str, ...]:
    """The identifiers a "not found" message is about (TAU-ENTITY).

    The token just before ``not found`` if it looks like an identifier (it holds a digit,
    ``_`` or ``#``, or is upper case); otherwise the call's string arguments whose key shares
    a word with the words before ``not found`` (``payment method`` -> ``payment_id``);
    otherwise every string argument.
    """
    match = _NOT_FOUND.search(message)
    if match is None:
        return ()
    before = message[: match.start()]
    before = before.split(":", 1)[1] if before.lower().startswith("error:") else before
    tokens = [t.strip(_STRIP) for t in before.split()]
    tokens = [t for t in tokens if t]
    if tokens and _id_like(tokens[-1]):
        return (tokens[-1],)
    nouns = set(_WORD.findall(before.lower())) - {"error", "of", "the", "a", "an", "number", "new"}
    leaves = [(k, v) for k, v in _string_leaves(arguments) if v.strip()]
    related = tuple(v for k, v in leaves if nouns & (set(_WORD.findall(k.lower())) - {"id", "ids"}))
    return related or tuple(v for _, v in leaves)


def classify(
    message: str, arguments: Mapping[str, Any], seen: Sequence[str]
) -> tuple[tuple[Label, ...], str]:
    """Labels of a rejected call from its tool message (TAU-LABELS, TAU-ENTITY), and a note.

    Every family the message matches is returned (the kernel keeps the first in tie-break
    order); a message matching none is ``state_consistency``.
    """
    labels: list[Label] = []
    note = ""
    if _SCHEMA.search(message):
        labels.append(Label.SCHEMA)
    if _NOT_FOUND.search(message):
        ids = missing_entity_ids(message, arguments)
        invented = [i for i in ids if not _occurs(i, seen)]
        if invented:
            labels.append(Label.INFORMATION)
            note = f" [{invented[0]!r} never occurred earlier in the conversation]"
        else:
            labels.append(Label.DEPENDENCY)
    if _PRECONDITION.search(message):
        labels.append(Label.PRECONDITION)
    if _STATE.search(message):
        labels.append(Label.STATE_CONSISTENCY)
    if not labels:
        labels.append(Label.STATE_CONSISTENCY)
        note = " [no label family matched]"
    return tuple(labels), note


def _shorten(text: str) -> str:
    return text if len(text) <= REASON_LIMIT else text[: REASON_LIMIT - 3] + "..."


class TauSemantics:
    """Recorded tau-bench verdicts; the state carries the conversation seen so far.

    A call is accepted iff the environment accepted it (TAU-EXEC); a rejected call is
    labelled from its tool message, using the conversation seen before the call to tell a
    dependency failure from an information failure (TAU-ENTITY).
    """

    def initial_state(self, task: TauTask) -> TauState:
        return TauState(task, 0, ())

    def step(self, state: TauState, action: Action) -> Accepted[TauState] | Rejected:
        task = state.task
        if isinstance(action, NoToolAction):
            if task.no_tool_allowed:
                return Accepted(TauState(task, state.position + 1, state.seen))
            return Rejected((), task.no_tool_reason)
        exchange = task.exchanges[state.position]
        seen = state.seen + exchange.context
        call = exchange.call
        name = f"call {state.position + 1} {call.name}" + (f" (id {call.call_id})" if call.call_id else "")
        if not exchange.answered:
            return Rejected(
                (Label.SCHEMA,), f"{name}: no tool message answers this call (incomplete recording)"
            )
        if exchange.accepted:
            return Accepted(TauState(task, state.position + 1, seen), exchange.observation)
        labels, note = classify(exchange.observation, call.arguments, seen)
        return Rejected(labels, _shorten(f"{name}: {exchange.observation}") + note)


TAU = TauSemantics()


# ================================================================================ reading


def _fail(where: str, what: str) -> NoReturn:
    raise InputError(where, what)


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


def _dict(value: object, where: str, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        _fail(where, f"{what} must be a JSON object, got {_kind(value)}")
    return value


def _list(value: object, where: str, what: str) -> list[Any]:
    if not isinstance(value, list):
        _fail(where, f"{what} must be a JSON list, got {_kind(value)}")
    return value


def _str(value: object, where: str, what: str) -> str:
    if not isinstance(value, str):
        _fail(where, f"{what} must be a string, got {_kind(value)}")
    return value


def _number(value: object, where: str, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        _fail(where, f"{what} must be a number, got {_kind(value)}")
    return float(value)


def _task_id(value: object, where: str) -> str:
    if isinstance(value, bool) or not isinstance(value, int | str):
        _fail(where, f"'task_id' must be a string or an integer, got {_kind(value)}")
    return str(value)


def _trial(value: object, where: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        _fail(where, f"'trial' must be an integer >= 0, got {value!r}")
    return value


def _load(path: str) -> tuple[str, Any]:
    name = "<stdin>" if path == STDIN else path
    try:
        text = sys.stdin.read() if path == STDIN else Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        _fail(name, "no such file")
    except IsADirectoryError:
        _fail(name, "is a directory, expected a tau-bench results JSON file")
    except UnicodeDecodeError as exc:
        _fail(name, f"not UTF-8 text ({exc.reason} at byte {exc.start})")
    except PermissionError:
        _fail(name, "permission denied")
    try:
        return name, parse_json_line(text)
    except ValueError as exc:
        _fail(name, f"not valid JSON: {exc}")


@attrs.define
class _Builder:
    """Collects the exchanges of one trajectory while its messages are read in order.

    A tool message answers the earliest still unanswered call with its id (TAU-CALLS): ids
    may repeat within a trajectory (the v1 fixture reuses OpenAI call ids), never while open.
    """

    calls: list[ToolCall] = attrs.field(factory=list)
    contexts: list[tuple[str, ...]] = attrs.field(factory=list)
    answers: dict[int, tuple[bool, str]] = attrs.field(factory=dict)
    open_calls: dict[str, list[int]] = attrs.field(factory=dict)
    open_other: dict[str, int] = attrs.field(factory=dict)
    buffer: list[str] = attrs.field(factory=list)

    def see(self, text: object) -> None:
        """The agent sees ``text`` (a user message or an observation of one of its calls)."""
        if isinstance(text, str) and text:
            self.buffer.append(text)

    def add_call(self, call: ToolCall) -> None:
        """Append a trajectory call; it takes the texts seen since the previous call as context."""
        if call.call_id is not None:
            self.open_calls.setdefault(call.call_id, []).append(len(self.calls))
        self.calls.append(call)
        self.contexts.append(tuple(self.buffer))
        self.buffer = []

    def add_other_call(self, call_id: str) -> None:
        """A call outside the trajectory (tau2: requested by the user), answered but not scored."""
        self.open_other[call_id] = self.open_other.get(call_id, 0) + 1

    def answer(self, call_id: str, accepted: bool, content: str, where: str) -> None:
        """Pair a tool message with the earliest open call with ``call_id``."""
        pending = self.open_calls.get(call_id)
        if pending:
            self.answers[pending.pop(0)] = (accepted, content)
            self.see(content)
            return
        if self.open_other.get(call_id, 0) > 0:
            self.open_other[call_id] -= 1
            return
        _fail(where, f"tool message answers no call: no earlier unanswered call has id {call_id!r}")

    def exchanges(self) -> tuple[Exchange, ...]:
        out: list[Exchange] = []
        for index, (call, context) in enumerate(zip(self.calls, self.contexts, strict=True)):
            accepted, content = self.answers.get(index, (False, ""))
            out.append(Exchange(call, index in self.answers, accepted, content, context))
        return tuple(out)


def _json_arguments(raw: object) -> dict[str, Any]:
    """v1 arguments: a JSON object string (model output: parsed as JSON data, never evaluated)."""
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str):
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _gold_count_v1(task: Mapping[str, Any], where: str) -> int:
    actions = _list(task.get("actions"), where, "'info.task.actions'")
    count = 0
    for j, action in enumerate(actions):
        name = _str(_dict(action, where, f"'info.task.actions[{j}]'").get("name"), where, "action 'name'")
        count += name != "respond"
    return count


@attrs.frozen(slots=True)
class _Naming:
    """What a v1 file name says: model, domain, strategy (each possibly unknown)."""

    model: str | None = None
    domain: str | None = None
    strategy: str | None = None


def v1_naming(path: str) -> _Naming:
    """Model, domain and strategy read from a v1 file name (TAU-DATASET)."""
    stem = Path(path).name.removesuffix(".json")
    checkpoint = _V1_CHECKPOINT.match(stem)
    if checkpoint:
        return _Naming(model=checkpoint["model"], strategy=checkpoint["strategy"])
    pair = _V1_MODEL_DOMAIN.match(stem)
    if pair:
        return _Naming(model=pair["model"], domain=pair["domain"])
    return _Naming()


def _policy_domain(traj: Sequence[Any]) -> str | None:
    for message in traj:
        if isinstance(message, dict) and message.get("role") == "system":
            content = message.get("content")
            if isinstance(content, str):
                heading = _POLICY_HEADING.match(content.lstrip())
                if heading:
                    return heading["domain"].lower()
            return None
    return None


def _read_v1_traj(traj: Sequence[Any], where: str) -> _Builder:
    builder = _Builder()
    for j, raw in enumerate(traj):
        here = f"{where}: traj[{j}]"
        message = _dict(raw, here, "a message")
        role = message.get("role")
        if role == "system":
            continue
        if role == "user":
            builder.see(message.get("content"))
        elif role == "assistant":
            calls = message.get("tool_calls") or []
            calls = _list(calls, here, "'tool_calls'")
            if not calls:
                continue
            first = _dict(calls[0], here, "'tool_calls[0]'")
            function = first.get("function")
            if function is None:  # tau-bench v1 turns such a message into a reply to the user
                continue
            function = _dict(function, here, "'tool_calls[0].function'")
            name = _str(function.get("name"), here, "'tool_calls[0].function.name'")
            call_id = first.get("id")
            if call_id is not None:
                call_id = _str(call_id, here, "'tool_calls[0].id'")
            builder.add_call(ToolCall(name, _json_arguments(function.get("arguments")), call_id))
        elif role == "tool":
            call_id = _str(message.get("tool_call_id"), here, "'tool_call_id'")
            content = _str(message.get("content"), here, "tool message 'content'")
            accepted = not (content.startswith("Error") or content.startswith("Unknown action"))
            builder.answer(call_id, accepted, content, here)
        else:
            _fail(here, f"unknown message role {role!r} (expected system, user, assistant or tool)")
    return builder


def _read_v1(name: str, data: list[Any], options: AdapterOptions) -> list[tuple[str, Rollout]]:
    naming = v1_naming(name) if name != "<stdin>" else _Naming()
    model = options.model or naming.model
    method = options.method or naming.strategy or DEFAULT_METHOD_V1
    if not model:
        _fail(name, "cannot tell the model from the file name (<model>-<domain>.json); pass --model")
    parsed: list[tuple[str, str, int, TauTask, tuple[ToolCall, ...], bool]] = []
    domains: dict[str, str] = {}
    for index, raw in enumerate(data):
        record = _dict(raw, f"{name}: record {index}", "a v1 result")
        task_id = _task_id(record.get("task_id"), f"{name}: record {index}")
        trial = _trial(record.get("trial"), f"{name}: record {index}")
        where = f"{name}: record {index} (task {task_id}, trial {trial})"
        reward = _number(record.get("reward"), where, "'reward'")
        info = _dict(record.get("info"), where, "'info'")
        traj = _list(record.get("traj"), where, "'traj'")
        policy = _policy_domain(traj)
        if policy is not None:
            domains.setdefault(policy, where)
        if "error" in info and not traj:  # TAU-CRASH
            task = TauTask((), False, f"the run crashed before any action: {_shorten(str(info['error']))}")
            parsed.append((where, task_id, trial, task, (), reward == 1.0))
            continue
        gold = _gold_count_v1(_dict(info.get("task"), where, "'info.task'"), where)
        builder = _read_v1_traj(traj, where)
        if not builder.calls and any(
            isinstance(m, dict)
            and m.get("role") == "user"
            and isinstance(m.get("content"), str)
            and m["content"].startswith("API output:")
            for m in traj
        ):
            _fail(where, "tool calls are written in the text (act/react strategy); only tool_calls are read")
        reason = f"terminal no-tool action, but the task has {gold} gold action(s)"
        task = TauTask(builder.exchanges(), gold == 0, reason)
        parsed.append((where, task_id, trial, task, tuple(builder.calls), reward == 1.0))
    domain = naming.domain
    for policy, where in domains.items():
        if domain is None:
            domain = policy
        elif policy != domain:
            source = "the file name" if naming.domain else "an earlier system prompt"
            _fail(where, f"the system prompt says domain {policy!r}, {source} says {domain!r}")
    if domain is None:
        _fail(name, "cannot tell the domain: name the file <model>-<domain>.json or keep the system prompt")
    return [
        (where, _rollout("v1", domain, model, method, task_id, trial, task, calls, success))
        for where, task_id, trial, task, calls, success in parsed
    ]


def _rollout(
    fmt: str,
    domain: str,
    model: str,
    method: str,
    task_id: str,
    trial: int,
    task: TauTask,
    calls: Sequence[ToolCall],
    success: bool,
) -> Rollout:
    """Replay one rollout's calls through :data:`TAU` (no call: the terminal no-tool action).

    ``meta`` reports what the recording holds beyond the outcome: the number of calls, of
    calls the environment rejected (anywhere in the trajectory) and of unanswered calls.
    """
    outcome = replay(TAU, task, calls)
    meta = {
        "format": fmt,
        "calls": len(task.exchanges),
        "rejected_calls": sum(1 for e in task.exchanges if e.answered and not e.accepted),
        "unanswered_calls": sum(1 for e in task.exchanges if not e.answered),
    }
    key = ConditionKey(DATASET_PREFIX + domain, model, method)
    return Rollout(key, task_id, trial, outcome, success, meta)


def _gold_count_tau2(task: Mapping[str, Any], where: str) -> int:
    criteria = task.get("evaluation_criteria")
    if criteria is None:
        return 0
    criteria = _dict(criteria, where, "'evaluation_criteria'")
    actions = criteria.get("actions")
    if actions is None:
        return 0
    count = 0
    for j, action in enumerate(_list(actions, where, "'evaluation_criteria.actions'")):
        action = _dict(action, where, f"'evaluation_criteria.actions[{j}]'")
        count += action.get("requestor", "assistant") != "user"
    return count


def _tau2_tool_messages(message: Mapping[str, Any], here: str) -> list[dict[str, Any]]:
    if "tool_messages" in message:  # MultiToolMessage
        return [
            _dict(m, here, "'tool_messages[]'")
            for m in _list(message["tool_messages"], here, "'tool_messages'")
        ]
    return [dict(message)]


def _read_tau2_messages(messages: Sequence[Any], where: str) -> _Builder:
    builder = _Builder()
    for j, raw in enumerate(messages):
        here = f"{where}: messages[{j}]"
        message = _dict(raw, here, "a message")
        role = message.get("role")
        if role == "system":
            continue
        calls = _list(message.get("tool_calls") or [], here, "'tool_calls'")
        if role == "user":
            builder.see(message.get("content"))
            for k, raw_call in enumerate(calls):
                call = _dict(raw_call, here, f"'tool_calls[{k}]'")
                builder.add_other_call(_str(call.get("id"), here, f"'tool_calls[{k}].id'"))
        elif role == "assistant":
            for k, raw_call in enumerate(calls):
                call = _dict(raw_call, here, f"'tool_calls[{k}]'")
                call_id = _str(call.get("id"), here, f"'tool_calls[{k}].id'")
                name = _str(call.get("name"), here, f"'tool_calls[{k}].name'")
                arguments = _dict(call.get("arguments"), here, f"'tool_calls[{k}].arguments'")
                if call.get("requestor", "assistant") == "user":
                    builder.add_other_call(call_id)
                else:
                    builder.add_call(ToolCall(name, arguments, call_id))
        elif role == "tool":
            for tool in _tau2_tool_messages(message, here):
                call_id = _str(tool.get("id"), here, "tool message 'id'")
                content = tool.get("content")
                content = "" if content is None else _str(content, here, "tool message 'content'")
                error = tool.get("error", False)
                if not isinstance(error, bool):
                    _fail(here, f"tool message 'error' must be true or false, got {error!r}")
                builder.answer(call_id, not error, content, here)
        else:
            _fail(here, f"unknown message role {role!r} (expected system, user, assistant or tool)")
    return builder


def _read_tau2(name: str, data: dict[str, Any], options: AdapterOptions) -> list[tuple[str, Rollout]]:
    info = _dict(data.get("info"), name, "'info'")
    environment = _dict(info.get("environment_info"), name, "'info.environment_info'")
    domain = _str(environment.get("domain_name"), name, "'info.environment_info.domain_name'")
    agent = _dict(info.get("agent_info", {}), name, "'info.agent_info'")
    model = options.model or agent.get("llm")
    if not model:
        _fail(name, "'info.agent_info.llm' is empty; pass --model")
    model = _str(model, name, "'info.agent_info.llm'")
    method = options.method or agent.get("implementation") or DEFAULT_METHOD_TAU2
    method = _str(method, name, "'info.agent_info.implementation'")
    gold: dict[str, int] = {}
    for index, raw in enumerate(_list(data.get("tasks"), name, "'tasks'")):
        here = f"{name}: tasks[{index}]"
        entry = _dict(raw, here, "a task")
        gold[_task_id(entry.get("id"), here)] = _gold_count_tau2(entry, here)
    simulations = _list(data.get("simulations"), name, "'simulations'")
    if not simulations:
        what = "no simulations (a dir-format results.json keeps them in simulations/: not supported)"
        _fail(name, what if data.get("simulation_index") else "no simulations")
    out: list[tuple[str, Rollout]] = []
    for index, raw in enumerate(simulations):
        sim = _dict(raw, f"{name}: simulations[{index}]", "a simulation")
        task_id = _task_id(sim.get("task_id"), f"{name}: simulations[{index}]")
        trial = _trial(sim.get("trial"), f"{name}: simulations[{index}]")
        where = f"{name}: simulations[{index}] (task {task_id!r}, trial {trial})"
        if task_id not in gold:
            _fail(where, f"task {task_id!r} is not in 'tasks'")
        termination = _str(sim.get("termination_reason"), where, "'termination_reason'")
        reward_info = sim.get("reward_info")
        if termination in STOP_REASONS:
            if reward_info is None:
                _fail(where, "'reward_info' is null: the simulation was not evaluated")
            reward = _number(
                _dict(reward_info, where, "'reward_info'").get("reward"), where, "'reward_info.reward'"
            )
            success = reward == 1.0
        else:
            success = False
        messages = sim.get("messages")
        if messages is None:
            if sim.get("ticks") is not None:
                _fail(where, "full-duplex simulation (ticks, no messages): not supported")
            messages = []
        builder = _read_tau2_messages(_list(messages, where, "'messages'"), where)
        reason = f"terminal no-tool action, but the task has {gold[task_id]} gold assistant action(s)"
        task = TauTask(builder.exchanges(), gold[task_id] == 0, reason)
        out.append(
            (where, _rollout("tau2", domain, model, method, task_id, trial, task, builder.calls, success))
        )
    return out


def read_file(path: str, options: AdapterOptions) -> list[tuple[str, Rollout]]:
    """``(where, rollout)`` for every rollout of one results file (TAU-FORMAT), validated."""
    name, data = _load(path)
    if isinstance(data, list):
        if not data:
            _fail(name, "the result list is empty")
        return _read_v1(name, data, options)
    if isinstance(data, dict) and "simulations" in data:
        return _read_tau2(name, data, options)
    _fail(
        name,
        f"not a tau-bench results file: expected a JSON list (v1) or an object with 'simulations' "
        f"(tau2/tau^3), got {_kind(data) if not isinstance(data, dict) else 'an object without simulations'}",
    )


def read(paths: Sequence[str], options: AdapterOptions) -> list[Rollout]:
    """Read every results file; raises :class:`InputError` on the first fault (TAU-ERRORS).

    ``(dataset, model, method, task_id, trial)`` must be unique over all files.
    """
    return unique_rollouts(
        paths,
        (item for path in paths for item in read_file(path, options)),
        lambda r, first: (
            f"duplicate rollout: task {r.task_id!r}, trial {r.trial} of {r.condition.dataset} / "
            f"{r.condition.model} / {r.condition.method} was first read at {first}"
        ),
        "no rollouts found",
    )


__all__ = [
    "TAU",
    "Exchange",
    "TauSemantics",
    "TauState",
    "TauTask",
    "classify",
    "missing_entity_ids",
    "read",
    "read_file",
    "v1_naming",
]


# ================================================================================ audit (AUDIT-TAU)

#: An argument value usable as the identifier of a ``<id> not found`` message (operator seen-id).
_ID_TOKEN = re.compile(r"^[A-Za-z0-9_#-]+$")


@attrs.frozen(slots=True)
class _AuditRollout:
    where: str
    task: TauTask
    calls: tuple[ToolCall, ...]
    gold: int | None
    gold_actions: str | None
    recorded_gold: str | None
    crashed: bool
    rollout: Rollout


def _gold_v1(record: Mapping[str, Any]) -> tuple[int, str, str | None]:
    """Non-``respond`` gold actions of a v1 record, and both recorded gold lists as canonical JSON."""
    info = record["info"]
    actions = info["task"]["actions"]
    reward_info = info.get("reward_info")
    recorded = reward_info.get("actions") if isinstance(reward_info, dict) else None
    count = sum(1 for a in actions if a.get("name") != "respond")
    canonical = json.dumps(actions, sort_keys=True)
    return count, canonical, None if recorded is None else json.dumps(recorded, sort_keys=True)


def _audit_rollouts(paths: Sequence[str], options: AdapterOptions) -> list[_AuditRollout]:
    """Every rollout of ``paths`` with its task and gold, each file validated as ``read_file`` does."""
    out: list[_AuditRollout] = []
    for path in paths:
        name, data = _load(path)
        if isinstance(data, list) and data:
            for (where, rollout), record in zip(_read_v1(name, data, options), data, strict=True):
                info, traj = record["info"], record["traj"]
                if "error" in info and not traj:
                    task = TauTask((), False, "crashed")
                    out.append(_AuditRollout(where, task, (), None, None, None, True, rollout))
                    continue
                count, canonical, recorded = _gold_v1(record)
                builder = _read_v1_traj(traj, where)
                task = TauTask(builder.exchanges(), count == 0, "no-tool")
                calls = tuple(builder.calls)
                out.append(_AuditRollout(where, task, calls, count, canonical, recorded, False, rollout))
        elif isinstance(data, dict) and "simulations" in data:
            pairs = _read_tau2(name, data, options)
            gold = {
                str(t["id"]): sum(
                    1
                    for a in ((t.get("evaluation_criteria") or {}).get("actions") or [])
                    if a.get("requestor", "assistant") != "user"
                )
                for t in data["tasks"]
            }
            for (where, rollout), sim in zip(pairs, data["simulations"], strict=True):
                builder = _read_tau2_messages(sim.get("messages") or [], where)
                count = gold[str(sim["task_id"])]
                task = TauTask(builder.exchanges(), count == 0, "no-tool")
                calls = tuple(builder.calls)
                out.append(_AuditRollout(where, task, calls, count, None, None, False, rollout))
        else:
            read_file(path, options)  # raises the reader's error for any other shape
    if not out:
        _fail(", ".join(paths), "no rollouts found")
    return out


def _seen_through(task: TauTask, index: int) -> tuple[str, ...]:
    """The conversation the agent had seen when it issued call ``index`` (TAU-ENTITY)."""
    return tuple(text for e in task.exchanges[: index + 1] for text in e.context)


def _tau_mutants(
    task: TauTask,
    actions: tuple[Action, ...],
    outcome: Outcome,
    change: Callable[[TauTask, int], tuple[Exchange, str] | None],
) -> list[Mutant[TauTask]]:
    out = []
    for i in range(min(outcome.fed - 1, len(actions))):
        changed = change(task, i)
        if changed is None:
            continue
        exchange, what = changed
        mutated = attrs.evolve(task, exchanges=replace_at(task.exchanges, i, exchange))
        out.append(Mutant(mutated, replace_at(actions, i, exchange.call), i + 1, what))
    return out


def _unanswered(task: TauTask, i: int) -> tuple[Exchange, str]:
    return attrs.evolve(task.exchanges[i], answered=False, accepted=False, observation=""), "answer removed"


def _unknown_action(task: TauTask, i: int) -> tuple[Exchange, str]:
    call = task.exchanges[i].call
    name = call.name + "_nonexistent"
    renamed = ToolCall(name, call.arguments, call.call_id)
    message = f"Unknown action {name}"
    return attrs.evolve(task.exchanges[i], call=renamed, accepted=False, observation=message), message


def _invented_id(task: TauTask, i: int) -> tuple[Exchange, str]:
    seen = _seen_through(task, i)
    token = f"AUDIT{i + 1}"
    while _occurs(token, seen):
        token += "X"
    message = f"Error: {token} not found"
    return attrs.evolve(task.exchanges[i], accepted=False, observation=message), message


def _seen_id(task: TauTask, i: int) -> tuple[Exchange, str] | None:
    seen = _seen_through(task, i)
    exchange = task.exchanges[i]
    for _, value in _string_leaves(exchange.call.arguments):
        if _ID_TOKEN.match(value) and _id_like(value) and _occurs(value, seen):
            message = f"Error: {value} not found"
            return attrs.evolve(exchange, accepted=False, observation=message), message
    return None


def _tau_operator(
    name: str, description: str, label: Label, change: Callable[[TauTask, int], tuple[Exchange, str] | None]
) -> Operator[TauTask]:
    def make(task: TauTask, actions: tuple[Action, ...], outcome: Outcome) -> list[Mutant[TauTask]]:
        return _tau_mutants(task, actions, outcome, change)

    return Operator(name, description, Expect.LABEL, make, label)


def audit_operators() -> tuple[Operator[TauTask], ...]:
    """The tau-bench audit's operators: each rewrites what the environment recorded for a call."""
    return (
        _tau_operator(
            "unanswered", "no tool message answers the call (TAU-UNANSWERED)", Label.SCHEMA, _unanswered
        ),
        _tau_operator(
            "unknown-action",
            "the call names an unknown tool (v1: Unknown action)",
            Label.SCHEMA,
            _unknown_action,
        ),
        _tau_operator(
            "invented-id",
            "'<id> not found' for an id the agent never saw (TAU-ENTITY)",
            Label.INFORMATION,
            _invented_id,
        ),
        _tau_operator(
            "seen-id",
            "'<id> not found' for an argument id the agent had seen (TAU-ENTITY)",
            Label.DEPENDENCY,
            _seen_id,
        ),
    )


def _audit_checks(rollouts: Sequence[_AuditRollout]) -> tuple[Check, ...]:
    no_tool: list[str] = []
    no_tool_checked = 0
    gold_records: list[str] = []
    gold_checked = 0
    first_gold: dict[tuple[str, str], tuple[str, str]] = {}
    recording: list[str] = []
    for r in rollouts:
        outcome = r.rollout.outcome
        if not r.calls:
            no_tool_checked += 1
            expected = 1 if r.crashed or r.gold else 2
            if outcome.T != 1 or outcome.fed != expected:
                why = "a crashed run" if r.crashed else f"{r.gold} gold action(s)"
                no_tool.append(
                    f"{r.where}: {why}, expected FED {expected}, got T {outcome.T} FED {outcome.fed}"
                )
        if r.gold_actions is not None:
            gold_checked += 1
            if r.recorded_gold is not None and r.recorded_gold != r.gold_actions:
                gold_records.append(f"{r.where}: info.reward_info.actions differ from info.task.actions")
            key = (r.rollout.condition.dataset, r.rollout.task_id)
            first = first_gold.setdefault(key, (r.where, r.gold_actions))
            if first[1] != r.gold_actions:
                gold_records.append(f"{r.where}: gold actions differ from those of {first[0]} (same task)")
        meta = r.rollout.meta
        calls, rejected, unanswered = meta["calls"], meta["rejected_calls"], meta["unanswered_calls"]
        if calls:
            clean = rejected == 0 and unanswered == 0
            if outcome.T != calls or (not clean and outcome.fully_executable):
                recording.append(
                    f"{r.where}: {calls} calls, {rejected} rejected, {unanswered} unanswered, "
                    f"but T {outcome.T} FED {outcome.fed}"
                )
            if clean and not outcome.fully_executable:
                recording.append(f"{r.where}: every call accepted and answered, but FED {outcome.fed}")
    return (
        Check(
            "no-tool-rule",
            "a rollout without calls has FED 2 iff its task has no gold action and the run did not crash "
            "(TAU-NOTOOL, TAU-CRASH)",
            no_tool_checked,
            tuple(no_tool),
        ),
        Check(
            "gold-recording",
            "v1 gold actions: info.reward_info.actions equal info.task.actions, and every trial of a task "
            "has the same gold",
            gold_checked,
            tuple(gold_records),
        ),
        Check(
            "outcome-recording",
            "T is the number of calls, and FED = T + 1 iff every call was answered and accepted (EQ-1)",
            sum(1 for r in rollouts if r.calls),
            tuple(recording),
        ),
    )


def audit(paths: Sequence[str], options: AdapterOptions) -> GenericAuditReport:
    """``prefixexec audit --adapter taubench FILE...`` (AUDIT-TAU)."""
    if not paths:
        _fail("--adapter taubench", "the tau-bench audit reads result files: give FILE...")
    rollouts = _audit_rollouts(paths, options)
    items: list[tuple[str, TauTask, tuple[Action, ...]]] = [
        (r.where, r.task, r.calls) for r in rollouts if r.calls
    ]
    bases, first_rejected = accepted_prefixes(TAU, items)
    plan: AuditPlan[TauTask] = AuditPlan(
        adapter="taubench",
        source=f"{', '.join(paths)}: {len(rollouts)} rollouts, {sum(len(r.calls) for r in rollouts)} calls",
        semantics=TAU,
        no_gold="tau-bench's gold actions (v1 info.task.actions, tau2 evaluation_criteria.actions) "
        "need the benchmark's environment (databases and tool code), which is not in the result files",
        bases=bases,
        bases_kind="calls the environment accepted, before each rollout's first rejection",
        operators=audit_operators(),
        checks=_audit_checks(rollouts),
        not_checked=(
            "state replay: whether the gold actions execute, and whether the recorded verdicts are the "
            "ones the environment would give, needs tau-bench's environment",
            "labels of the recorded rejections beyond the operators' messages (TAU-LABELS on real text)",
            "Y: the recorded reward is taken as is",
            f"{first_rejected} rollouts whose first call was rejected: no accepted call to mutate",
        ),
    )
    return run_audit(plan, seed_of(options))


__all__ += ["audit", "audit_operators"]
