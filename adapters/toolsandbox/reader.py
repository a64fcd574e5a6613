"""ToolSandbox run directories -> rollouts (spec: spec/adapters/toolsandbox.md, TSB-*).

A ToolSandbox run (apple/ToolSandbox) writes ``result_summary.json`` and, per scenario,
``trajectories/<scenario>/execution_context.json`` (the sandbox message database) and, when the
scenario was evaluated, ``conversation.json`` (OpenAI-style messages). This module reads them
(TSB-FILES, TSB-CALLS, TSB-CODE, TSB-FALLBACK, TSB-ERRORS), builds one :class:`Scenario` per
scenario and replays it with :data:`SEMANTICS` (:mod:`.semantics` holds the benchmark's rules),
and attaches Y from the similarity (TSB-SUCCESS), the condition keys (TSB-DATASET) and the
category split (TSB-CATEGORY). The recorded code of a call is parsed with :mod:`ast` only
(literal arguments), never executed.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from prefixexec.kernel import ConditionKey, Rollout, ToolCall, replay

from .. import archives, harness
from ..errors import InputError
from ..inputs import read_text
from ..labels import NO_RULES, LabelRules, load_label_rules
from ..limits import DEEP
from ..numbers import json_fault
from ..shape import optional_number, optional_str
from .semantics import INCOMPLETE_CODE, NO_TOOL_CATEGORIES, SEMANTICS, SandboxCall, Scenario, split_exception

if TYPE_CHECKING:
    from .. import AdapterOptions

DATASET = "toolsandbox"
DEFAULT_METHOD = "default"
#: Default similarity threshold for Y: every milestone met and no minefield hit (TSB-SUCCESS).
DEFAULT_THRESHOLD = 1.0
#: Name of the split dataset for a scenario without categories (TSB-CATEGORY).
NO_CATEGORY = "NO_CATEGORY"
#: Tool augmentations built on THREE_DISTRACTION_TOOLS; ToolSandbox does not count such a scenario
#: under THREE_DISTRACTION_TOOLS in its category summary, and neither does split_by_category.
SCRAMBLED_AUGMENTATIONS = frozenset(
    {
        "TOOL_NAME_SCRAMBLED",
        "TOOL_DESCRIPTION_SCRAMBLED",
        "ARG_DESCRIPTION_SCRAMBLED",
        "ARG_TYPE_SCRAMBLED",
        "ARG_NAME_SCRAMBLED",
    }
)

SUMMARY = "result_summary.json"
CONTEXT = "execution_context.json"
CONVERSATION = "conversation.json"

#: The run directory name ToolSandbox writes: agent_<agent>_user_<user>_<MM_DD_YYYY_HH_MM_SS>.
_RUN_NAME = re.compile(r"^agent_(?P<agent>.+?)_user_(?P<user>.+)_\d{2}_\d{2}_\d{4}_\d{2}_\d{2}_\d{2}$")
#: An exception line in a conversation.json tool message (which has no exception field).
_EXCEPTION_CONTENT = re.compile(r"^(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception)(?::.*)?$")
_UNKNOWN_TOOL_NAME = re.compile(r"agent_facing_tool_name=(?P<repr>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")")


# ---------------------------------------------------------------------------------------------
# Recorded code (TSB-CODE)


@attrs.frozen(slots=True)
class ParsedCode:
    """What :func:`parse_call_code` read from a recorded call: the tool and its literal arguments.

    ``problem`` says why the name or the arguments could not be read (then they are ``None``).
    """

    name: str | None
    arguments: Mapping[str, Any] | None
    problem: str | None = None


def _is_name(node: ast.AST, name: str | None = None) -> bool:
    return isinstance(node, ast.Name) and (name is None or node.id == name)


def parse_call_code(code: str) -> ParsedCode:
    """Read the tool name and arguments of a recorded call, with :mod:`ast` only.

    ToolSandbox records a call as three statements::

        call_X_parameters = {'k': 'v'}
        call_X_response = tool_name(**call_X_parameters)
        print(repr(call_X_response))

    ToolSandbox's interactive ``Cli`` agent records the typed call as one statement,
    ``print(repr(tool_name(k=v, ...)))`` (TSB-CLI): the name is the called plain name and the
    arguments its keyword arguments, each a literal.

    The code is parsed, never executed: the arguments must be a literal dict with string keys
    (read with :func:`ast.literal_eval` on the parsed node) and the call a plain name applied to
    ``**call_X_parameters``. Anything else gives ``None`` parts and a ``problem``.
    """
    try:
        tree = ast.parse(code, mode="exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return ParsedCode(None, None, f"not Python code ({type(exc).__name__})")
    body = tree.body
    if len(body) == 1:
        return _parse_typed_call(body[0])
    if not body or not all(isinstance(s, ast.Assign | ast.Expr) for s in body[:2]):
        return ParsedCode(None, None, "not the ToolSandbox call shape (parameters, response, print)")
    first, second = body[0], body[1]
    target = first.targets[0] if isinstance(first, ast.Assign) and len(first.targets) == 1 else None
    if not isinstance(first, ast.Assign) or not isinstance(target, ast.Name):
        return ParsedCode(None, None, "first statement is not 'X_parameters = {...}'")
    params_name = target.id
    if (
        isinstance(second, ast.Assign)
        and isinstance(second.value, ast.Call)
        and isinstance(second.value.func, ast.Name)
        and not second.value.args
        and len(second.value.keywords) == 1
        and second.value.keywords[0].arg is None
        and _is_name(second.value.keywords[0].value, params_name)
    ):
        name = second.value.func.id
    else:
        return ParsedCode(None, None, "second statement is not 'X_response = tool(**X_parameters)'")
    try:
        value = ast.literal_eval(first.value)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return ParsedCode(name, None, "arguments are not a literal")
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        return ParsedCode(name, None, "arguments are not a dict with string keys")
    return ParsedCode(name, value)


def _parse_typed_call(statement: ast.stmt) -> ParsedCode:
    """``print(repr(tool(k=v, ...)))``, the code of a call typed to the ``Cli`` agent (TSB-CLI)."""
    shape = "not a ToolSandbox call shape (parameters, response, print; or print(repr(tool(...))))"
    if not (isinstance(statement, ast.Expr) and _is_call_of(statement.value, "print")):
        return ParsedCode(None, None, shape)
    printed = statement.value
    assert isinstance(printed, ast.Call)
    inner = printed.args[0]
    if not _is_call_of(inner, "repr"):
        return ParsedCode(None, None, shape)
    assert isinstance(inner, ast.Call)
    call = inner.args[0]
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        return ParsedCode(None, None, "the printed value is not a call of a plain tool name")
    name = call.func.id
    if call.args or any(k.arg is None for k in call.keywords):
        return ParsedCode(name, None, "arguments are not all keyword arguments")
    arguments: dict[str, Any] = {}
    for keyword in call.keywords:
        assert keyword.arg is not None
        try:
            arguments[keyword.arg] = ast.literal_eval(keyword.value)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            return ParsedCode(name, None, "arguments are not a literal")
    return ParsedCode(name, arguments)


def _is_call_of(node: ast.expr, function: str) -> bool:
    """``node`` is ``function(x)``: one positional argument, no keywords."""
    return (
        isinstance(node, ast.Call)
        and _is_name(node.func, function)
        and len(node.args) == 1
        and not node.keywords
    )


# ---------------------------------------------------------------------------------------------
# Reading a run directory


@attrs.frozen(slots=True)
class SummaryEntry:
    """One validated entry of ``per_scenario_results``."""

    where: str
    name: str
    categories: tuple[str, ...]
    similarity: float
    milestone_similarity: float | None
    minefield_similarity: float | None
    exception_type: str | None
    traceback: str | None
    turn_count: int | None


def _load_json(path: Path, what: str) -> Any:
    if not path.exists():
        raise InputError(str(path), f"no such file ({what})")
    # HOSTILE-DEVICE, HOSTILE-LOOP, HOSTILE-READ: the checks of every input, also the files inside
    # a run; a gzip or zstd file is read decompressed (INPUT-COMPRESSED).
    text = read_text(str(path), what)
    try:
        return json.loads(text)
    except ValueError as exc:
        raise InputError(str(path), f"not valid JSON: {json_fault(exc)}") from None
    except RecursionError:
        raise InputError(str(path), f"not valid JSON: {DEEP}") from None


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def read_summary(path: Path) -> list[SummaryEntry]:
    """The validated ``per_scenario_results`` of a ``result_summary.json``."""
    document = _load_json(path, SUMMARY)
    if not isinstance(document, dict) or not isinstance(document.get("per_scenario_results"), list):
        raise InputError(str(path), "expected an object with a 'per_scenario_results' list")
    entries: list[SummaryEntry] = []
    seen: dict[str, str] = {}
    for index, entry in enumerate(document["per_scenario_results"]):
        where = f"{path}: per_scenario_results[{index}]"
        if not isinstance(entry, dict):
            raise InputError(where, f"expected an object, got {type(entry).__name__}")
        name = entry.get("name")
        if not isinstance(name, str) or not name or "/" in name or name in {".", ".."}:
            raise InputError(where, f"'name' must be a scenario name (a non-empty string), got {name!r}")
        where = f"{where} ({name})"
        if name in seen:
            raise InputError(where, f"scenario {name!r} appears twice (first at {seen[name]})")
        seen[name] = where
        categories = entry.get("categories", [])
        if not isinstance(categories, list) or not all(isinstance(c, str) for c in categories):
            raise InputError(where, f"'categories' must be a list of strings, got {categories!r}")
        if "similarity" not in entry:
            raise InputError(where, "missing field 'similarity'")
        similarity = entry["similarity"]
        if not _number(similarity) or not 0 <= similarity <= 1:
            raise InputError(where, f"'similarity' must be a number in [0, 1], got {similarity!r}")
        turn_count = entry.get("turn_count")
        if turn_count is not None and (isinstance(turn_count, bool) or not isinstance(turn_count, int)):
            raise InputError(where, f"'turn_count' must be an integer or null, got {turn_count!r}")
        entries.append(
            SummaryEntry(
                where=where,
                name=name,
                categories=tuple(str(c).upper() for c in categories),
                similarity=float(similarity),
                milestone_similarity=optional_number(entry, "milestone_similarity", where),
                minefield_similarity=optional_number(entry, "minefield_similarity", where),
                exception_type=optional_str(entry, "exception_type", where),
                traceback=optional_str(entry, "traceback", where),
                turn_count=turn_count,
            )
        )
    return entries


def _role(value: object, where: str, key: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(where, f"'{key}' must be a role name or null, got {value!r}")
    return value.upper()


@attrs.frozen(slots=True)
class _Pending:
    index: int
    where: str


class _CallMatcher:
    """Collects calls in order and matches replies to them by tool call id (TSB-CALLS, TSB-CLI).

    A reply answers the unanswered call with its id. An id may be reused after its call was
    answered; a reply whose id has no unanswered call, or a second call with an id that is still
    unanswered, is an input error. A call without an id (ToolSandbox's ``Cli`` agent records
    none) is answered by the next reply without an id, by position, which is unambiguous only
    while at most one such call is unanswered: a second id-less call before the first is
    answered is an input error.
    """

    def __init__(self) -> None:
        self.calls: list[SandboxCall] = []
        self.pending: dict[str, _Pending] = {}
        self.anonymous: _Pending | None = None

    def call(self, where: str, call_id: object, parsed: ParsedCode, fallback_name: object) -> None:
        if call_id is not None and (not isinstance(call_id, str) or not call_id):
            raise InputError(where, f"a tool call id must be a non-empty string or null, got {call_id!r}")
        name = parsed.name
        if name is None:
            name = fallback_name if isinstance(fallback_name, str) and fallback_name else "<unparsed>"
        pending = _Pending(len(self.calls), where)
        if call_id is None:
            if self.anonymous is not None:
                raise InputError(
                    where,
                    f"a second tool call without an id while the one at {self.anonymous.where} is "
                    "unanswered: replies without ids cannot be paired by position",
                )
            self.anonymous = pending
        elif call_id in self.pending:
            raise InputError(
                where,
                f"tool call id {call_id!r} is reused before its call ({self.pending[call_id].where}) "
                "was answered",
            )
        else:
            self.pending[call_id] = pending
        action = ToolCall(name, parsed.arguments or {}, call_id)
        self.calls.append(SandboxCall(action, answered=False, problem=parsed.problem))

    def reply(self, where: str, call_id: object, exception: str | None, content: str | None) -> None:
        if call_id is None:
            if self.anonymous is None:
                raise InputError(where, "reply without a tool call id, and no id-less call is unanswered")
            index = self.anonymous.index
            self.anonymous = None
        elif isinstance(call_id, str) and call_id in self.pending:
            index = self.pending.pop(call_id).index
        else:
            raise InputError(where, f"reply to tool call id {call_id!r}, which has no unanswered call")
        self.calls[index] = attrs.evolve(self.calls[index], answered=True, exception=exception, reply=content)


def calls_from_context(path: Path) -> list[SandboxCall]:
    """The calls of ``execution_context.json``: AGENT -> EXECUTION_ENVIRONMENT rows in order."""
    document = _load_json(path, CONTEXT)
    dbs = document.get("_dbs") if isinstance(document, dict) else None
    if not isinstance(dbs, dict):
        raise InputError(str(path), "expected an object with a '_dbs' object")
    keys = [k for k in dbs if isinstance(k, str) and k.upper() == "SANDBOX"]
    if len(keys) != 1 or not isinstance(dbs[keys[0]], list):
        raise InputError(f"{path}: _dbs", "expected exactly one 'SANDBOX' database (a list of rows)")
    matcher = _CallMatcher()
    for index, row in enumerate(dbs[keys[0]]):
        where = f"{path}: _dbs.{keys[0]}[{index}]"
        if not isinstance(row, dict):
            raise InputError(where, f"expected a row object, got {type(row).__name__}")
        sender = _role(row.get("sender"), where, "sender")
        recipient = _role(row.get("recipient"), where, "recipient")
        if sender is None and recipient is None:
            continue  # the null "headguard" row every ToolSandbox database starts with
        visible_to = row.get("visible_to")
        if isinstance(visible_to, list) and [str(v).upper() for v in visible_to] == ["USER"]:
            continue  # user-simulator few-shot rows, omitted by ToolSandbox's own conversation export
        content = row.get("content")
        if sender == "AGENT" and recipient == "EXECUTION_ENVIRONMENT":
            if not isinstance(content, str):
                raise InputError(
                    where, f"a tool call row needs its code as 'content' (a string), got {content!r}"
                )
            matcher.call(
                where,
                row.get("openai_tool_call_id"),
                parse_call_code(content),
                row.get("openai_function_name"),
            )
        elif sender == "EXECUTION_ENVIRONMENT" and recipient == "AGENT":
            exception = row.get("tool_call_exception")
            if exception is not None and not isinstance(exception, str):
                raise InputError(where, f"'tool_call_exception' must be a string or null, got {exception!r}")
            matcher.reply(
                where,
                row.get("openai_tool_call_id"),
                exception,
                content if isinstance(content, str) else None,
            )
    return matcher.calls


def _content_text(content: object) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict)]
        return "\n".join(p for p in parts if isinstance(p, str))
    return None


def conversation_exception(content: str) -> str | None:
    """The exception a conversation.json tool message reports, or ``None`` (TSB-FALLBACK).

    conversation.json keeps no exception field: the reply content is the call's stdout followed by
    the last line of its stderr, and a failing call prints nothing before raising. So a reply is a
    failure iff it is the incomplete-code message, or its last line has the form
    ``[module.]NameError: message`` / ``...Exception: message`` (a successful reply is a ``repr``,
    which never has that form).
    """
    if content.startswith(INCOMPLETE_CODE):
        return content
    lines = [line for line in content.strip().split("\n") if line.strip()]
    if lines and _EXCEPTION_CONTENT.match(lines[-1].strip()):
        return lines[-1].strip()
    return None


def calls_from_conversation(path: Path) -> list[SandboxCall]:
    """The calls of ``conversation.json`` (used only when execution_context.json is missing)."""
    document = _load_json(path, CONVERSATION)
    if not isinstance(document, list):
        raise InputError(str(path), "expected a list of messages")
    matcher = _CallMatcher()
    for index, message in enumerate(document):
        where = f"{path}: [{index}]"
        if not isinstance(message, dict):
            raise InputError(where, f"expected a message object, got {type(message).__name__}")
        role = message.get("role")
        if role == "assistant" and message.get("tool_calls") is not None:
            tool_calls = message["tool_calls"]
            if not isinstance(tool_calls, list):
                raise InputError(where, "'tool_calls' must be a list")
            for n, call in enumerate(tool_calls):
                call_where = f"{where}.tool_calls[{n}]"
                function = call.get("function") if isinstance(call, dict) else None
                if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                    raise InputError(call_where, "expected {'id', 'function': {'name', 'arguments'}}")
                parsed = _parse_json_arguments(function.get("arguments"), function["name"])
                matcher.call(call_where, call.get("id"), parsed, function["name"])
        elif role == "tool":
            text = _content_text(message.get("content"))
            if text is None:
                raise InputError(where, "a tool message needs a text 'content'")
            matcher.reply(where, message.get("tool_call_id"), conversation_exception(text), text)
    return matcher.calls


def _parse_json_arguments(arguments: object, name: str) -> ParsedCode:
    if isinstance(arguments, dict):
        return ParsedCode(name, arguments)
    if not isinstance(arguments, str):
        return ParsedCode(name, None, "arguments are not a JSON string")
    try:
        value = json.loads(arguments)
    except ValueError:
        return ParsedCode(name, None, "arguments are not valid JSON")
    if not isinstance(value, dict):
        return ParsedCode(name, None, "arguments are not a JSON object")
    return ParsedCode(name, value)


def unknown_tool_name(entry: SummaryEntry) -> str:
    """The hallucinated tool name of a KeyError abort, read from its traceback (TSB-ABORT)."""
    text = entry.traceback or ""
    match = _UNKNOWN_TOOL_NAME.search(text)
    if match is not None:
        try:
            value = ast.literal_eval(match.group("repr"))
        except (ValueError, SyntaxError):
            value = None
        if isinstance(value, str):
            return value
    exc_type, message = split_exception(text)
    if exc_type.rsplit(".", 1)[-1] == "KeyError" and message:
        try:
            value = ast.literal_eval(message.strip())
        except (ValueError, SyntaxError, RecursionError, MemoryError):
            value = None
        if isinstance(value, str):
            return value
    return "<unknown tool>"


def model_from_run(run: Path) -> str:
    """The agent named in a run directory ``agent_<agent>_user_<user>_<timestamp>``, else its name.

    ToolSandbox puts the agent's model name into the directory name as it is, so a model name
    with a ``/`` (``NousResearch/Hermes-2-Pro-Mistral-7B``) makes the run one level deeper,
    ``agent_NousResearch/Hermes-2-Pro-Mistral-7B_user_..._<timestamp>``: then the parent's name
    and the directory's name are read together (TSB-DATASET).
    """
    match = _RUN_NAME.match(run.name)
    if match is not None:
        return match.group("agent")
    if run.parent.name.startswith("agent_") and "_user_" not in run.parent.name:
        match = _RUN_NAME.match(f"{run.parent.name}/{run.name}")
        if match is not None:
            return match.group("agent")
    return run.name


@attrs.frozen(slots=True)
class ScenarioRun:
    """One scenario of a run: its summary entry and recorded calls, ready for replay."""

    entry: SummaryEntry
    scenario: Scenario
    source: str


def read_scenarios(run: Path, rules: LabelRules = NO_RULES) -> Iterator[ScenarioRun]:
    """Every scenario of a run directory, validated, with its calls (TSB-FILES).

    ``rules`` are the user's label families (LABEL-RULES), carried by each scenario.
    """
    summary = run / SUMMARY
    for entry in read_summary(summary):
        trajectory = run / "trajectories" / entry.name
        if (trajectory / CONTEXT).is_file():
            source = CONTEXT
            calls = calls_from_context(trajectory / CONTEXT)
        elif (trajectory / CONVERSATION).is_file():
            source = CONVERSATION
            calls = calls_from_conversation(trajectory / CONVERSATION)
        else:
            raise InputError(entry.where, f"no {CONTEXT} or {CONVERSATION} in {trajectory}")
        if entry.exception_type == "KeyError":
            action = ToolCall(unknown_tool_name(entry), {}, None)
            calls.append(SandboxCall(action, answered=False, aborted=True))
        no_tool = bool(NO_TOOL_CATEGORIES.intersection(entry.categories))
        yield ScenarioRun(entry, Scenario(entry.name, tuple(calls), no_tool, rules), source)


def run_directory(path: str) -> Path:
    candidate = Path(path)
    if candidate.is_file() and candidate.name == SUMMARY:
        return candidate.parent
    if not candidate.exists():
        raise InputError(path, "no such run directory")
    if not candidate.is_dir():
        raise InputError(path, f"expected a ToolSandbox run directory (or its {SUMMARY})")
    if not (candidate / SUMMARY).is_file():
        raise InputError(path, f"not a ToolSandbox run directory: no {SUMMARY}")
    return candidate


def similarity_threshold(options_threshold: float | None) -> float:
    threshold = DEFAULT_THRESHOLD if options_threshold is None else options_threshold
    if not math.isfinite(threshold) or not 0 <= threshold <= 1:
        raise InputError(
            "--threshold", f"the ToolSandbox similarity threshold must be in [0, 1]: {threshold}"
        )
    return threshold


def to_rollout(run: ScenarioRun, key: ConditionKey, trial: int, threshold: float, directory: Path) -> Rollout:
    """Replay one scenario through the kernel and attach Y and the continuous scores (TSB-SUCCESS)."""
    scenario = run.scenario
    outcome = replay(SEMANTICS, scenario, [c.action for c in scenario.calls])
    entry = run.entry
    meta: dict[str, object] = {
        "similarity": entry.similarity,
        "milestone_similarity": entry.milestone_similarity,
        "minefield_similarity": entry.minefield_similarity,
        "categories": list(entry.categories),
        "exception_type": entry.exception_type,
        "turn_count": entry.turn_count,
        "threshold": threshold,
        "run": str(directory),
        "calls_from": run.source,
        # OUT-ROLLOUTS: the file the scenario's calls were read from.
        "source": str(directory / "trajectories" / entry.name / run.source),
    }
    unparsed = [{"id": c.action.call_id, "problem": c.problem} for c in scenario.calls if c.problem]
    if unparsed:
        meta["unparsed_calls"] = unparsed
    return Rollout(key, entry.name, trial, outcome, entry.similarity >= threshold, meta)


def read(paths: Sequence[str], options: AdapterOptions) -> list[Rollout]:
    """Read ToolSandbox run directories into rollouts (dataset ``toolsandbox``).

    ``options`` is an :class:`~prefixexec.adapters.AdapterOptions`: ``model`` (default: the agent
    named in the run directory), ``method`` (default ``"default"``), ``threshold`` (default 1.0),
    ``by`` (``"category"``: :func:`split_by_category`, the ``--by category`` option) and
    ``label_rules`` (a ``--label-rules`` TOML file; its ``[[toolsandbox]]`` rules, LABEL-RULES).
    A scenario that appears in several runs of the same model and method is counted as trials
    0, 1, ... in the order the runs are given (TSB-DATASET).
    """
    threshold = similarity_threshold(options.threshold)
    rules = load_label_rules(options.label_rules, "toolsandbox")
    exclude = harness.policy(options, "toolsandbox") == "exclude"
    trials: dict[tuple[ConditionKey, str], int] = {}
    rollouts: list[Rollout] = []
    lost: list[Rollout] = []
    for path in paths:
        if not archives.is_archive(path):
            _read_run(run_directory(path), options, rules, threshold, exclude, trials, rollouts, lost)
            continue
        # A run folder as a tar archive (INPUT-COMPRESSED, HOSTILE-TAR): read from a temporary
        # copy, every place shown in the archive.
        got: list[Rollout] = []
        gone: list[Rollout] = []
        with archives.extracted(path, "a ToolSandbox run archive") as root:
            try:
                directory = run_directory(archives.run_folder(root, SUMMARY))
                _read_run(directory, options, rules, threshold, exclude, trials, got, gone)
            except InputError as exc:
                where, what = (archives.shown(s, root, path) for s in (exc.where, exc.what))
                raise InputError(where, what) from None
            for found, into in ((got, rollouts), (gone, lost)):
                into += [attrs.evolve(r, meta=_shown_meta(r.meta, root, path)) for r in found]
    if options.by == "category":
        rollouts, lost = split_by_category(rollouts), split_by_category(lost)
    errors = [
        harness.HarnessError(
            str(r.meta["source"]), r.condition, r.task_id, r.trial, str(r.meta["harness_error"]), counted
        )
        for counted, group in ((True, rollouts), (False, lost))
        for r in group
        if "harness_error" in r.meta
    ]
    if not rollouts:
        if lost:
            raise harness.none_left(", ".join(paths), len(lost))
        raise InputError(", ".join(paths) or "<no input>", "no scenarios found")
    harness.report("toolsandbox", errors)
    return rollouts


def _shown_meta(meta: Mapping[str, object], root: str, archive: str) -> dict[str, object]:
    """A rollout's meta with the places of a temporary copy shown in the archive (HOSTILE-TAR)."""
    return {k: archives.shown(v, root, archive) if isinstance(v, str) else v for k, v in meta.items()}


def _read_run(
    directory: Path,
    options: AdapterOptions,
    rules: LabelRules,
    threshold: float,
    exclude: bool,
    trials: dict[tuple[ConditionKey, str], int],
    rollouts: list[Rollout],
    lost: list[Rollout],
) -> None:
    """The rollouts of one run directory, appended to ``rollouts`` (``lost``: harness errors
    left out), its scenarios numbered as trials after those already in ``trials`` (TSB-DATASET)."""
    key = ConditionKey(DATASET, options.model or model_from_run(directory), options.method or DEFAULT_METHOD)
    for run in read_scenarios(directory, rules):
        trial = trials.get((key, run.entry.name), 0)
        trials[(key, run.entry.name)] = trial + 1
        rollout = to_rollout(run, key, trial, threshold, directory)
        message = harness_message(run.entry)
        if message is not None:  # TSB-HARNESS
            rollout = harness.counted_rollout(rollout, message, len(run.scenario.calls))
            if exclude:
                lost.append(rollout)
                continue
        rollouts.append(rollout)


def harness_message(entry: SummaryEntry) -> str | None:
    """Why ToolSandbox itself aborted a scenario (TSB-HARNESS), or ``None`` when it did not.

    Every ``exception_type`` but the ``KeyError`` of an unknown tool (TSB-ABORT, the agent's
    doing) is the harness's: ToolSandbox caught it around the whole scenario and gave the scenario
    similarity 0 (``tool_sandbox/cli/utils.py``).
    """
    if entry.exception_type is None or entry.exception_type == "KeyError":
        return None
    trace = entry.traceback or ""
    where = harness.traceback_summary(trace)
    last = next((line.strip() for line in reversed(trace.splitlines()) if line.strip()), "")
    detail = f": {harness.shorten(last, 200)}" if last else ""
    place = f" {where}" if where else ""
    return f"ToolSandbox aborted the scenario with {entry.exception_type}{place}{detail}"


# ---------------------------------------------------------------------------------------------
# Categories (TSB-CATEGORY)


def rollout_categories(rollout: Rollout) -> tuple[str, ...]:
    """The categories a rollout is counted under by :func:`split_by_category`.

    Every category of the scenario, except THREE_DISTRACTION_TOOLS when the scenario also carries
    a scrambling augmentation (ToolSandbox's own category summary skips it there, since those
    augmentations are built on three distraction tools); ``NO_CATEGORY`` if none is left.
    """
    raw = rollout.meta.get("categories")
    if not isinstance(raw, list | tuple):
        raise InputError(
            f"{rollout.condition.dataset} {rollout.task_id!r}",
            "--by category needs ToolSandbox rollouts (their scenario categories)",
        )
    categories = [str(c) for c in raw]
    if SCRAMBLED_AUGMENTATIONS.intersection(categories):
        categories = [c for c in categories if c != "THREE_DISTRACTION_TOOLS"]
    unique = tuple(dict.fromkeys(categories))
    return unique or (NO_CATEGORY,)


def split_by_category(rollouts: Iterable[Rollout]) -> list[Rollout]:
    """One copy of each rollout per category, in dataset ``<dataset>/<CATEGORY>`` (TSB-CATEGORY).

    A scenario with several categories is counted once in each of them, as ToolSandbox's own
    category summary does; the category cohorts therefore overlap and their N do not add up to
    the whole run's. Nothing else of the rollout changes.
    """
    out: list[Rollout] = []
    for rollout in rollouts:
        for category in rollout_categories(rollout):
            key = attrs.evolve(rollout.condition, dataset=f"{rollout.condition.dataset}/{category}")
            out.append(attrs.evolve(rollout, condition=key))
    return out


__all__ = [
    "CONTEXT",
    "CONVERSATION",
    "DATASET",
    "DEFAULT_METHOD",
    "DEFAULT_THRESHOLD",
    "NO_CATEGORY",
    "SUMMARY",
    "ParsedCode",
    "ScenarioRun",
    "SummaryEntry",
    "calls_from_context",
    "calls_from_conversation",
    "conversation_exception",
    "model_from_run",
    "parse_call_code",
    "read",
    "read_scenarios",
    "read_summary",
    "rollout_categories",
    "run_directory",
    "similarity_threshold",
    "split_by_category",
    "to_rollout",
    "unknown_tool_name",
]
