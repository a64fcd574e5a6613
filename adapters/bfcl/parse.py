"""Safe decoding of BFCL model outputs into calls (spec: BFCL-PARSE, BFCL-STEP, BFCL-LIMITS).

Model output is untrusted. It is parsed with :func:`ast.parse` (or :func:`json.loads` for
function-calling arguments) and only a plain call ``name(...)`` whose arguments are literals is
accepted; argument values are rebuilt from the syntax tree by :func:`literal`, which knows
strings, numbers, booleans, ``None``, lists, tuples and dicts and nothing else. Nothing is ever
evaluated: there is no ``eval``, ``exec`` or ``compile`` here.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from typing import Any

import attrs

#: Longest step text (or function-calling argument string) that is parsed at all.
MAX_STEP_CHARS = 1_000_000
#: Deepest nesting of lists, tuples and dicts inside one argument value.
MAX_LITERAL_DEPTH = 32

#: Longest integer literal accepted, in decimal digits (Python's int <-> str limit; HOSTILE-BFCL-COST).
MAX_INT_DIGITS = 4300
_INT_LIMIT = 10**MAX_INT_DIGITS

#: Text that starts like a call list: used only to tell an oversized call from an oversized reply.
_LOOKS_LIKE_CALL = re.compile(r"^[\s`\[']*[A-Za-z_][\w.]*\s*\(")


class Unacceptable(Exception):
    """A call expression that is not a plain call with literal arguments (a schema failure)."""


@attrs.frozen(slots=True)
class ParsedCall:
    """One call as the model (or the ground truth) wrote it.

    ``fault`` says why the call is not acceptable (BFCL-PARSE); an acceptable call has
    ``fault is None``. ``decoded`` says whether BFCL's own decoder would have handed the call's
    step to its executor (BFCL-STEP); it matters only for the success rule.
    """

    name: str
    args: tuple[Any, ...] = ()
    kwargs: tuple[tuple[str, Any], ...] = ()
    text: str = ""
    fault: str | None = None
    decoded: bool = True
    #: What BFCL's executor runs for this call when that is not the call itself (BFCL-PARITY):
    #: a prompting call with positional arguments runs with its keyword arguments only.
    bfcl: ParsedCall | None = None

    @property
    def arguments(self) -> dict[str, Any]:
        """The keyword arguments as a new dict."""
        return dict(self.kwargs)


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _unparse(node: ast.AST, source: str, limit: int) -> str:
    """``ast.unparse(node)`` cut to ``limit``; where it cannot be written (an integer literal
    beyond Python's digit limit, from a hexadecimal literal), the node's own source text."""
    try:
        return _short(ast.unparse(node), limit)
    except (ValueError, RecursionError):
        segment = ast.get_source_segment(source, node)
        return _short(segment if segment is not None else "<call>", limit)


def literal(node: ast.AST, depth: int = 0) -> Any:
    """The value of a literal expression; raises :class:`Unacceptable` for anything else.

    Accepted: str, int, float, bool and None constants; unary minus on an int or float
    constant; lists, tuples and dicts of accepted values, nested at most ``MAX_LITERAL_DEPTH``
    deep. Everything else (names, calls, attributes, operators, comprehensions, lambdas,
    f-strings, sets, bytes, complex numbers, ``...``, starred items) is refused.
    """
    if depth > MAX_LITERAL_DEPTH:
        raise Unacceptable(f"literal nested deeper than {MAX_LITERAL_DEPTH} levels")
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= _INT_LIMIT:
            # A hexadecimal literal passes the parser's digit limit (HOSTILE-BFCL-COST).
            raise Unacceptable(f"integer literal of more than {MAX_INT_DIGITS} decimal digits")
        if value is None or isinstance(value, str | bool | int | float):
            return value
        raise Unacceptable(f"constant of type {type(value).__name__} is not accepted")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        operand = node.operand
        if (
            isinstance(operand, ast.Constant)
            and isinstance(operand.value, int | float)
            and not isinstance(operand.value, bool)
        ):
            return -operand.value
        raise Unacceptable("unary minus applies to a number literal only")
    if isinstance(node, ast.List):
        return [literal(element, depth + 1) for element in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(literal(element, depth + 1) for element in node.elts)
    if isinstance(node, ast.Dict):
        result: dict[Any, Any] = {}
        for key_node, value_node in zip(node.keys, node.values, strict=True):
            if key_node is None:
                raise Unacceptable("dict unpacking (**) is not a literal")
            key = literal(key_node, depth + 1)
            if not (key is None or isinstance(key, str | bool | int | float)):
                raise Unacceptable("dict keys must be str, number, bool or None")
            result[key] = literal(value_node, depth + 1)
        return result
    raise Unacceptable(f"{type(node).__name__} is not a literal")


def _json_depth_ok(value: Any, depth: int = 0) -> bool:
    if depth > MAX_LITERAL_DEPTH:
        return False
    if isinstance(value, list):
        return all(_json_depth_ok(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(_json_depth_ok(v, depth + 1) for v in value.values())
    return True


def _name_fault(name: str) -> str | None:
    if not name.isidentifier():
        return f"`{_short(name)}` is not a plain function name"
    if name.startswith("__") and name.endswith("__"):
        return f"`{name}` is a dunder name"
    if name.startswith("_"):
        return f"`{name}` is a private name"
    return None


def from_call_node(node: ast.Call, text: str, *, positional: bool) -> ParsedCall:
    """A :class:`ParsedCall` for one call node; ``positional`` says whether positional arguments count.

    BFCL's ground truth and call strings (``replay_calls``) are executed as written, positional
    arguments included; BFCL's decoder of prompting outputs passes keyword arguments only, so
    there a positional argument makes the call unacceptable (BFCL-PARSE).
    """
    func = node.func
    if not isinstance(func, ast.Name):
        kind = "an attribute call" if isinstance(func, ast.Attribute) else f"a call of {type(func).__name__}"
        return ParsedCall(
            name=_unparse(func, text, 120), text=text, fault=f"{kind}, not a plain function call"
        )
    name = func.id
    fault = _name_fault(name)
    if fault is not None:
        return ParsedCall(name=name, text=text, fault=fault)
    try:
        args: list[Any] = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                raise Unacceptable("starred argument (*) is not accepted")
            if not positional:
                raise Unacceptable("positional argument: BFCL's decoder passes keyword arguments only")
            args.append(literal(arg))
        kwargs: list[tuple[str, Any]] = []
        seen: set[str] = set()
        for keyword in node.keywords:
            if keyword.arg is None:
                raise Unacceptable("keyword unpacking (**) is not accepted")
            if keyword.arg in seen:
                raise Unacceptable(f"keyword argument `{keyword.arg}` repeated")
            seen.add(keyword.arg)
            try:
                kwargs.append((keyword.arg, literal(keyword.value)))
            except Unacceptable as exc:
                raise Unacceptable(f"argument `{keyword.arg}`: {exc}") from None
    except Unacceptable as exc:
        bfcl = _keywords_only(node, name, text, positional)
        return ParsedCall(name=name, text=text, fault=str(exc), bfcl=bfcl)
    return ParsedCall(name=name, args=tuple(args), kwargs=tuple(kwargs), text=text)


def _keywords_only(node: ast.Call, name: str, text: str, positional: bool) -> ParsedCall | None:
    """What BFCL's executor runs for a prompting call with positional arguments: the call with
    its keyword arguments only, when those are literals (BFCL's decoder ignores positional ones)."""
    if positional or not node.args:
        return None
    kwargs: list[tuple[str, Any]] = []
    for keyword in node.keywords:
        if keyword.arg is None or keyword.arg in dict(kwargs):
            return None
        try:
            kwargs.append((keyword.arg, literal(keyword.value)))
        except Unacceptable:
            return None
    return ParsedCall(name=name, kwargs=tuple(kwargs), text=text)


def parse_call_string(text: str) -> ParsedCall:
    """Parse one call string such as ``"cd(folder='document')"`` (ground truth or ``replay_calls``).

    Positional literal arguments are kept. A string that is not a single call is unacceptable.
    """
    if len(text) > MAX_STEP_CHARS:
        return ParsedCall(
            name="", text=_short(text), fault=f"call text longer than {MAX_STEP_CHARS:,} characters"
        )
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError) as exc:
        return ParsedCall(name="", text=_short(text), fault=f"not parsable as a call: {_short(str(exc), 80)}")
    if not isinstance(tree.body, ast.Call):
        return ParsedCall(name="", text=_short(text), fault=f"{type(tree.body).__name__} is not a call")
    return from_call_node(tree.body, text.strip(), positional=True)


# --- BFCL's decoder, mirrored without evaluation (BFCL-STEP) -------------------------------------


def _bfcl_value_decodes(node: ast.AST) -> bool:
    """Whether ``resolve_ast_by_type`` of BFCL's decoder accepts ``node`` without raising.

    Mirrors bfcl_eval/model_handler/utils.py (2026.3.23): constants, unary operators on a
    constant, lists, dicts, tuples, names, calls, subscripts and arithmetic decode (arithmetic
    is evaluated there, assumed not to fail here); lambdas always fail (``body[0]`` on an
    expression); every other node type raises.
    """
    if isinstance(node, ast.Constant | ast.Name | ast.Subscript | ast.BinOp):
        return True
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.operand, ast.Constant)
    if isinstance(node, ast.List | ast.Tuple):
        return all(_bfcl_value_decodes(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _bfcl_value_decodes(k) for k in node.keys) and all(
            _bfcl_value_decodes(v) for v in node.values
        )
    if isinstance(node, ast.Call):
        return all(_bfcl_value_decodes(k.value) for k in node.keywords)
    return False


def _bfcl_call_decodes(node: ast.Call) -> bool:
    # BFCL ignores positional arguments and reads keyword values; an empty dict value makes
    # parse_nested_value fail (it takes the dict for a nested call and indexes its first key).
    for keyword in node.keywords:
        if not _bfcl_value_decodes(keyword.value):
            return False
        if isinstance(keyword.value, ast.Dict) and not keyword.value.keys:
            return False
    return True


@attrs.frozen(slots=True)
class DecodedStep:
    """One model step: the calls it makes, or none when the step is a reply to the user.

    ``text`` says whether the step holds text in function-calling output (a text step, or an
    Anthropic handler's text blocks); a step with calls and text is one BFCL's decoder drops
    (BFCL-STEP). ``raises`` says whether BFCL's decoder raises on the step: its inference loop
    then logs ``Error decoding the model response`` (BFCL-DROPPED); a step that decodes to no
    call without raising (``[]``) is an empty response there.
    """

    calls: tuple[ParsedCall, ...] = ()
    text: bool = False
    raises: bool = False

    @property
    def is_reply(self) -> bool:
        return not self.calls


REPLY = DecodedStep()
#: A reply BFCL's decoder raises on (prompting text that is not a list of calls).
RAISING_REPLY = DecodedStep(raises=True)
#: A function-calling step of text only (a text step or text blocks): a reply BFCL's decoder raises on.
TEXT_REPLY = DecodedStep(text=True, raises=True)


class StepFormatError(ValueError):
    """A step whose shape is not a BFCL model output at all (bad input, not model behaviour)."""


def _whole_step(calls: list[ParsedCall], fault: str) -> DecodedStep:
    """BFCL drops a step that it cannot decode as a whole: every call of it is a schema failure."""
    return DecodedStep(
        tuple(attrs.evolve(c, args=(), kwargs=(), fault=c.fault or fault, decoded=False) for c in calls),
        raises=True,
    )


def _render(name: str, arguments: Mapping[str, Any]) -> str:
    # The text BFCL's convert_to_function_call builds for a function-calling output.
    return f"{name}({','.join(f'{k}={v!r}' for k, v in arguments.items())})"


def decode_function_calling(raw: list[Any] | dict[str, Any]) -> DecodedStep:
    """A function-calling step ``[{name: arguments}, ...]``; arguments a JSON string or an object.

    Text items (an Anthropic handler's text blocks, ``["Perfect! ..."]``) are the model's reply:
    a step of text only is a reply; a step that mixes text with calls keeps its calls as tool
    actions, which BFCL's decoder drops with the step (``convert_to_function_call`` raises on
    the text item).
    """
    items = [raw] if isinstance(raw, dict) else raw
    if not items:
        return REPLY
    texts = [item for item in items if isinstance(item, str)]
    if texts:
        objects = [item for item in items if not isinstance(item, str)]
        if not objects:
            return TEXT_REPLY
        step = decode_function_calling(objects)
        return DecodedStep(tuple(attrs.evolve(c, decoded=False) for c in step.calls), text=True, raises=True)
    calls: list[ParsedCall] = []
    step_fault: str | None = None
    for item in items:
        if not isinstance(item, dict):
            raise StepFormatError(
                f"expected an object {{name: arguments}} or text, got {type(item).__name__}"
            )
        for name, value in item.items():
            shown = _short(str(name))
            arguments: Any = value
            fault = _name_fault(str(name))
            if isinstance(value, str):
                if len(value) > MAX_STEP_CHARS:
                    fault = fault or f"arguments longer than {MAX_STEP_CHARS:,} characters"
                    arguments = {}
                else:
                    try:
                        arguments = json.loads(value)
                    except (ValueError, RecursionError) as exc:
                        step_fault = (
                            step_fault or f"arguments of `{shown}` are not valid JSON: {_short(str(exc), 80)}"
                        )
                        calls.append(ParsedCall(name=str(name), text=f"{shown}({_short(value)})"))
                        continue
            if not isinstance(arguments, dict):
                step_fault = step_fault or f"arguments of `{shown}` are not a JSON object"
                calls.append(ParsedCall(name=str(name), text=f"{shown}({_short(str(value))})"))
                continue
            if fault is None and not _json_depth_ok(arguments):
                fault = f"literal nested deeper than {MAX_LITERAL_DEPTH} levels"
            bad_key = next((k for k in arguments if not str(k).isidentifier()), None)
            if fault is None and bad_key is not None:
                fault = f"argument name `{_short(str(bad_key))}` is not an identifier"
            text = _short(_render(str(name), arguments), 2000)
            if fault is not None:
                calls.append(ParsedCall(name=str(name), text=text, fault=fault))
            else:
                calls.append(ParsedCall(name=str(name), kwargs=tuple(arguments.items()), text=text))
    if step_fault is not None:
        return _whole_step(calls, step_fault)
    return DecodedStep(tuple(calls))


def decode_prompting(raw: str) -> DecodedStep:
    """A prompting step: text decoded as BFCL's ``default_decode_execute_prompting`` does, safely.

    The text is stripped of backticks, newlines and spaces, wrapped in ``[...]`` and parsed; a
    list whose elements are all calls is a call step, anything else is the model's reply.
    """
    if len(raw) > MAX_STEP_CHARS:
        if _LOOKS_LIKE_CALL.match(raw[:200]):
            return DecodedStep(
                (
                    ParsedCall(
                        name="", text=_short(raw), fault=f"step longer than {MAX_STEP_CHARS:,} characters"
                    ),
                )
            )
        return RAISING_REPLY
    text = raw.strip("`\n ")
    if not text.startswith("["):
        text = "[" + text
    if not text.endswith("]"):
        text = text + "]"
    text = text.strip().strip("'")
    try:
        tree = ast.parse(text, mode="eval")
    except (RecursionError, MemoryError):
        if _LOOKS_LIKE_CALL.match(raw[:200]):
            return DecodedStep(
                (ParsedCall(name="", text=_short(raw), fault="call nested too deeply to parse"),)
            )
        return RAISING_REPLY
    except (SyntaxError, ValueError, OverflowError) as exc:
        message = str(exc)
        if _LOOKS_LIKE_CALL.match(raw[:200]) and ("too many nested" in message or "too complex" in message):
            return DecodedStep(
                (ParsedCall(name="", text=_short(raw), fault="call nested too deeply to parse"),)
            )
        if _LOOKS_LIKE_CALL.match(raw[:200]) and "Exceeds the limit" in message:
            return DecodedStep((ParsedCall(name="", text=_short(raw), fault="integer literal too long"),))
        return RAISING_REPLY
    body = tree.body
    nodes: list[ast.expr]
    if isinstance(body, ast.Call):
        nodes = [body]
    elif isinstance(body, ast.List | ast.Tuple | ast.Set):
        nodes = list(body.elts)
    else:
        return RAISING_REPLY
    if not nodes:
        return REPLY  # BFCL decodes it to no call without raising: an empty response
    if not all(isinstance(n, ast.Call) for n in nodes):
        return RAISING_REPLY
    call_nodes = [n for n in nodes if isinstance(n, ast.Call)]
    calls = [from_call_node(n, _unparse(n, text, 2000), positional=False) for n in call_nodes]
    if not all(_bfcl_call_decodes(n) for n in call_nodes):
        return _whole_step(
            calls, "BFCL's decoder cannot decode this step (an argument of an unsupported kind)"
        )
    return DecodedStep(tuple(calls))


def decode_step(raw: object, *, function_calling: bool) -> DecodedStep:
    """Decode one step of a BFCL result (BFCL-STEP); raises :class:`StepFormatError` on a bad shape."""
    if isinstance(raw, dict | list):
        return decode_function_calling(raw)
    if isinstance(raw, str):
        return TEXT_REPLY if function_calling else decode_prompting(raw)
    raise StepFormatError(f"a step must be text, an object or a list, got {type(raw).__name__}")


__all__ = [
    "MAX_LITERAL_DEPTH",
    "MAX_STEP_CHARS",
    "RAISING_REPLY",
    "REPLY",
    "TEXT_REPLY",
    "DecodedStep",
    "ParsedCall",
    "StepFormatError",
    "Unacceptable",
    "decode_function_calling",
    "decode_prompting",
    "decode_step",
    "from_call_node",
    "literal",
    "parse_call_string",
]
