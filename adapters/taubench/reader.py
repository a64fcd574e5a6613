"""tau-bench result files -> rollouts: v1 result lists and tau2/tau^3 ``results.json`` (TAU-FORMAT).

Reads the recorded trajectories (TAU-CALLS, TAU-PAIR), the environment's verdict on each call
(TAU-EXEC), the gold the no-tool rule needs (TAU-NOTOOL), the calls an agent wrote as text
(TAU-TEXT-CALL) and the condition names (TAU-DATASET, TAU-V1-NAME, TAU-V1-DOMAIN). Every file
is validated completely before anything is returned (TAU-ERRORS); an empty run is reported on
stderr and contributes nothing (TAU-EMPTY). Model output is data: arguments are parsed as JSON or
as a Python literal (``ast.literal_eval``), never evaluated.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import attrs

from prefixexec.kernel import ConditionKey, Rollout, ToolCall, replay

from .. import harness
from ..errors import InputError
from ..inputs import plain_name, read_text, reading
from ..labels import NO_RULES, LabelRules, load_label_rules
from ..limits import notice, read_stdin_document
from ..numbers import json_fault
from ..records import STDIN, parse_json_line, unique_rollouts
from ..rejections import SOURCES_KEY, VERDICTS_KEY, Verdicts
from ..shape import field, kind, need_dict, need_list, need_number, need_str, task_id, trial
from .semantics import DOMAIN_ID_PREFIXES, TAU, Exchange, TauTask, past_call

if TYPE_CHECKING:
    from .. import AdapterOptions

#: Dataset names are ``tau-bench/<domain>`` (TAU-DATASET).
DATASET_PREFIX = "tau-bench/"
#: Domains recognised in a v1 file name (TAU-DATASET).
KNOWN_DOMAINS = ("airline", "retail", "telecom")
#: v1 method when neither ``--method``, the records nor the file name gives one: tau-bench's default.
DEFAULT_METHOD_V1 = "tool-calling"
#: tau2 method when neither ``--method`` nor ``info.agent_info.implementation`` gives one.
DEFAULT_METHOD_TAU2 = "llm_agent"
#: tau2 termination reasons under which the benchmark grades the rollout (TAU-SUCCESS).
STOP_REASONS = frozenset({"user_stop", "agent_stop"})
#: The tau2 termination reason of a simulation the harness lost (TAU-HARNESS): tau2's metrics drop it.
INFRASTRUCTURE_ERROR = "infrastructure_error"

# --- file names (TAU-DATASET, TAU-V1-NAME) ---------------------------------------------------------
#: tau-bench v1 ``run.py`` checkpoint name (forks append other tails after the range):
#: ``<strategy>-<model>-<temperature>_range_<start>-<end>[_user-<user model>-<user strategy>]_<time>``.
_V1_CHECKPOINT = re.compile(r"^(?P<head>.+)-(?P<temperature>\d+(?:\.\d+)?)_range_-?\d+--?\d+(?:_.*)?$")
#: ``<model>-<domain>`` as in tau-bench's ``historical_trajectories/gpt-4o-airline.json``.
_V1_MODEL_DOMAIN = re.compile(r"^(?P<model>.+)[-_](?P<domain>" + "|".join(KNOWN_DOMAINS) + r")$")
#: The first line of a tau-bench system prompt: ``# Airline Agent Policy``, ``# Retail agent policy``.
_POLICY_HEADING = re.compile(r"^#\s*(?P<domain>[A-Za-z]+)\s+agent\s+policy\b", re.IGNORECASE)
#: Where a model name starts (TAU-V1-NAME): the model families of tau-bench runs' model names.
MODEL_FAMILIES = (
    "gpt", "chatgpt", "o1", "o3", "o4", "claude", "gemini", "gemma", "llama", "meta-llama", "mistral",
    "mixtral", "ministral", "codestral", "qwen", "qwq", "deepseek", "grok", "command", "phi", "glm",
    "kimi", "nova",
)  # fmt: skip
_MODEL_START = re.compile(
    r"^(?:" + "|".join(re.escape(f) for f in MODEL_FAMILIES) + r")(?=$|[-_.:0-9])", re.I
)
#: Record fields that name the model / the agent strategy, when a writer keeps them (TAU-V1-NAME).
_MODEL_FIELDS = ("model", "agent_model", "model_name")
_STRATEGY_FIELDS = ("agent_strategy", "strategy")

#: Tools only one tau-bench v1 domain has (sierra-research/tau-bench, tau_bench/envs/*/tools/),
#: for a v1 file whose name and system prompt do not say the domain (TAU-V1-DOMAIN).
DOMAIN_TOOLS: Mapping[str, frozenset[str]] = {
    "airline": frozenset(
        {
            "book_reservation", "cancel_reservation", "get_reservation_details", "list_all_airports",
            "search_direct_flight", "search_onestop_flight", "send_certificate",
            "update_reservation_baggages", "update_reservation_flights", "update_reservation_passengers",
        }
    ),
    "retail": frozenset(
        {
            "cancel_pending_order", "exchange_delivered_order_items", "find_user_id_by_email",
            "find_user_id_by_name_zip", "get_order_details", "get_product_details", "list_all_product_types",
            "modify_pending_order_address", "modify_pending_order_items", "modify_pending_order_payment",
            "modify_user_address", "return_delivered_order_items",
        }
    ),
}  # fmt: skip

# --- calls written as text (TAU-TEXT-CALL) -------------------------------------------------------------
_NAME_KEYS = ("name", "action", "tool", "tool_name", "function")
_ARGUMENT_KEYS = ("arguments", "action_input", "parameters", "args", "tool_input", "input", "kwargs")
_WRAPPER_KEYS = ("function_call", "tool_call", "tool_calls", "function", "call", "tool")
_TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,127}$")
#: Only this much of a reply is searched for calls written as text, and this many ``{`` tried.
_TEXT_CALL_SCAN = 100_000
_TEXT_CALL_TRIES = 500

# --- v1 tool messages (TAU-EXEC) -----------------------------------------------------------------------
#: A custom v1 agent (the "assertions-agent" of avaljotsingh/tau-bench) records an environment
#: error as the comment ``# var_<n> = "<observation>"``; the verdict is read from the observation.
_COMMENTED_OBSERVATION = re.compile(r'^#\s*[A-Za-z_]\w*\s*=\s*"(?P<text>.*)"\s*$', re.DOTALL)
#: Longest argument text parsed as a Python literal.
_LITERAL_LIMIT = 100_000


def _fail(where: str, what: str) -> NoReturn:
    raise InputError(where, what)


def _json(name: str, expected: str) -> Any:
    with reading(name, expected):
        text = read_stdin_document(sys.stdin) if name == "<stdin>" else read_text(name, expected)
    try:
        return parse_json_line(text)
    except ValueError as exc:
        _fail(name, f"not valid JSON: {json_fault(exc)}")
    except RecursionError:
        _fail(name, "not valid JSON: nested too deeply")


#: tau2's directory results format (TAU-DIR): ``results.json`` and one file per simulation.
RESULTS_NAME, SIMULATIONS_DIR = "results.json", "simulations"


def _directory_run(meta_path: Path, meta: Any) -> Any:
    """A dir-format run as one results object (TAU-DIR): the metadata of ``results.json`` with
    the simulations of ``simulations/*.json`` in file-name order, as tau2's ``iter_simulations``
    reads them."""
    folder = meta_path.parent / SIMULATIONS_DIR
    if not isinstance(meta, dict) or "simulations" in meta or not folder.is_dir():
        return meta
    names = sorted(p for p in folder.iterdir() if plain_name(p.name).endswith(".json") and p.is_file())
    simulations = [_json(str(p), "a tau2 simulation JSON file") for p in names]
    return {**meta, "simulations": simulations}


def load(path: str) -> tuple[str, Any]:
    """``(name, decoded JSON)`` of a results file (``-``: stdin); faults raise InputError.

    A folder holding ``results.json``, or a ``results.json`` beside a ``simulations/`` folder, is
    tau2's directory format, read as one run (TAU-DIR); a file inside ``simulations/`` is one
    simulation of such a run, not a results file.
    """
    name = "<stdin>" if path == STDIN else path
    expected = "a tau-bench results JSON file"
    if path != STDIN and Path(path).is_dir():
        meta_path = Path(path) / RESULTS_NAME
        if not meta_path.is_file():
            _fail(name, f"a folder without {RESULTS_NAME}: not a tau2 directory-format run")
        return name, _directory_run(meta_path, _json(str(meta_path), expected))
    data = _json(name, expected)
    if path == STDIN:
        return name, data
    where = Path(path)
    if plain_name(where.name) == RESULTS_NAME:
        return name, _directory_run(where, data)
    if where.parent.name == SIMULATIONS_DIR and (where.parent.parent / RESULTS_NAME).is_file():
        _fail(
            name,
            "one simulation of a tau2 directory-format run (results.json + simulations/): "
            f"give the run's folder ({where.parent.parent}) or its {RESULTS_NAME}",
        )
    return name, data


# ================================================================================ trajectories


@attrs.define
class Builder:
    """Collects the exchanges of one trajectory while its messages are read in order (TAU-PAIR).

    A tool message with a call id answers the earliest still unanswered call with that id: ids
    may repeat within a trajectory (the v1 fixture reuses OpenAI call ids), never while open. A
    v1 tool message without an id answers the one call still waiting for an answer; with none or
    several waiting the recording is ambiguous and refused.
    """

    calls: list[ToolCall] = attrs.field(factory=list)
    contexts: list[tuple[str, ...]] = attrs.field(factory=list)
    answers: dict[int, tuple[bool, str]] = attrs.field(factory=dict)
    pending: list[int] = attrs.field(factory=list)
    open_other: dict[str, int] = attrs.field(factory=dict)
    buffer: list[str] = attrs.field(factory=list)
    #: Calls written as text in replies (TAU-TEXT-CALL): ``(where, tool name)``.
    text_calls: list[tuple[str, str]] = attrs.field(factory=list)
    #: tau2 tool messages without an ``error`` field, judged by their text (TAU-EXEC-NOFLAG).
    unflagged: int = 0
    #: User turns so far, and the 1-based turn of each call (TURN-MAP: calls before the first user
    #: turn belong to turn 1).
    turns: int = 0
    call_turns: list[int] = attrs.field(factory=list)
    #: The 1-based index of each call's message in the message list (OUT-SOURCE: v1 ``traj``, where
    #: the system message is 1, as AgentRx numbers steps; tau2 ``messages``).
    call_messages: list[int] = attrs.field(factory=list)

    def user_turn(self, text: object) -> None:
        """A user message: it starts a turn when it says something (TURN-MAP), and the agent sees it."""
        if isinstance(text, str) and text.strip():
            self.turns += 1
        self.see(text)

    def see(self, text: object) -> None:
        """The agent sees ``text`` (a user message or an observation of one of its calls)."""
        if isinstance(text, str) and text:
            self.buffer.append(text)

    def add_call(self, call: ToolCall, message: int = 0) -> None:
        """Append a trajectory call (from the 1-based ``message`` of the list); it takes the texts
        seen since the previous call as context."""
        self.call_messages.append(message)
        self.pending.append(len(self.calls))
        self.calls.append(call)
        self.call_turns.append(max(self.turns, 1))
        self.contexts.append(tuple(self.buffer))
        self.buffer = []

    def add_other_call(self, call_id: str) -> None:
        """A call outside the trajectory (tau2: requested by the user), answered but not scored."""
        self.open_other[call_id] = self.open_other.get(call_id, 0) + 1

    def answer(self, call_id: str | None, accepted: bool, content: str, where: str) -> None:
        """Pair a tool message with its call (TAU-PAIR) and record the verdict."""
        if call_id is None:
            if len(self.pending) != 1:
                waiting = (
                    "no call is waiting for an answer"
                    if not self.pending
                    else f"{len(self.pending)} calls are waiting for an answer "
                    f"(calls {', '.join(str(i + 1) for i in self.pending)}): cannot tell which it answers"
                )
                _fail(where, f"tool message without a call id answers no call by position: {waiting}")
            index = self.pending.pop()
        else:
            index = next((i for i in self.pending if self.calls[i].call_id == call_id), -1)
            if index < 0:
                if self.open_other.get(call_id, 0) > 0:
                    self.open_other[call_id] -= 1
                    return
                _fail(where, f"tool message answers no call: no earlier unanswered call has id {call_id!r}")
            self.pending.remove(index)
        self.answers[index] = (accepted, content)
        self.see(content)

    def exchanges(self) -> tuple[Exchange, ...]:
        out: list[Exchange] = []
        for index, (call, context) in enumerate(zip(self.calls, self.contexts, strict=True)):
            accepted, content = self.answers.get(index, (False, ""))
            out.append(Exchange(call, index in self.answers, accepted, content, context))
        return tuple(out)


def _json_like(value: object, depth: int = 0) -> bool:
    if depth > 50:
        return False
    if value is None or isinstance(value, str | int | float | bool):
        return True
    if isinstance(value, list | tuple):
        return all(_json_like(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_like(v, depth + 1) for k, v in value.items())
    return False


def parse_arguments(raw: object) -> dict[str, Any]:
    """A call's arguments (TAU-CALLS): a JSON object, or a JSON object string, or else a Python
    dict literal string (``str(kwargs)``, as some v1 forks record it) read with
    ``ast.literal_eval`` and kept only if it is JSON-like data. Anything else: no arguments.
    """
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str):
        return {}
    try:
        value: object = json.loads(raw)
    except RecursionError:
        value = None
    except ValueError:
        value = None
        if len(raw) <= _LITERAL_LIMIT:
            try:
                value = ast.literal_eval(raw.strip())
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                value = None
    if isinstance(value, dict) and _json_like(value):
        return {k: list(v) if isinstance(v, tuple) else v for k, v in value.items()}
    return {}


def v1_verdict(content: str) -> tuple[bool, str]:
    """``(accepted, observation)`` of a v1 tool message (TAU-EXEC).

    Rejected iff the observation starts with ``Error`` or ``Unknown action``; a commented
    assignment ``# var_<n> = "<text>"`` (a fork's record of an environment error) is judged
    on ``<text>``, which is then the observation.
    """
    wrapped = _COMMENTED_OBSERVATION.match(content)
    text = wrapped["text"] if wrapped else content
    return not (text.startswith("Error") or text.startswith("Unknown action")), text


def _calls_in(value: object, depth: int = 0) -> list[str]:
    if depth > 3:
        return []
    if isinstance(value, list):
        return [name for item in value for name in _calls_in(item, depth + 1)]
    if not isinstance(value, dict):
        return []
    name = next(
        (value[k] for k in _NAME_KEYS if isinstance(value.get(k), str) and _TOOL_NAME.match(value[k])), None
    )
    if name is not None and any(k in value for k in _ARGUMENT_KEYS):
        return [name]
    return [
        n
        for k in _WRAPPER_KEYS
        if isinstance(value.get(k), dict | list)
        for n in _calls_in(value[k], depth + 1)
    ]


def _without_comments(text: str) -> str:
    """``text`` without ``//`` and ``/* */`` comments outside JSON strings (models write JSONC)."""
    out: list[str] = []
    i, n, in_string = 0, len(text), False
    while i < n:
        c = text[i]
        if in_string:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
            out.append(c)
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)


def text_calls(content: object) -> list[str]:
    """Tool names of the calls a reply writes as JSON text instead of tool calls (TAU-TEXT-CALL).

    A call is a JSON object in the text (whole, fenced or embedded) with a tool name (``name``,
    ``action``, ``tool``, ``tool_name`` or ``function``: an identifier) beside its arguments
    (``arguments``, ``action_input``, ``parameters``, ``args``, ``tool_input``, ``input`` or
    ``kwargs``), possibly inside ``function_call``, ``tool_call(s)``, ``function``, ``call`` or
    ``tool``. The text is decoded as JSON only, after removing ``//`` and ``/* */`` comments.
    """
    if not isinstance(content, str) or "{" not in content:
        return []
    text = _without_comments(content[:_TEXT_CALL_SCAN])
    decoder = json.JSONDecoder()
    names: list[str] = []
    start = text.find("{")
    tries = 0
    while start >= 0 and tries < _TEXT_CALL_TRIES:
        tries += 1
        try:
            value, end = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            start = text.find("{", start + 1)
            continue
        names.extend(_calls_in(value))
        start = text.find("{", end)
    return names


def read_v1_traj(traj: Sequence[Any], where: str) -> Builder:
    """The exchanges of a v1 trajectory (TAU-CALLS, TAU-PAIR, TAU-EXEC, TAU-TEXT-CALL)."""
    builder = Builder()
    for j, raw in enumerate(traj):
        here = f"{where}: traj[{j}]"
        message = need_dict(raw, here, "a message")
        role = message.get("role")
        if role == "system":
            continue
        if role == "user":
            builder.user_turn(message.get("content"))
        elif role == "assistant":
            calls = need_list(field(message, "tool_calls") or [], here, "'tool_calls'")
            first = need_dict(calls[0], here, "'tool_calls[0]'") if calls else None
            function = None if first is None else first.get("function")
            if function is None:  # a reply to the user (v1 also turns a null function into one)
                builder.text_calls.extend((f"traj[{j}]", n) for n in text_calls(message.get("content")))
                continue
            assert first is not None
            function = need_dict(function, here, "'tool_calls[0].function'")
            name = need_str(field(function, "name"), here, "'tool_calls[0].function.name'")
            call_id = first.get("id")
            if call_id is not None:
                call_id = need_str(call_id, here, "'tool_calls[0].id'")
            builder.add_call(ToolCall(name, parse_arguments(function.get("arguments")), call_id), j + 1)
        elif role == "tool":
            call_id = message.get("tool_call_id")
            if call_id is not None:
                call_id = need_str(call_id, here, "'tool_call_id'")
            content = need_str(field(message, "content"), here, "tool message 'content'")
            accepted, observation = v1_verdict(content)
            builder.answer(call_id, accepted, observation, here)
        else:
            _fail(here, f"unknown message role {role!r} (expected system, user, assistant or tool)")
    return builder


def _tau2_tool_messages(message: Mapping[str, Any], here: str) -> list[dict[str, Any]]:
    if "tool_messages" in message:  # MultiToolMessage
        return [
            need_dict(m, here, "'tool_messages[]'")
            for m in need_list(message["tool_messages"], here, "'tool_messages'")
        ]
    return [dict(message)]


def read_tau2_messages(messages: Sequence[Any], where: str) -> Builder:
    """The exchanges of a tau2 simulation (TAU-CALLS, TAU-PAIR, TAU-EXEC, TAU-TEXT-CALL)."""
    builder = Builder()
    for j, raw in enumerate(messages):
        here = f"{where}: messages[{j}]"
        message = need_dict(raw, here, "a message")
        role = message.get("role")
        if role == "system":
            continue
        calls = need_list(field(message, "tool_calls") or [], here, "'tool_calls'")
        if role == "user":
            builder.user_turn(message.get("content"))
            for k, raw_call in enumerate(calls):
                call = need_dict(raw_call, here, f"'tool_calls[{k}]'")
                builder.add_other_call(need_str(field(call, "id"), here, f"'tool_calls[{k}].id'"))
        elif role == "assistant":
            if not calls:
                builder.text_calls.extend((f"messages[{j}]", n) for n in text_calls(message.get("content")))
            for k, raw_call in enumerate(calls):
                call = need_dict(raw_call, here, f"'tool_calls[{k}]'")
                call_id = need_str(field(call, "id"), here, f"'tool_calls[{k}].id'")
                name = need_str(field(call, "name"), here, f"'tool_calls[{k}].name'")
                arguments = need_dict(field(call, "arguments"), here, f"'tool_calls[{k}].arguments'")
                if call.get("requestor", "assistant") == "user":
                    builder.add_other_call(call_id)
                else:
                    builder.add_call(ToolCall(name, arguments, call_id), j + 1)
        elif role == "tool":
            for tool in _tau2_tool_messages(message, here):
                call_id = need_str(field(tool, "id"), here, "tool message 'id'")
                content = tool.get("content")
                content = "" if content is None else need_str(content, here, "tool message 'content'")
                if "error" in tool:
                    error = tool["error"]
                    if not isinstance(error, bool):
                        _fail(here, f"tool message 'error' must be true or false, got {error!r}")
                else:  # TAU-EXEC-NOFLAG: a writer that drops the flag; judged by the text
                    error = content.startswith("Error")
                    builder.unflagged += 1
                builder.answer(call_id, not error, content, here)
        else:
            _fail(here, f"unknown message role {role!r} (expected system, user, assistant or tool)")
    return builder


def no_tool_reason(gold: int, what: str, written: Sequence[tuple[str, str]]) -> str:
    """Why a rollout without a call is not executable (TAU-NOTOOL, TAU-TEXT-CALL)."""
    reason = (
        f"terminal no-tool action: the rollout made no tool call, which the task does not allow "
        f"(it has {gold} gold {what}(s))"
    )
    if written:
        where, name = written[0]
        more = f" (and {len(written) - 1} more)" if len(written) > 1 else ""
        reason += (
            f"; the reply at {where} holds a call written as text ({name!r}){more}, "
            "not a tool call, so it was never executed"
        )
    return reason


# ================================================================================ gold


def gold_count_v1(task: Mapping[str, Any], where: str) -> int:
    """v1 gold actions other than ``respond`` (TAU-NOTOOL)."""
    actions = need_list(field(task, "actions"), where, "'info.task.actions'")
    count = 0
    for j, action in enumerate(actions):
        name = need_str(
            need_dict(action, where, f"'info.task.actions[{j}]'").get("name"), where, "action 'name'"
        )
        count += name != "respond"
    return count


def gold_count_tau2(task: Mapping[str, Any], where: str) -> int:
    """tau2 gold actions not requested by the user (TAU-NOTOOL)."""
    criteria = task.get("evaluation_criteria")
    if criteria is None:
        return 0
    criteria = need_dict(criteria, where, "'evaluation_criteria'")
    actions = criteria.get("actions")
    if actions is None:
        return 0
    count = 0
    for j, action in enumerate(need_list(actions, where, "'evaluation_criteria.actions'")):
        action = need_dict(action, where, f"'evaluation_criteria.actions[{j}]'")
        count += action.get("requestor", "assistant") != "user"
    return count


# ================================================================================ names (TAU-DATASET)


@attrs.frozen(slots=True)
class Naming:
    """What a v1 file name says: model, domain, strategy (each possibly unknown).

    ``guess`` is None when the split of ``<strategy>-<model>`` is certain, else why it is a
    guess (TAU-V1-NAME).
    """

    model: str | None = None
    domain: str | None = None
    strategy: str | None = None
    guess: str | None = None


def split_strategy_model(
    head: str, model: str | None = None, strategy: str | None = None
) -> tuple[str | None, str, str | None]:
    """``(strategy, model, guess)`` of a checkpoint name's ``<strategy>-<model>`` part (TAU-V1-NAME).

    A known model (``model``) at the end or a known strategy at the start splits it exactly.
    Otherwise the model starts at the hyphen after which a model family name begins
    (:data:`MODEL_FAMILIES`: ``gpt``, ``claude``, ...); with exactly one such hyphen the split is
    certain. With several, the first is taken; with none, the model is the part after the last
    hyphen: both are guesses, and ``guess`` says why.
    """
    if model and head.endswith("-" + model) and len(head) > len(model) + 1:
        return head[: -len(model) - 1], model, None
    if strategy and head.startswith(strategy + "-") and len(head) > len(strategy) + 1:
        return strategy, head[len(strategy) + 1 :], None
    cuts = [
        i
        for i, c in enumerate(head)
        if c == "-" and 0 < i < len(head) - 1 and _MODEL_START.match(head[i + 1 :])
    ]
    if len(cuts) == 1:
        return head[: cuts[0]], head[cuts[0] + 1 :], None
    if cuts:
        return head[: cuts[0]], head[cuts[0] + 1 :], "several parts of the name could start the model name"
    if "-" not in head.strip("-"):
        return None, head, "no strategy before the model name"
    cut = head.rindex("-")
    return (
        head[:cut],
        head[cut + 1 :],
        "no known model family in the name; the model is taken after the last '-'",
    )


def v1_naming(path: str, model: str | None = None, strategy: str | None = None) -> Naming:
    """Model, domain and strategy read from a v1 file name (TAU-DATASET, TAU-V1-NAME).

    ``model`` / ``strategy``, when known from elsewhere (options or the records), anchor the split.
    """
    stem = plain_name(Path(path).name).removesuffix(".json")  # INPUT-COMPRESSED: x.json.gz
    checkpoint = _V1_CHECKPOINT.match(stem)
    if checkpoint:
        found_strategy, found_model, guess = split_strategy_model(checkpoint["head"], model, strategy)
        return Naming(model=found_model, strategy=found_strategy, guess=guess)
    pair = _V1_MODEL_DOMAIN.match(stem)
    if pair:
        return Naming(model=pair["model"], domain=pair["domain"])
    return Naming()


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


def tools_domain(names: Sequence[str]) -> str | None:
    """The one v1 domain whose own tools include every name of ``names`` that is some domain's own
    tool (TAU-V1-DOMAIN); None when no name is, or names of two domains occur."""
    domains = {d for name in names for d, tools in DOMAIN_TOOLS.items() if name in tools}
    return next(iter(domains)) if len(domains) == 1 else None


def _record_field(records: Sequence[Any], fields: Sequence[str], name: str, what: str) -> str | None:
    """The one value a string field of ``fields`` has in the records (or their ``info``), if any."""
    values: dict[str, str] = {}
    for index, record in enumerate(records):
        if not isinstance(record, dict):
            continue
        for holder in (record, record.get("info")):
            if isinstance(holder, dict):
                for field in fields:
                    value = holder.get(field)
                    if isinstance(value, str) and value:
                        values.setdefault(value, f"{name}: record {index}")
    if len(values) > 1:
        first, second = sorted(values)[:2]
        _fail(values[second], f"the records name different {what}s ({first!r}, {second!r}); pass --{what}")
    return next(iter(values), None)


# ================================================================================ reading


@attrs.frozen(slots=True)
class ReadRollout:
    """A rollout with what the reader found for it (used by the audit)."""

    where: str
    rollout: Rollout
    task: TauTask
    calls: tuple[ToolCall, ...]
    crashed: bool
    text_calls: tuple[tuple[str, str], ...]


@attrs.frozen(slots=True)
class FileRead:
    """One file's rollouts and its warnings (each one stderr line without the ``prefixexec:`` part).

    ``harness_errors`` lists the file's harness errors (TAU-HARNESS), counted or left out; the
    left-out ones are not among ``rollouts``.
    """

    rollouts: tuple[ReadRollout, ...]
    warnings: tuple[str, ...] = ()
    harness_errors: tuple[harness.HarnessError, ...] = ()


def _rollout(
    fmt: str,
    domain: str,
    model: str,
    method: str,
    task_id_: str,
    trial_: int,
    task: TauTask,
    calls: Sequence[ToolCall],
    success: bool,
    written: int,
    turns: tuple[Sequence[int], int] = ((), 0),
    messages: Sequence[int] = (),
) -> Rollout:
    """Replay one rollout's calls through :data:`TAU` (no call: the terminal no-tool action).

    ``meta`` reports what the recording holds beyond the outcome: the number of calls, of
    calls the environment rejected (anywhere in the trajectory), of unanswered calls and of calls
    written as text; the verdict on every call (OUT-REJECTIONS, computed when asked) and the message
    each call comes from (OUT-SOURCE).
    """
    outcome = replay(TAU, task, calls)
    meta: dict[str, object] = {
        "format": fmt,
        "calls": len(task.exchanges),
        "rejected_calls": sum(1 for e in task.exchanges if e.answered and not e.accepted),
        "unanswered_calls": sum(1 for e in task.exchanges if not e.answered),
        "text_calls": written,
        "action_turns": list(turns[0]),  # TURN-MAP
        "turns": turns[1],
        VERDICTS_KEY: Verdicts(TAU, task, calls, past_call, outcome),
    }
    if messages:
        meta[SOURCES_KEY] = [{"message": m} for m in messages]
    key = ConditionKey(DATASET_PREFIX + domain, model, method)
    return Rollout(key, task_id_, trial_, outcome, success, meta)


def _read_v1(name: str, data: list[Any], options: AdapterOptions, rules: LabelRules) -> FileRead:
    content_model = _record_field(data, _MODEL_FIELDS, name, "model")
    content_strategy = _record_field(data, _STRATEGY_FIELDS, name, "method")
    known_model = options.model or content_model
    known_strategy = options.method or content_strategy
    naming = v1_naming(name, known_model, known_strategy) if name != "<stdin>" else Naming()
    model = known_model or naming.model
    method = known_strategy or naming.strategy or DEFAULT_METHOD_V1
    warnings: list[str] = []
    if naming.guess and (not known_model or not known_strategy):
        warnings.append(
            f"{name}: the file name does not say where the strategy ends and the model begins "
            f"({naming.guess}): read as method {method!r}, model {model!r} (TAU-V1-NAME); "
            "pass --model and --method to set them"
        )
    parsed: list[tuple[str, str, int, Builder | None, str, int, bool]] = []
    domains: dict[str, str] = {}
    tool_names: list[str] = []
    for index, raw in enumerate(data):
        record = need_dict(raw, f"{name}: record {index}", "a v1 result")
        tid = task_id(field(record, "task_id"), f"{name}: record {index}")
        number = trial(record.get("trial"), f"{name}: record {index}")
        where = f"{name}: record {index} (task {tid}, trial {number})"
        reward = need_number(field(record, "reward"), where, "'reward'")
        info = need_dict(field(record, "info"), where, "'info'")
        traj = need_list(field(record, "traj"), where, "'traj'")
        policy = _policy_domain(traj)
        if policy is not None:
            domains.setdefault(policy, where)
        if "error" in info and not traj:  # TAU-CRASH: a harness error (TAU-HARNESS)
            parsed.append((where, tid, number, None, crash_message(info), 0, reward == 1.0))
            continue
        task = need_dict(field(info, "task"), where, "'info.task'")
        gold = gold_count_v1(task, where)
        tool_names.extend(a["name"] for a in task["actions"])
        builder = read_v1_traj(traj, where)
        tool_names.extend(e.call.name for e in builder.exchanges() if e.accepted)
        if not builder.calls and any(
            isinstance(m, dict)
            and m.get("role") == "user"
            and isinstance(m.get("content"), str)
            and m["content"].startswith("API output:")
            for m in traj
        ):
            _fail(where, "tool calls are written in the text (act/react strategy); only tool_calls are read")
        parsed.append(
            (
                where,
                tid,
                number,
                builder,
                no_tool_reason(gold, "action", builder.text_calls),
                gold,
                reward == 1.0,
            )
        )
    if not model and name == "<stdin>":  # after every record was checked: a real defect comes first
        _fail(name, "cannot tell the model from the records (stdin has no file name); pass --model")
    if not model:  # TAU-V1-MODEL-STEM: the file's stem stands for the model, said in one line
        model = plain_name(Path(name).name).removesuffix(".json")
        warnings.append(
            f"{name}: neither the records nor the file name (<model>-<domain>.json) name the model: "
            f"read as model {model!r}, the file's stem (TAU-V1-MODEL-STEM); pass --model to set it"
        )
    domain = naming.domain
    for policy, where in domains.items():
        if domain is None:
            domain = policy
        elif policy != domain:
            source = "the file name" if naming.domain else "an earlier system prompt"
            _fail(where, f"the system prompt says domain {policy!r}, {source} says {domain!r}")
    if domain is None:
        domain = tools_domain(tool_names)
    if domain is None:
        _fail(
            name,
            "cannot tell the domain: name the file <model>-<domain>.json, keep the system prompt, "
            "or record gold actions of a tau-bench domain",
        )
    prefixes = DOMAIN_ID_PREFIXES.get(domain, ())
    exclude = harness.policy(options, "taubench-v1") == "exclude"
    out: list[ReadRollout] = []
    errors: list[harness.HarnessError] = []
    for where, tid, number, built, reason, gold, success in parsed:
        turns: tuple[Sequence[int], int] = ((), 0)
        if built is None:
            task_ = TauTask((), False, reason, rules, prefixes)
            calls: tuple[ToolCall, ...] = ()
            written: tuple[tuple[str, str], ...] = ()
        else:
            task_ = TauTask(built.exchanges(), gold == 0, reason, rules, prefixes)
            calls, written = tuple(built.calls), tuple(built.text_calls)
            turns = (built.call_turns, built.turns)
        rollout = _rollout(
            "v1", domain, model, method, tid, number, task_, calls, success, len(written), turns,
            () if built is None else built.call_messages,
        )
        if built is None:
            errors.append(harness.HarnessError(where, rollout.condition, tid, number, reason, not exclude))
            if exclude:
                continue
            rollout = harness.counted_rollout(rollout, reason, 0)
        out.append(ReadRollout(where, rollout, task_, calls, built is None, written))
    return FileRead(tuple(out), tuple(warnings), tuple(errors))


def crash_message(info: Mapping[str, Any]) -> str:
    """What a crashed v1 run's ``info`` says (TAU-CRASH): where the harness crashed, the error, and
    that its trajectory was not recorded. Where comes from the traceback (HARNESS-WHERE): a crash
    during ``env.step`` happened after the agent acted, so it is never called "before any action"."""
    error = harness.shorten(str(info.get("error")), 200)
    trace = info.get("traceback")
    where = harness.traceback_summary(trace) if isinstance(trace, str) else None
    place = f"the run crashed {where}" if where else "the run crashed"
    return f"{place}: {error}; its trajectory was not recorded (traj: [])"


#: tau2's domains, to read a bare simulation list's domain from its file name (TAU-BARE-LIST).
TAU2_DOMAINS = ("airline", "retail", "telecom", "telecom-workflow", "mock", "banking_knowledge")
#: A leaderboard trajectory name: ``<agent>_<domain>_<model>_<n>trial(s).json`` (TAU-BARE-LIST).
_LEADERBOARD_NAME = re.compile(r"_(" + "|".join(map(re.escape, TAU2_DOMAINS)) + r")_(.+?)_\d+trials?$")


def _bare_naming(name: str, options: AdapterOptions) -> tuple[str, str]:
    """Domain and model of a bare list of tau2 simulations (TAU-BARE-LIST): ``--model`` or the
    leaderboard file name ``<agent>_<domain>_<model>_<n>trial(s).json``."""
    stem = Path(plain_name(Path(name).name)).stem
    match = _LEADERBOARD_NAME.search(stem)
    if match is None:
        _fail(
            name,
            "a bare list of tau2 simulations (no 'info', no 'tasks') whose file name does not say the "
            "domain (<agent>_<domain>_<model>_<n>trial(s).json)",
        )
    return match[1], options.model or match[2]


def _looks_tau2(records: Sequence[Any]) -> bool:
    """TAU-BARE-LIST: records of a JSON list that are tau2 simulations, told by their fields
    (``messages`` or ``ticks`` with ``termination_reason``), not v1 results (``traj``)."""
    first = records[0]
    return (
        isinstance(first, dict)
        and "traj" not in first
        and "termination_reason" in first
        and ("messages" in first or "ticks" in first)
    )


def _read_tau2(name: str, data: dict[str, Any], options: AdapterOptions, rules: LabelRules) -> FileRead:
    bare = "info" not in data and "tasks" not in data
    gold: dict[str, int] = {}
    if bare:  # TAU-BARE-LIST: no task list, so no gold count
        domain, model = _bare_naming(name, options)
        method = options.method or DEFAULT_METHOD_TAU2
    else:
        info = need_dict(field(data, "info"), name, "'info'")
        environment = need_dict(field(info, "environment_info"), name, "'info.environment_info'")
        domain = need_str(field(environment, "domain_name"), name, "'info.environment_info.domain_name'")
        agent = need_dict(info.get("agent_info", {}), name, "'info.agent_info'")
        named = options.model or agent.get("llm")
        if not named:
            _fail(name, "'info.agent_info.llm' is empty; pass --model")
        model = need_str(named, name, "'info.agent_info.llm'")
        method = need_str(
            options.method or agent.get("implementation") or DEFAULT_METHOD_TAU2,
            name,
            "'info.agent_info.implementation'",
        )
        for index, raw in enumerate(need_list(field(data, "tasks"), name, "'tasks'")):
            here = f"{name}: tasks[{index}]"
            entry = need_dict(raw, here, "a task")
            gold[task_id(field(entry, "id"), here)] = gold_count_tau2(entry, here)
    simulations = need_list(field(data, "simulations"), name, "'simulations'")
    if not simulations:  # TAU-EMPTY
        if data.get("simulation_index"):
            _fail(
                name, "no simulations (a dir-format results.json keeps them in simulations/: not supported)"
            )
        return FileRead((), (f"{name}: no simulations, nothing read",))
    prefixes = DOMAIN_ID_PREFIXES.get(domain, ())
    exclude = harness.policy(options, "tau2") == "exclude"
    out: list[ReadRollout] = []
    errors: list[harness.HarnessError] = []
    unflagged = 0
    voice = 0
    for index, raw in enumerate(simulations):
        sim = need_dict(raw, f"{name}: simulations[{index}]", "a simulation")
        tid = task_id(field(sim, "task_id"), f"{name}: simulations[{index}]")
        number = trial(sim.get("trial"), f"{name}: simulations[{index}]")
        where = f"{name}: simulations[{index}] (task {tid!r}, trial {number})"
        if sim.get("messages") is None and sim.get("ticks") is not None:
            voice += 1  # TAU-DIR: a full-duplex voice simulation keeps ticks, no messages
            continue
        if bare:
            gold.setdefault(tid, -1)
        if tid not in gold:
            _fail(where, f"task {tid!r} is not in 'tasks'")
        termination = need_str(field(sim, "termination_reason"), where, "'termination_reason'")
        lost = termination == INFRASTRUCTURE_ERROR  # TAU-HARNESS
        if lost and exclude:
            key = ConditionKey(DATASET_PREFIX + domain, model, method)
            errors.append(harness.HarnessError(where, key, tid, number, _lost_message(sim), False))
            continue
        reward_info = sim.get("reward_info")
        if termination in STOP_REASONS:
            if reward_info is None:
                _fail(where, "'reward_info' is null: the simulation was not evaluated")
            reward = need_number(
                need_dict(reward_info, where, "'reward_info'").get("reward"), where, "'reward_info.reward'"
            )
            success = reward == 1.0
        else:
            success = False
        messages = sim.get("messages")
        if messages is None:
            messages = []
        builder = read_tau2_messages(need_list(messages, where, "'messages'"), where)
        unflagged += builder.unflagged
        if gold[tid] < 0:  # TAU-BARE-LIST: the task list is absent
            reason = "no tool call (the run has no task list: whether the task needs one is unknown)"
        else:
            reason = no_tool_reason(gold[tid], "assistant action", builder.text_calls)
        task_ = TauTask(builder.exchanges(), gold[tid] == 0, reason, rules, prefixes)
        calls, written = tuple(builder.calls), tuple(builder.text_calls)
        rollout = _rollout(
            "tau2", domain, model, method, tid, number, task_, calls, success, len(written),
            (builder.call_turns, builder.turns), builder.call_messages,
        )
        if lost:
            message = _lost_message(sim)
            errors.append(harness.HarnessError(where, rollout.condition, tid, number, message, True))
            rollout = harness.counted_rollout(rollout, message, len(calls))
        out.append(ReadRollout(where, rollout, task_, calls, False, written))
    warnings: tuple[str, ...] = (
        (
            f"{name}: {unflagged} tool message(s) carry no 'error' field: each is rejected iff its "
            "text starts with 'Error' (TAU-EXEC-NOFLAG)",
        )
        if unflagged
        else ()
    )
    if voice:
        warnings += (
            f"{name}: {voice} simulation(s) have no messages (full-duplex voice runs keep ticks only): "
            "not scored",
        )
    if bare:
        warnings += (
            f"{name}: a bare list of tau2 simulations (no 'info', no 'tasks'): domain {domain!r} and "
            f"model {model!r} read from {'--model and ' if options.model else ''}the file name, success "
            "from reward_info, no gold action count",
        )
    return FileRead(tuple(out), warnings, tuple(errors))


def _lost_message(sim: Mapping[str, Any]) -> str:
    """A tau2 simulation that ended with ``infrastructure_error`` (TAU-HARNESS), with the error text
    the simulation keeps, if any."""
    info = sim.get("info")
    detail = info.get("error") if isinstance(info, Mapping) else None
    text = f": {harness.shorten(str(detail), 200)}" if detail else ""
    return f"the simulation ended with termination_reason {INFRASTRUCTURE_ERROR}{text}"


def read_data(name: str, data: Any, options: AdapterOptions, rules: LabelRules = NO_RULES) -> FileRead:
    """The rollouts of one decoded results file (TAU-FORMAT), validated; an empty run warns (TAU-EMPTY)."""
    if isinstance(data, list):
        if not data:
            return FileRead((), (f"{name}: the result list is empty, nothing read",))
        if _looks_tau2(data):  # TAU-BARE-LIST
            return _read_tau2(name, {"simulations": data}, options, rules)
        return _read_v1(name, data, options, rules)
    if isinstance(data, dict) and "simulations" in data:
        return _read_tau2(name, data, options, rules)
    _fail(
        name,
        f"not a tau-bench results file: expected a JSON list (v1) or an object with 'simulations' "
        f"(tau2/tau^3), got {kind(data) if not isinstance(data, dict) else 'an object without simulations'}",
    )


def warn(warnings: Sequence[str]) -> None:
    """Write each warning as one ``prefixexec: warning: ...`` line on stderr."""
    for line in warnings:
        notice(f"prefixexec: warning: {line}")


def read_file(path: str, options: AdapterOptions) -> list[tuple[str, Rollout]]:
    """``(where, rollout)`` for every rollout of one results file (TAU-FORMAT), validated.

    Its warnings (TAU-V1-NAME, TAU-EMPTY) are written to stderr.
    """
    name, data = load(path)
    found = read_data(name, data, options, load_label_rules(options.label_rules, "taubench"))
    warn(found.warnings)
    harness.report("taubench", found.harness_errors)
    return [(r.where, r.rollout) for r in found.rollouts]


@attrs.define
class Pool:
    """TAU-POOL: several tau2 runs of one system (one results file per run, the same task ids) are
    pooled as trials of that system, in the order the files are given: a file whose rollouts of a
    condition repeat a (task, trial) of an earlier file has that condition's trials numbered on
    from the earlier files' largest trial + 1, and one notice line says so. Repeats within one
    file, and across tau-bench v1 files (whose trial numbers are the run's own), stay an error
    (REC-UNIQUE)."""

    seen: dict[ConditionKey, set[tuple[str, int]]] = attrs.field(factory=dict)
    top: dict[ConditionKey, int] = attrs.field(factory=dict)

    def add(self, name: str, located: Sequence[tuple[str, Rollout]]) -> list[tuple[str, Rollout]]:
        offsets: dict[ConditionKey, int] = {}
        for _, r in located:
            if r.condition not in offsets:
                known = self.seen.get(r.condition, set())
                clash = r.meta.get("format") == "tau2" and any(
                    (o.task_id, o.trial) in known for _, o in located if o.condition == r.condition
                )
                offsets[r.condition] = self.top[r.condition] + 1 if clash else 0
        out: list[tuple[str, Rollout]] = []
        for where, r in located:
            if offsets[r.condition]:
                r = attrs.evolve(r, trial=r.trial + offsets[r.condition])
            self.seen.setdefault(r.condition, set()).add((r.task_id, r.trial))
            self.top[r.condition] = max(self.top.get(r.condition, -1), r.trial)
            out.append((where, r))
        for condition, offset in offsets.items():
            if offset:
                notice(
                    f"prefixexec: notice: {name}: the task ids of {condition.dataset} / {condition.model} / "
                    f"{condition.method} repeat an earlier file's: pooled as further trials of the same "
                    f"system, numbered from {offset} (several runs in the order given, TAU-POOL; "
                    "--system-from file keeps them apart)"
                )
        return out


def own_system(name: str, located: Sequence[tuple[str, Rollout]]) -> list[tuple[str, Rollout]]:
    """TAU-SYSTEM-FILE (``--system-from file``): every rollout of the file ``name`` gets the method
    ``<method>@<name>``, so each file given is its own system (condition), never pooled with
    another file's runs (TAU-POOL)."""
    return [
        (where, attrs.evolve(r, condition=attrs.evolve(r.condition, method=f"{r.condition.method}@{name}")))
        for where, r in located
    ]


def read_all(
    paths: Sequence[str], options: AdapterOptions, each: Callable[[str, Any, FileRead], None] | None = None
) -> tuple[list[Rollout], tuple[str, ...]]:
    """Every file's rollouts and warnings; raises :class:`InputError` on the first fault (TAU-ERRORS).

    ``(dataset, model, method, task_id, trial)`` must be unique over all files; no rollout in
    any file is an error (TAU-EMPTY). ``each(name, data, found)`` sees every file as it is read.
    """
    rules = load_label_rules(options.label_rules, "taubench")
    warnings: list[str] = []
    errors: list[harness.HarnessError] = []

    located: list[tuple[str, Rollout]] = []
    pooled = Pool()
    apart = options.system_from == "file"  # TAU-SYSTEM-FILE
    given: dict[str, str] = {}
    for path in paths:
        if path != STDIN:
            resolved = str(Path(path).resolve())
            if resolved in given:
                _fail(path, f"given twice (first as {given[resolved]}): one run is read once")
            given[resolved] = path
        name, data = load(path)
        found = read_data(name, data, options, rules)
        warnings.extend(found.warnings)
        errors.extend(found.harness_errors)
        if each is not None:
            each(name, data, found)
        read = [(r.where, r.rollout) for r in found.rollouts]
        located.extend(own_system(name, read) if apart else pooled.add(name, read))
    if apart and located:
        notice(
            f"prefixexec: notice: --system-from file: each of the {len(paths)} file(s) is its own "
            f"system, its method named '<method>@<file>' (runs kept apart, not pooled; TAU-SYSTEM-FILE)"
        )
    if not located and errors:
        raise harness.none_left(", ".join(paths), len(errors))
    voice = [w for w in warnings if "have no messages" in w]
    rollouts = unique_rollouts(
        paths,
        located,
        lambda r, first: (
            f"duplicate rollout: task {r.task_id!r}, trial {r.trial} of {r.condition.dataset} / "
            f"{r.condition.model} / {r.condition.method} was first read at {first}"
        ),
        "no rollouts found"
        + (
            f" ({'; '.join(w.split(': ', 1)[-1] for w in voice)})"
            if voice
            else (" (every file is empty)" if warnings and paths else "")
        ),
    )
    harness.report("taubench", errors)
    return rollouts, tuple(warnings)


def read(paths: Sequence[str], options: AdapterOptions) -> list[Rollout]:
    """Read every results file; warnings go to stderr once everything has been read."""
    rollouts, warnings = read_all(paths, options)
    warn(warnings)
    return rollouts


__all__ = [
    "DATASET_PREFIX",
    "DEFAULT_METHOD_TAU2",
    "DEFAULT_METHOD_V1",
    "DOMAIN_TOOLS",
    "INFRASTRUCTURE_ERROR",
    "KNOWN_DOMAINS",
    "MODEL_FAMILIES",
    "STOP_REASONS",
    "Builder",
    "FileRead",
    "Naming",
    "ReadRollout",
    "crash_message",
    "gold_count_tau2",
    "gold_count_v1",
    "load",
    "no_tool_reason",
    "parse_arguments",
    "read",
    "read_all",
    "read_data",
    "read_file",
    "read_tau2_messages",
    "read_v1_traj",
    "split_strategy_model",
    "text_calls",
    "tools_domain",
    "v1_naming",
    "v1_verdict",
    "warn",
]
