"""BFCL model handlers' own decoders, mirrored without evaluation (spec: BFCL-DECODERS, BFCL-HANDLERS).

BFCL scores a result file with the ``decode_execute`` of the handler that wrote it: the API
handlers' ``convert_to_function_call`` (function-calling output) and
``default_decode_execute_prompting`` (prompting output), which :mod:`.parse` mirrors, and, for
many local and some API models, a decoder of the handler's own that reads JSON tool calls out of
the model's text (``[{"name": ..., "arguments": ...}]``, ``<tool_call>`` tags, Llama 3.1's
``{"name": ..., "parameters": ...}; ...``). Each :class:`Decoder` here mirrors one family of those
decoders, rule by rule (each rule cites the handler source it comes from, bfcl-eval 2026.3.23),
and returns the same :class:`~.parse.DecodedStep` as :mod:`.parse`: the calls BFCL's decoder hands
to its executor (``decoded``), a step it raises on (``raises``, its calls kept as schema failures
when the text is shaped as tool calls), or a reply.

Model output is parsed with :func:`json.loads` or :func:`ast.parse` only. Where BFCL's decoder
runs ``eval`` on the text (``LlamaHandler_3_1``), the text is decoded here only when its syntax
tree holds nothing but literals and names ``eval`` cannot resolve (then ``eval`` computes exactly
the literal, or raises ``NameError``); any other text is a step BFCL would evaluate as Python, kept
as a schema failure, not decoded, and counted (BFCL-DIFF).

Which decoder reads a file: ``--bfcl-decoder NAME`` if given, else the handler that BFCL's own
model map (``bfcl_eval/constants/model_config.py``, read as text) names for the result folder's
model (:func:`choose`), else BFCL's API rules (``api``).
"""

from __future__ import annotations

import ast
import builtins
import json
from collections.abc import Callable, Mapping
from functools import cache
from importlib import resources
from typing import Any

import attrs

from ..errors import InputError
from .parse import (
    MAX_STEP_CHARS,
    REPLY,
    TEXT_REPLY,
    DecodedStep,
    ParsedCall,
    StepFormatError,
    decode_function_calling,
    decode_prompting,
    decode_step,
)

#: A step BFCL's decoder turns into no call without raising: its loop logs an empty response.
EMPTY_TEXT = DecodedStep(text=True)


def _short(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _calls(items: list[tuple[Any, Any]]) -> DecodedStep:
    """The calls BFCL renders as ``name(k=repr(v), ...)`` for (name, arguments) pairs whose
    arguments are objects: built as a function-calling step, so that names, argument names and
    nesting are judged as :func:`~.parse.decode_function_calling` judges them (BFCL-PARSE)."""
    if not items:
        return REPLY
    return decode_function_calling([{str(name): arguments} for name, arguments in items])


def _shown(item: Any) -> str:
    """An item as the model wrote it, for a reason: JSON where it is JSON, else its repr."""
    try:
        return _short(json.dumps(item, ensure_ascii=False))
    except (TypeError, ValueError, RecursionError):  # Python literals: tuples, sets, odd keys
        return _short(repr(item))


def _refused(values: list[Any], name_key: str, decoder: str, why: str) -> DecodedStep:
    """A text step BFCL's decoder raises on: its items that name a function are the model's calls,
    each a schema failure BFCL never runs (``decoded=False``); a text naming none is a reply."""
    calls = tuple(
        ParsedCall(
            name=_short(str(item[name_key]), 80),
            text=_shown(item),
            fault=f"BFCL's {decoder} decoder raises on this step: {why}",
            decoded=False,
        )
        for item in values
        if isinstance(item, dict) and name_key in item
    )
    if not calls:
        return TEXT_REPLY
    return DecodedStep(calls, raises=True)


def _named_items(values: list[Any], name_key: str, args_key: str, decoder: str) -> DecodedStep:
    """``for call in values: call[name_key], call[args_key].items()`` as the handlers write it: every
    item an object with both keys and object arguments, else the step raises."""
    items: list[tuple[Any, Any]] = []
    for item in values:
        if not isinstance(item, dict):
            return _refused(values, name_key, decoder, f"an item is {type(item).__name__}, not an object")
        if name_key not in item or args_key not in item:
            missing = name_key if name_key not in item else args_key
            return _refused(values, name_key, decoder, f"an item has no {missing!r}")
        arguments = item[args_key]
        if not isinstance(arguments, dict):
            return _refused(
                values, name_key, decoder, f"{args_key!r} is {type(arguments).__name__}, not an object"
            )
        items.append((item[name_key], arguments))
    return _calls(items)


def _defaulted_items(values: list[Any], decoder: str) -> DecodedStep:
    """``for call in values: if isinstance(call, dict): call.get("name", ""), call.get("arguments",
    {}).items()`` (Hammer's ``xlam_json_to_python_tool_calls``, Mining's loop): the object items,
    others skipped silently, arguments an object else the step raises; none: no call."""
    items = [item for item in values if isinstance(item, dict)]
    for item in items:
        if not isinstance(item.get("arguments", {}), dict):
            return _refused(items, "name", decoder, "'arguments' is not an object")
    if not items:
        return EMPTY_TEXT
    return _calls([(item.get("name", ""), item.get("arguments", {})) for item in items])


def _json(text: str) -> tuple[bool, Any]:
    """``json.loads(text)``: (True, value), or (False, None) where it raises."""
    try:
        return True, json.loads(text)
    except (ValueError, RecursionError):
        return False, None


def _json_or_fallback(text: str) -> tuple[bool | None, Any]:
    """``json.loads(text)`` for a ``try/except JSONDecodeError`` fallback: (True, value), (False,
    None) on a ``JSONDecodeError`` (the fallback runs), (None, None) on any other error (it raises)."""
    try:
        return True, json.loads(text)
    except json.JSONDecodeError:
        return False, None
    except (ValueError, RecursionError):
        return None, None


def _not_text(step: object, *, raises: bool = True) -> DecodedStep:
    """A list or object step under a decoder that reads text (``json.loads`` / ``str`` methods
    raise on it): its calls, as function-calling output writes them, are never run by BFCL."""
    decoded = decode_step(step, function_calling=True)
    if decoded.is_reply:
        return TEXT_REPLY if raises else EMPTY_TEXT
    return DecodedStep(
        tuple(attrs.evolve(c, decoded=False) for c in decoded.calls), text=decoded.text, raises=raises
    )


def _oversized(text: str, decoder: str) -> DecodedStep | None:
    """A text longer than the parse limit (BFCL-LIMITS): a schema failure if it names a function."""
    if len(text) <= MAX_STEP_CHARS:
        return None
    if '"name"' in text[:2000] or "'name'" in text[:2000]:
        fault = f"step longer than {MAX_STEP_CHARS:,} characters (not parsed; BFCL's {decoder} decoder is)"
        return DecodedStep((ParsedCall(name="", text=_short(text), fault=fault, decoded=False),), raises=True)
    return TEXT_REPLY


# --- the decoders -----------------------------------------------------------------------------------


def decode_xlam(step: object) -> DecodedStep:
    """``SalesforceLlamaHandler.decode_execute`` (local_inference/salesforce_llama.py; the same in
    salesforce_qwen.py): ``json.loads(result)``, a value that is not a list taken as a one-item
    list; on ``JSONDecodeError`` the text split on ``;`` and each stripped part ``json.loads``-ed;
    every item ``call["name"]`` with object ``call["arguments"]``."""
    if not isinstance(step, str):
        return _not_text(step)  # json.loads(list) raises TypeError
    big = _oversized(step, "xLAM")
    if big is not None:
        return big
    ok, value = _json_or_fallback(step)
    if ok is None:
        return TEXT_REPLY
    if ok:
        values = value if isinstance(value, list) else [value]
    else:
        parts = [_json(part.strip()) for part in step.split(";")]
        if not all(ok for ok, _ in parts):
            return TEXT_REPLY
        values = [value for _, value in parts]
    return _named_items(values, "name", "arguments", "xLAM")


def decode_json_calls(step: object) -> DecodedStep:
    """``BitAgentHandler.decode_execute`` (local_inference/bitagent.py): ``json.loads(result)``, a
    value that is not a list taken as a one-item list, every item ``name`` / object ``arguments``."""
    if not isinstance(step, str):
        return _not_text(step)
    big = _oversized(step, "BitAgent")
    if big is not None:
        return big
    ok, value = _json(step)
    if not ok:
        return TEXT_REPLY
    return _named_items(value if isinstance(value, list) else [value], "name", "arguments", "BitAgent")


#: Names ``eval`` resolves inside ``LlamaHandler_3_1.decode_execute``: the builtins, the module's
#: globals (its imports ``json``, ``OSSHandler``, ``override``, the class, the module dunders) and
#: the method's locals (``self``, ``result``, ``has_tool_call_tag``).
_LLAMA_RESOLVED = frozenset(dir(builtins)) | {
    "json",
    "OSSHandler",
    "override",
    "LlamaHandler_3_1",
    "self",
    "result",
    "has_tool_call_tag",
    "__name__",
    "__doc__",
    "__package__",
    "__loader__",
    "__spec__",
    "__file__",
    "__cached__",
    "__builtins__",
}


#: The fault of a call whose text BFCL's decoder would ``eval`` (counted by the reader, BFCL-DIFF).
EVAL_FAULT = "BFCL's Llama 3.1 decoder runs eval on this text"


class _Raises(Exception):
    """``eval`` of the text raises (NameError, TypeError, SyntaxError): BFCL skips the step."""


class _Evaluates(Exception):
    """``eval`` of the text would run code (a call, an operator, a name it resolves): not done here."""


def _python_value(node: ast.AST) -> Any:
    """The value ``eval`` gives a literal-only tree; :class:`_Raises` where ``eval`` raises."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        operand = _python_value(node.operand)
        if isinstance(operand, int | float | complex):
            return -operand if isinstance(node.op, ast.USub) else +operand
        raise _Raises(f"bad operand type for unary operator: {type(operand).__name__}")
    if isinstance(node, ast.List):
        return [_python_value(e) for e in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_python_value(e) for e in node.elts)
    try:
        if isinstance(node, ast.Set):
            return {_python_value(e) for e in node.elts}
        if isinstance(node, ast.Dict):
            return {
                _python_value(k): _python_value(v)
                for k, v in zip(node.keys, node.values, strict=True)
                if k is not None  # ``**`` unpacking is refused before (it evaluates)
            }
    except TypeError as exc:  # unhashable key or element
        raise _Raises(str(exc)) from None
    raise _Evaluates(type(node).__name__)


def _python_literal(text: str) -> Any:
    """``eval(text)`` for a text whose tree is literals only; raises :class:`_Raises` where ``eval``
    raises without running anything, :class:`_Evaluates` where it would run code."""
    try:
        tree = ast.parse(text.lstrip(" \t"), mode="eval")  # eval strips leading spaces and tabs
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError) as exc:
        raise _Raises(f"{type(exc).__name__}") from None
    unresolved = False
    for node in ast.walk(tree.body):
        if isinstance(node, ast.Name):
            if node.id in _LLAMA_RESOLVED:
                raise _Evaluates(f"the name `{node.id}`")
            unresolved = True
        elif isinstance(node, ast.Dict) and any(k is None for k in node.keys):
            raise _Evaluates("dict unpacking")
        elif isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.USub | ast.UAdd):
            raise _Evaluates(type(node.op).__name__)
        elif not isinstance(
            node,
            ast.Constant
            | ast.List
            | ast.Tuple
            | ast.Set
            | ast.Dict
            | ast.UnaryOp
            | ast.Name
            | ast.expr_context
            | ast.unaryop,
        ):
            raise _Evaluates(type(node).__name__)
    if unresolved:
        raise _Raises("NameError")  # e.g. JSON's true, false, null
    try:
        return _python_value(tree.body)
    except RecursionError:
        raise _Raises("RecursionError") from None


def decode_llama_3_1(step: object) -> DecodedStep:
    """``LlamaHandler_3_1.decode_execute`` (local_inference/llama_3_1.py): ``<|python_tag|>``
    removed; a text with ``;`` split on it and each part ``json.loads``-ed; any other text
    ``eval``-ed (here: literals only, see the module doc), a dict taken as a one-item list, and the
    result iterated; every item ``call["name"]`` with object ``call["parameters"]``."""
    if not isinstance(step, str):
        return _not_text(step)
    text = step.replace("<|python_tag|>", "")
    big = _oversized(text, "Llama 3.1")
    if big is not None:
        return big
    if ";" in text:
        parts = [_json(part) for part in text.split(";")]
        if not all(ok for ok, _ in parts):
            return TEXT_REPLY
        return _named_items([value for _, value in parts], "name", "parameters", "Llama 3.1")
    try:
        value = _python_literal(text)
    except _Raises:
        return TEXT_REPLY
    except _Evaluates as exc:
        fault = f"{EVAL_FAULT} ({exc}), which is never done here (BFCL-DIFF): not decoded"
        return DecodedStep((ParsedCall(name="", text=_short(text), fault=fault, decoded=False),), raises=True)
    if isinstance(value, dict):
        values: list[Any] = [value]
    elif isinstance(value, list | tuple):
        values = list(value)
    elif isinstance(value, str | bytes) and not value:
        return EMPTY_TEXT  # iterating an empty text: no call, no error
    else:
        return TEXT_REPLY  # iterating it raises (a number, None, a set, a text's characters)
    return _named_items(values, "name", "parameters", "Llama 3.1")


def _tag_bodies(text: str, start: str, end: str, first: bool) -> list[str]:
    """``re.findall(start + "(.*?)" + end, text, re.DOTALL)`` (``re.search``'s group when ``first``),
    found in linear time: each body runs to the first ``end`` after its ``start``."""
    bodies: list[str] = []
    position = 0
    while True:
        i = text.find(start, position)
        if i < 0:
            return bodies
        j = text.find(end, i + len(start))
        if j < 0:
            return bodies  # no end after this start, hence none after a later one
        bodies.append(text[i + len(start) : j])
        if first:
            return bodies
        position = j + len(end)


def decode_tool_call_tags(step: object) -> DecodedStep:
    """``QwenFCHandler.decode_execute`` (local_inference/qwen_fc.py; the same in granite_4.py,
    pelican_vl_fc.py, nanbeige_fc.py): ``_extract_tool_calls`` finds every
    ``<tool_call>\\n(.*?)\\n</tool_call>`` and keeps the bodies that ``json.loads`` (the others are
    dropped silently); any kept value that is not an object raises; each ``{name: arguments}`` then
    goes through ``convert_to_function_call`` (a JSON-string ``arguments`` is parsed there). No tag:
    no call, no error."""
    if not isinstance(step, str):
        return _not_text(step)
    big = _oversized(step, "<tool_call>")
    if big is not None:
        return big
    values = [
        value for ok, value in map(_json, _tag_bodies(step, "<tool_call>\n", "\n</tool_call>", False)) if ok
    ]
    if not values:
        return EMPTY_TEXT
    items: list[Any] = []
    for value in values:
        if isinstance(value, dict) and isinstance(value.get("arguments"), str):
            ok, arguments = _json(value["arguments"])
            if not ok:
                return _refused(values, "name", "<tool_call>", "arguments are not valid JSON")
            value = {**value, "arguments": arguments}
        items.append(value)
    return _named_items(items, "name", "arguments", "<tool_call>")


def decode_hammer(step: object) -> DecodedStep:
    """``HammerHandler.decode_execute`` (local_inference/hammer.py): backticks removed,
    ``json.loads`` (any failure: no call), a list is the calls, an object's ``tool_calls`` are;
    ``xlam_json_to_python_tool_calls`` keeps the object items (``name`` default ``""``,
    ``arguments`` default ``{}``, which must be an object) and skips the others silently."""
    if not isinstance(step, str):
        return _not_text(step)  # a list has no .replace: it raises
    big = _oversized(step, "Hammer")
    if big is not None:
        return big
    ok, value = _json(step.replace("```", ""))
    if not ok:
        return EMPTY_TEXT
    calls: Any = (
        value if isinstance(value, list) else value.get("tool_calls", []) if isinstance(value, dict) else []
    )
    if not isinstance(calls, list):
        calls = [calls]
    return _defaulted_items(calls, "Hammer")


def decode_falcon(step: object) -> DecodedStep:
    """``Falcon3FCHandler.decode_execute`` (local_inference/falcon_fc.py): a text without
    ``<tool_call>`` raises; the text between the first ``<tool_call>`` and the next
    ``</tool_call>`` (or the end), stripped, code fences and a ``json`` tag removed, ``json.loads``-ed,
    a value that is not a list taken as a one-item list, every item ``name`` / object ``arguments``."""
    if not isinstance(step, str):
        return _not_text(step)
    big = _oversized(step, "Falcon")
    if big is not None:
        return big
    if "<tool_call>" not in step:
        return TEXT_REPLY
    body = step.split("<tool_call>")[1].split("</tool_call>")[0].strip()
    if body.startswith("```") and body.endswith("```"):
        body = body.strip("`").strip()
        if body.startswith("json"):
            body = body[4:].strip()
    ok, value = _json(body)
    if not ok:
        return TEXT_REPLY
    return _named_items(value if isinstance(value, list) else [value], "name", "arguments", "Falcon")


def decode_glm(step: object) -> DecodedStep:
    """``GLMHandler.decode_execute`` (local_inference/glm.py): the text split on newlines; one line
    goes to ``convert_to_function_call`` as text (it raises unless the text is empty); with two or
    more, the first line is the function name and the second its JSON arguments."""
    if not isinstance(step, str):
        return _not_text(step)  # list.split raises
    big = _oversized(step, "GLM")
    if big is not None:
        return big
    lines = step.split("\n")
    if len(lines) == 1:
        return EMPTY_TEXT if not step else TEXT_REPLY
    ok, arguments = _json(lines[1])
    if not ok or not isinstance(arguments, dict):
        return TEXT_REPLY
    return _calls([(lines[0], arguments)])


def decode_fc_list(step: object) -> DecodedStep:
    """``MistralFCHandler.decode_execute`` (local_inference/mistral_fc.py; the same rule in arch.py,
    phi_fc.py, granite_3.py and api_inference/nova.py): a step that is not a list raises, a list
    goes to ``convert_to_function_call``."""
    if isinstance(step, list):
        return decode_step(step, function_calling=True)
    if isinstance(step, str):
        return TEXT_REPLY
    return _not_text(step)


def decode_gemini_fc(step: object) -> DecodedStep:
    """``GeminiHandler.decode_execute`` in FC mode (api_inference/gemini.py): for each object of the
    list, each ``name: arguments`` pair with object arguments (a JSON string is not parsed there:
    ``.items()`` raises on it)."""
    if not isinstance(step, list):
        return TEXT_REPLY if isinstance(step, str) else _not_text(step)
    if any(not isinstance(item, dict) for item in step):
        return _not_text(step)
    pairs = [(name, arguments) for item in step for name, arguments in item.items()]
    if any(not isinstance(arguments, dict) for _, arguments in pairs):
        return _not_text(step)
    return _calls(pairs)


def decode_gemini_prompting(step: object) -> DecodedStep:
    """``GeminiHandler.decode_execute`` in prompting mode (api_inference/gemini.py): every
    ``"```tool_code\\n"`` and ``"\\n```"`` removed, then ``default_decode_execute_prompting``."""
    if not isinstance(step, str):
        return _not_text(step)
    return decode_prompting(step.replace("```tool_code\n", "").replace("\n```", ""))


def decode_phi(step: object) -> DecodedStep:
    """``PhiHandler.decode_execute`` (local_inference/phi.py): a leading ``"```json"``, then a
    leading ``"```python"``, removed; then ``default_decode_execute_prompting``."""
    if not isinstance(step, str):
        return _not_text(step)
    text = step.removeprefix("```json").removeprefix("```python")
    return decode_prompting(text)


def decode_nemotron(step: object) -> DecodedStep:
    """``NemotronHandler.decode_execute`` (api_inference/nemotron.py): the first
    ``<TOOLCALL>(.*?)</TOOLCALL>``; none: no call, no error; else its body through
    ``default_decode_execute_prompting``."""
    if not isinstance(step, str):
        return _not_text(step)
    bodies = _tag_bodies(step, "<TOOLCALL>", "</TOOLCALL>", True)
    if not bodies:
        return EMPTY_TEXT
    return decode_prompting(bodies[0])


def decode_cohere(step: object) -> DecodedStep:
    """``CohereHandler.decode_execute`` (api_inference/cohere.py): a list's items give
    ``tool_name`` and object ``parameters``; anything else is no call (no error)."""
    if not isinstance(step, list):
        return EMPTY_TEXT if isinstance(step, str) else _not_text(step, raises=False)
    return _named_items(step, "tool_name", "parameters", "Cohere")


def decode_mining(step: object) -> DecodedStep:
    """``MiningHandler.decode_execute`` (api_inference/mining.py; DMCitoHandler inherits it): the
    object items of the step (iterated: a text's characters are no objects) give ``name`` (default
    ``""``) and ``arguments`` (default ``{}``, an object); other items are skipped silently."""
    if isinstance(step, dict):
        return _not_text(step, raises=False)  # iterating an object yields its keys: no call
    return _defaulted_items(step if isinstance(step, list) else [], "Mining")


def _fc(step: object) -> DecodedStep:
    return decode_step(step, function_calling=True)


def _prompting(step: object) -> DecodedStep:
    if isinstance(step, str):
        return decode_prompting(step)
    return _not_text(step)  # list.strip raises


@attrs.frozen(slots=True)
class Decoder:
    """One family of BFCL handler decoders: its name (``--bfcl-decoder NAME``), the handler classes
    whose ``decode_execute`` it mirrors, their source under ``bfcl_eval/model_handler/`` and the
    step decoder (``None`` for ``api``: BFCL's API rules, function-calling or prompting by file)."""

    name: str
    handlers: tuple[str, ...]
    source: str
    summary: str
    decode: Callable[[object], DecodedStep] | None


DECODERS: Mapping[str, Decoder] = {
    d.name: d
    for d in (
        Decoder(
            "api",
            (),
            "utils.py",
            "BFCL's API rules: function-calling lists (convert_to_function_call) when the model ends "
            "in -FC or a step is a list or object, else prompting text (default_decode_execute_prompting)",
            None,
        ),
        Decoder(
            "fc",
            ("OpenAIResponsesHandler", "OpenAICompletionsHandler", "ClaudeHandler", "MistralHandler"),
            "utils.py convert_to_function_call",
            "function-calling lists [{name: arguments}]; a text step is a reply",
            _fc,
        ),
        Decoder(
            "prompting",
            ("OSSHandler", "LlamaHandler", "QwenHandler", "GemmaHandler", "NvidiaHandler"),
            "utils.py default_decode_execute_prompting",
            "Python call lists as text: [func(a=1), ...]",
            _prompting,
        ),
        Decoder(
            "xlam",
            ("SalesforceLlamaHandler", "SalesforceQwenHandler"),
            "local_inference/salesforce_llama.py, salesforce_qwen.py",
            'JSON text [{"name": ..., "arguments": {...}}] (or objects joined by ;)',
            decode_xlam,
        ),
        Decoder(
            "llama-3.1",
            ("LlamaHandler_3_1",),
            "local_inference/llama_3_1.py",
            'text {"name": ..., "parameters": {...}} joined by ; (JSON) or , (Python literals), '
            "after <|python_tag|>",
            decode_llama_3_1,
        ),
        Decoder(
            "tool-call-tags",
            ("QwenFCHandler", "Granite4FCHandler", "PelicanVLFCHandler", "NanbeigeFCHandler"),
            "local_inference/qwen_fc.py, granite_4.py, pelican_vl_fc.py, nanbeige_fc.py",
            'text <tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call> per call',
            decode_tool_call_tags,
        ),
        Decoder(
            "json-calls",
            ("BitAgentHandler",),
            "local_inference/bitagent.py",
            'JSON text [{"name": ..., "arguments": {...}}] or one such object',
            decode_json_calls,
        ),
        Decoder(
            "hammer",
            ("HammerHandler",),
            "local_inference/hammer.py",
            'JSON text (backticks removed): a list of {"name", "arguments"} or {"tool_calls": [...]}',
            decode_hammer,
        ),
        Decoder(
            "falcon",
            ("Falcon3FCHandler",),
            "local_inference/falcon_fc.py",
            "JSON calls inside the first <tool_call> ... </tool_call>, code fences allowed",
            decode_falcon,
        ),
        Decoder(
            "glm",
            ("GLMHandler",),
            "local_inference/glm.py",
            "text: the function name on the first line, its JSON arguments on the second",
            decode_glm,
        ),
        Decoder(
            "fc-list",
            ("MistralFCHandler", "ArchHandler", "PhiFCHandler", "Granite3FCHandler", "NovaHandler"),
            "local_inference/mistral_fc.py, arch.py, phi_fc.py, granite_3.py; api_inference/nova.py",
            "function-calling lists only: an object or text step raises",
            decode_fc_list,
        ),
        Decoder(
            "phi",
            ("PhiHandler",),
            "local_inference/phi.py",
            "prompting text after a leading ```json or ```python",
            decode_phi,
        ),
        Decoder(
            "gemini-fc",
            (),
            "api_inference/gemini.py (FC mode)",
            "lists of {name: arguments} with object arguments",
            decode_gemini_fc,
        ),
        Decoder(
            "gemini-prompting",
            (),
            "api_inference/gemini.py (prompting mode)",
            "prompting text inside ```tool_code fences",
            decode_gemini_prompting,
        ),
        Decoder(
            "nemotron",
            ("NemotronHandler",),
            "api_inference/nemotron.py",
            "prompting text inside the first <TOOLCALL> ... </TOOLCALL>",
            decode_nemotron,
        ),
        Decoder(
            "cohere",
            ("CohereHandler",),
            "api_inference/cohere.py",
            'lists of {"tool_name": ..., "parameters": {...}}',
            decode_cohere,
        ),
        Decoder(
            "mining",
            ("MiningHandler", "DMCitoHandler"),
            "api_inference/mining.py, dm_cito.py",
            'lists of {"name": ..., "arguments": {...}}; other items skipped',
            decode_mining,
        ),
    )
}

#: Handlers whose ``decode_execute`` depends on the model's mode: (FC decoder, prompting decoder).
_BY_MODE: Mapping[str, tuple[str, str]] = {
    "OpenAIResponsesHandler": ("fc", "prompting"),
    "OpenAICompletionsHandler": ("fc", "prompting"),
    "ClaudeHandler": ("fc", "prompting"),
    "MistralHandler": ("fc", "prompting"),
    "GeminiHandler": ("gemini-fc", "gemini-prompting"),
}

#: Handlers that inherit ``OpenAICompletionsHandler.decode_execute`` (api_inference/*.py).
_OPENAI_COMPLETIONS = (
    "DeepSeekAPIHandler",
    "FireworksHandler",
    "FunctionaryHandler",
    "GLMAPIHandler",
    "GoGoAgentHandler",
    "GrokHandler",
    "KimiHandler",
    "LingAPIHandler",
    "NanbeigeAPIHandler",
    "NovitaHandler",
    "QwenAPIHandler",
    "QwenAgentThinkHandler",
    "QwenAgentNoThinkHandler",
    "WriterHandler",
)

#: Local handlers that inherit ``OSSHandler.decode_execute`` (``default_decode_execute_prompting``,
#: whatever the model's mode: local_inference/base_oss_handler.py).
_OSS_DEFAULT = (
    "LlamaHandler",
    "QwenHandler",
    "GemmaHandler",
    "DeepseekReasoningHandler",
    "BielikHandler",
    "MiniCPMHandler",
    "QuickTestingOSSHandler",
)

#: Handlers with a decoder of their own that is not mirrored, and why (their files are read with
#: the API rules, with a warning).
UNMIRRORED: Mapping[str, str] = {
    "GraniteFunctionCallingHandler": "keeps text it cannot parse, which its executor then runs with eval",
    "MiniCPMFCHandler": "parses the model's own call syntax (fc2dict) with eval-based literal reading",
    "FunctionGemmaHandler": "parses the model's own token grammar",
    "ThinkAgentHandler": "rewrites quotes and extracts JSON with a parser of its own",
    "GorillaHandler": "parses Python calls with BFCL's ast_parse, which evaluates arithmetic",
    "NexusHandler": "parses Python calls with BFCL's ast_parse, which evaluates arithmetic",
}


def decoder_for_handler(handler: str, is_fc: bool) -> str | None:
    """Our decoder for a BFCL handler class (``None``: not mirrored, or unknown)."""
    if handler in _BY_MODE:
        return _BY_MODE[handler][0 if is_fc else 1]
    if handler in _OPENAI_COMPLETIONS:
        return "fc" if is_fc else "prompting"
    if handler in _OSS_DEFAULT or handler == "OSSHandler":
        return "prompting"
    for decoder in DECODERS.values():
        if handler in decoder.handlers:
            return decoder.name
    return None


@attrs.frozen(slots=True)
class MapEntry:
    """One model of BFCL's model map: its registry name, handler class and mode."""

    key: str
    handler: str
    is_fc: bool


@cache
def handler_map() -> Mapping[str, MapEntry]:
    """BFCL's model map as the installed package ships it, keyed by the result folder name BFCL
    writes (the registry name with ``/`` replaced by ``_``, base_handler.py ``registry_dir_name``).

    ``bfcl_eval/constants/model_config.py`` is read as text with :mod:`ast` (importing it would
    import every handler and its vendor SDK): each ``"<key>": ModelConfig(..., model_handler=<Class>,
    is_fc_model=<bool>)`` of its dict literals (``is_fc_model`` defaults to True there).
    """
    try:
        source = resources.files("bfcl_eval").joinpath("constants", "model_config.py").read_text("utf-8")
    except (ModuleNotFoundError, FileNotFoundError, OSError):
        return {}
    found: dict[str, MapEntry] = {}
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Dict):
            continue
        for key, value in zip(node.keys, node.values, strict=True):
            if not (
                isinstance(key, ast.Constant)
                and isinstance(key.value, str)
                and isinstance(value, ast.Call)
                and isinstance(value.func, ast.Name)
                and value.func.id == "ModelConfig"
            ):
                continue
            options = {k.arg: k.value for k in value.keywords if k.arg}
            handler = options.get("model_handler")
            fc = options.get("is_fc_model")
            if not isinstance(handler, ast.Name):
                continue
            is_fc = fc.value if isinstance(fc, ast.Constant) and isinstance(fc.value, bool) else True
            found[key.value.replace("/", "_")] = MapEntry(key.value, handler.id, is_fc)
    return found


@attrs.frozen(slots=True)
class Choice:
    """The decoder that reads one result file, and why (the audit and the warnings say it)."""

    decoder: Decoder
    why: str
    #: The handler BFCL's map names for the model, when its decoder is not mirrored.
    unmirrored: str | None = None


def choose(model: str, requested: str | None) -> Choice:
    """The decoder for a file of ``model`` (BFCL-HANDLERS): ``requested`` (``--bfcl-decoder``: a
    decoder name or a handler class) unless ``auto``, else BFCL's map for the model, else ``api``."""
    if requested is not None and requested != "auto":
        if requested in DECODERS:
            return Choice(DECODERS[requested], "--bfcl-decoder")
        name = decoder_for_handler(requested, is_fc=True)
        if name is None:
            raise InputError(
                "--bfcl-decoder",
                f"unknown decoder {requested!r} (expected auto, one of {', '.join(DECODERS)}, or a "
                "BFCL handler class such as SalesforceLlamaHandler)",
            )
        return Choice(DECODERS[name], f"--bfcl-decoder {requested} (handler)")
    entry = handler_map().get(model)
    if entry is None:
        return Choice(DECODERS["api"], f"model {model!r} is not in BFCL's model map")
    name = decoder_for_handler(entry.handler, entry.is_fc)
    mode = "FC" if entry.is_fc else "prompting"
    if name is None:
        return Choice(
            DECODERS["api"],
            f"BFCL's map gives {entry.key} ({mode}) to {entry.handler}, whose decoder is not mirrored",
            unmirrored=entry.handler,
        )
    return Choice(DECODERS[name], f"BFCL's map gives {entry.key} ({mode}) to {entry.handler}")


def decode(decoder: Decoder, raw: object, *, function_calling: bool) -> DecodedStep:
    """One step of a result file through ``decoder`` (``api``: BFCL-STEP's rules, function-calling
    or prompting as the file is); raises :class:`StepFormatError` on a step of no BFCL shape."""
    if decoder.decode is None:
        return decode_step(raw, function_calling=function_calling)
    if not isinstance(raw, str | list | dict):
        raise StepFormatError(f"a step must be text, an object or a list, got {type(raw).__name__}")
    return decoder.decode(raw)


def decode_string_turn(decoder: Decoder, turn: str) -> DecodedStep:
    """A turn written as one string (BFCL-STRING-TURN), decoded as one step for the action trace:
    with the decoder when it reads text, else as prompting text. BFCL's loop hands the string's
    characters to the decoder, none of which decodes to a call: nothing of it is BFCL's."""
    text_decoder = decoder.decode is not None and decoder.name not in ("fc", "fc-list", "gemini-fc", "cohere")
    step = decoder.decode(turn) if text_decoder and decoder.decode is not None else decode_prompting(turn)
    return DecodedStep(tuple(attrs.evolve(c, decoded=False) for c in step.calls))


__all__ = [
    "DECODERS",
    "EMPTY_TEXT",
    "EVAL_FAULT",
    "UNMIRRORED",
    "Choice",
    "Decoder",
    "MapEntry",
    "StepFormatError",
    "choose",
    "decode",
    "decode_string_turn",
    "decoder_for_handler",
    "handler_map",
]
