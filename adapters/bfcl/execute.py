"""Checks and execution of one call on BFCL's own API classes (spec: BFCL-STATE .. BFCL-LABELS).

A :class:`World` is one fresh set of instances of a task's involved classes. A call is
dispatched with ``getattr`` on the owning instance after it has been parsed into literal values
(:mod:`.parse`), bound to the method's signature and checked against the function doc;
the values are deep-copied so the caller's call is never mutated. Results are checked for
BFCL's error markers and rendered as BFCL's executor renders them, for the success rule.
"""

from __future__ import annotations

import copy
import decimal
import json
import math
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import attrs

from prefixexec.kernel import Label

from .backend import Catalogue, Entry, MethodInfo, catalogue, long_context, thaw
from .parse import ParsedCall

#: BFCL's prefix for a call that raised (multi_turn_utils.execute_multi_turn_func_call).
EXECUTION_ERROR = "Error during execution: "

#: Largest ``precision`` accepted by MathAPI.logarithm / square_root (BFCL-LIMITS).
MAX_PRECISION = 10_000
#: Largest sum of ``precision`` over the logarithm / square_root calls of one rollout
#: (BFCL-LIMITS, HOSTILE-BFCL-COST): ten calls at the largest precision.
MAX_PRECISION_PER_ROLLOUT = 10 * MAX_PRECISION
#: Largest result, in bits, of MathAPI.power on two integers (BFCL-LIMITS).
MAX_POWER_BITS = 1_000_000
#: HOSTILE-BFCL-COST, every numeric argument of every class: an integer has at most 4,300
#: decimal digits (Python's own int <-> str limit, which BFCL's rendering of a result meets).
MAX_INT_DIGITS = 4300
#: HOSTILE-BFCL-COST: the largest magnitude of a negative integer argument, of any method of any
#: class, and of their sum over a rollout. A negative integer is a count of places or an
#: exponent to Python's arithmetic (``round(5, -n)`` computes ``10**n``: n = 10**9 runs for
#: hours), whose cost grows with the value; BFCL's ids, counts and amounts are not negative.
MAX_NEGATIVE = 100_000
MAX_NEGATIVE_PER_ROLLOUT = 10 * MAX_NEGATIVE


# --- binding and types (BFCL-BIND, BFCL-TYPES) ---------------------------------------------------


def bind(info: MethodInfo, args: tuple[Any, ...], kwargs: Iterable[tuple[str, Any]]) -> dict[str, Any] | str:
    """Bind literal arguments to the method's parameters: the bound dict, or what is wrong."""
    if len(args) > len(info.params):
        return f"{info.name}() takes {len(info.params)} arguments but {len(args)} positional were given"
    bound = dict(zip(info.params, args, strict=False))
    for key, value in kwargs:
        if key not in info.params:
            return f"{info.name}() got an unexpected keyword argument `{key}`"
        if key in bound:
            return f"{info.name}() got multiple values for argument `{key}`"
        bound[key] = value
    missing = [p for p in info.params if p in info.required and p not in bound]
    if missing:
        return f"{info.name}() missing required argument(s): {', '.join(f'`{m}`' for m in missing)}"
    return bound


_TYPE_NAMES = {"string": "a string", "integer": "an integer", "float": "a number", "number": "a number"}


def _matches(value: Any, schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    if "enum" in schema and value not in schema["enum"]:
        return False
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind in ("float", "number"):
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "array":
        if not isinstance(value, list):
            return False
        items = schema.get("items")
        return items is None or all(_matches(v, items) for v in value)
    if kind == "dict":
        if not isinstance(value, dict):
            return False
        properties = schema.get("properties", {})
        return all(_matches(v, properties[k]) for k, v in value.items() if k in properties and v is not None)
    return True


def type_fault(info: MethodInfo, bound: Mapping[str, Any]) -> str | None:
    """The first argument whose value does not match the function doc's type, if any.

    ``None`` is accepted for optional parameters (the doc's "[Optional]"); an int is accepted
    where the doc says float.
    """
    for name, value in bound.items():
        schema = info.schema[name]
        if value is None and name not in info.required:
            continue
        if not _matches(value, schema):
            expected = _TYPE_NAMES.get(str(schema.get("type")), f"of type {schema.get('type')}")
            if "enum" in schema:
                expected += f" in {list(schema['enum'])}"
            return f"argument `{name}` of {info.name}() must be {expected}: got {type(value).__name__}"
    return None


def numbers(value: Any) -> Iterator[int]:
    """Every integer inside an argument value (lists, tuples and dict keys and values, at any
    depth; booleans are not numbers)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, bool):
            continue
        if isinstance(item, int):
            yield item
        elif isinstance(item, list | tuple):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())


#: The smallest integer of more than MAX_INT_DIGITS digits.
_INT_LIMIT = 10**MAX_INT_DIGITS


def number_fault(info: MethodInfo, bound: Mapping[str, Any]) -> str | None:
    """HOSTILE-BFCL-COST for every method of every class: no integer argument beyond
    :data:`MAX_INT_DIGITS` digits, no negative one beyond -:data:`MAX_NEGATIVE`."""
    for name, value in bound.items():
        for number in numbers(value):
            if abs(number) >= _INT_LIMIT:
                return f"argument `{name}` of {info.name}() holds an integer of over {MAX_INT_DIGITS} digits"
            if number < -MAX_NEGATIVE:
                return (
                    f"argument `{name}` of {info.name}() holds a negative integer below -{MAX_NEGATIVE} "
                    "(HOSTILE-BFCL-COST: its cost to Python's arithmetic grows with its value)"
                )
    return None


def limit_fault(info: MethodInfo, bound: Mapping[str, Any]) -> str | None:
    """Resource limits that keep one call from running for minutes (BFCL-LIMITS, HOSTILE-BFCL-COST)."""
    fault = number_fault(info, bound)
    if fault is not None:
        return fault
    if info.cls == "MathAPI" and info.name in ("logarithm", "square_root"):
        precision = bound.get("precision")
        if isinstance(precision, int) and not isinstance(precision, bool) and abs(precision) > MAX_PRECISION:
            return f"argument `precision` of {info.name}() exceeds the limit {MAX_PRECISION}"
    if info.cls == "MathAPI" and info.name == "power":
        base, exponent = bound.get("base"), bound.get("exponent")
        if (
            isinstance(base, int)
            and isinstance(exponent, int)
            and not isinstance(base, bool)
            and not isinstance(exponent, bool)
            and abs(base) > 1
            and exponent > 0
            and exponent * math.log2(abs(base)) > MAX_POWER_BITS
        ):
            return f"power() result would exceed {MAX_POWER_BITS:,} bits"
    return None


# --- error markers and labels (BFCL-ERROR-MARKER, BFCL-LABELS) -----------------------------------


def error_message(result: Any) -> str | None:
    """The error BFCL's result carries, or ``None``.

    Markers: an ``error`` key in a dict at any depth of dicts and lists, or a string starting
    with ``Error:`` as the result itself or as an element of a list result. Status-False
    results without an ``error`` key are domain outcomes, not errors.
    """
    if isinstance(result, str):
        return result if result.startswith("Error:") else None
    if isinstance(result, list):
        for element in result:
            if isinstance(element, str) and element.startswith("Error:"):
                return element
    stack: list[Any] = [result]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if "error" in item:
                return str(item["error"])
            values: Iterable[Any] = item.values()
        elif isinstance(item, list):
            values = item
        else:
            continue
        for value in values:
            if type(value) not in _SCALARS and isinstance(value, dict | list):
                stack.append(value)
    return None


_SCALARS = frozenset({str, int, float, bool, type(None)})


#: Message families, matched in this order; the first match gives the label (BFCL-LABELS).
FAMILIES: tuple[tuple[Label, re.Pattern[str]], ...] = (
    (
        Label.INFORMATION,
        re.compile(r"no available route|no available exchange rate|distance not found|^404$", re.I),
    ),
    (
        Label.PRECONDITION,
        re.compile(
            r"not logged in|not authenticated|please log in|no user is currently logged in|"
            r"token not initialized|token expired|market is closed|doors must be locked|brake pedal|"
            r"press the brake|start the engine before|^fuel tank is empty\.$",
            re.I,
        ),
    ),
    (
        Label.STATE_CONSISTENCY,
        re.compile(
            r"file exists|directory not empty|not a directory|is a directory|not a file or directory|"
            r"already (closed|resolved|completed|exists|registered|the root)|insufficient funds|"
            r"exceeded budget limit|balance is less than budget limit|above the tank capacity|"
            r"balance not found|min fuel level",
            re.I,
        ),
    ),
    (
        Label.DEPENDENCY,
        re.compile(
            r"no such file|no such directory|not found|not registered|"
            r"invalid stock symbol|invalid access token",
            re.I,
        ),
    ),
    (
        Label.SCHEMA,
        re.compile(
            r"^invalid |invalid (mode|option|priority|date format|character|travel class|ignition mode|"
            r"headlight mode|speed|fields|departure airport code|destination airport code)|"
            r"unsupported path|path not allowed|must be between|must be positive|cannot be negative|"
            r"must be numbers?|must be an integer|must be a number|cannot divide by zero|empty list|"
            r"negative number|is not supported|invalid operation|too large to represent|cannot be zero|"
            r"^wc: invalid mode|unexpected keyword|missing \d+ required|takes \d+ positional",
            re.I,
        ),
    ),
)


def classify(message: str) -> Label | None:
    """The label of an execution error message, or ``None`` when no family matches."""
    for label, pattern in FAMILIES:
        if pattern.search(message):
            return label
    return None


# --- rendering as BFCL's executor does (BFCL-SUCCESS) -------------------------------------------


def bfcl_text(result: Any) -> str:
    """The string BFCL's executor records for a result: str as is, dict as JSON, else ``str()``.

    Raises ``ValueError`` where BFCL's own conversion raises too (integers beyond Python's
    digit limit); the caller records that as an execution error, as BFCL does.
    """
    if type(result) is str:
        return result
    if type(result) is dict:
        try:
            return json.dumps(result)
        except Exception:
            return str(result)
    return str(result)


# --- state snapshots (for the cross-check) -------------------------------------------------------


def snapshot(value: Any, _depth: int = 0) -> Any:
    """A JSON value that equals another snapshot iff BFCL's ``==`` on the states would hold.

    Objects become their public attributes, except BFCL's file-system ``File`` (name, content)
    and ``Directory`` (name, contents), whose ``__eq__`` ignores the rest; dicts are sorted.
    """
    if _depth > 200:
        raise ValueError("state nested deeper than 200 levels")
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return {"float": repr(value)}
    if isinstance(value, list | tuple):
        return [snapshot(v, _depth + 1) for v in value]
    if isinstance(value, dict):
        items = [[snapshot(k, _depth + 1), snapshot(v, _depth + 1)] for k, v in value.items()]
        return {"dict": sorted(items, key=lambda kv: json.dumps(kv[0], sort_keys=True))}
    kind = type(value).__name__
    if kind == "File":
        return {"File": [value.name, value.content]}
    if kind == "Directory":
        return {"Directory": [value.name, snapshot(value.contents, _depth + 1)]}
    if hasattr(value, "__dict__"):
        public = {k: v for k, v in vars(value).items() if not k.startswith("_")}
        return {kind: snapshot(public, _depth + 1)}
    return {kind: str(value)}


def instance_snapshot(instances: Mapping[str, object]) -> dict[str, Any]:
    """Class name -> snapshot of the public attributes of its instance (BFCL's state check)."""
    return {
        name: snapshot({k: v for k, v in vars(obj).items() if not k.startswith("_")})
        for name, obj in sorted(instances.items())
    }


# --- the world -----------------------------------------------------------------------------------


@attrs.frozen(slots=True)
class Execution:
    """What executing one call gave: BFCL's text for it and the error it carries, if any."""

    text: str
    error: str | None
    raised: bool = False


class World:
    """Fresh instances of a task's involved classes, loaded from its initial config (BFCL-STATE).

    A world is owned by one replay and advanced in place, call by call (BFCL-LINEAR).
    """

    __slots__ = ("catalogue", "instances", "long_context", "negative_spent", "precision_spent")

    def __init__(self, entry: Entry) -> None:
        self.precision_spent = 0
        self.negative_spent = 0
        self.catalogue: Catalogue = catalogue()
        self.long_context = long_context(entry.category)
        self.instances: dict[str, object] = {}
        for name in entry.involved_classes:
            instance = self.catalogue.classes[name]()
            if name not in self.catalogue.stateless:
                config = json.loads(entry.config_text.get(name, "{}"))
                instance._load_scenario(config, long_context=self.long_context)
            self.instances[name] = instance

    def fork(self) -> World:
        """A copy of this world that goes its own way from here (its instances deep-copied)."""
        other = object.__new__(World)
        other.catalogue = self.catalogue
        other.long_context = self.long_context
        other.precision_spent = self.precision_spent
        other.instances = copy.deepcopy(self.instances)
        return other

    def method(self, name: str) -> MethodInfo | None:
        """The method called ``name`` if one of this world's classes has it."""
        info = self.catalogue.methods.get(name)
        if info is None or info.cls not in self.instances:
            return None
        return info

    def charge(self, info: MethodInfo, bound: Mapping[str, Any]) -> str | None:
        """Count a call's ``precision`` against the rollout's budget; the fault when it is spent
        (BFCL-LIMITS, HOSTILE-BFCL-COST: the cost of a rollout is bounded, not only of a call);
        the magnitudes of negative integer arguments of every method count against their own
        budget, :data:`MAX_NEGATIVE_PER_ROLLOUT`."""
        negative = sum(-n for value in bound.values() for n in numbers(value) if n < 0)
        if negative:
            self.negative_spent += negative
            if self.negative_spent > MAX_NEGATIVE_PER_ROLLOUT:
                return (
                    f"{info.name}(): negative integer arguments summed over this rollout exceed the "
                    f"limit {MAX_NEGATIVE_PER_ROLLOUT} (HOSTILE-BFCL-COST)"
                )
        if info.cls != "MathAPI" or info.name not in ("logarithm", "square_root"):
            return None
        precision = bound.get("precision")
        if not isinstance(precision, int) or isinstance(precision, bool):
            return None
        self.precision_spent += abs(precision)
        if self.precision_spent > MAX_PRECISION_PER_ROLLOUT:
            return (
                f"{info.name}(): `precision` summed over this rollout's logarithm and square_root "
                f"calls exceeds the limit {MAX_PRECISION_PER_ROLLOUT}"
            )
        return None

    def execute(self, info: MethodInfo, bound: Mapping[str, Any]) -> Execution:
        """Run a checked call on the owning instance; never lets an exception escape."""
        arguments = {name: copy_literal(value) for name, value in bound.items()}
        for name, default in info.defaults.items():  # BFCL-DEFAULTS: a fresh copy, not the shared one
            arguments.setdefault(name, thaw(default))
        target = getattr(self.instances[info.cls], info.name)
        if info.cls == "MathAPI":
            return _isolated_math(target, arguments)
        return _run(target, arguments)

    def run_trusted(self, call: ParsedCall) -> str:
        """Run a ground-truth call without checks other than binding; BFCL's text for it."""
        return self.run_as_bfcl(call, limits=False)

    def run_as_bfcl(self, call: ParsedCall, *, limits: bool = True) -> str:
        """BFCL's result text for a call its executor runs here (BFCL-PARITY).

        As BFCL's executor: a call that is not a plain literal call, names no method of the
        task's classes or does not bind raises (an error text, nothing runs); otherwise it runs,
        whatever its types or turn. With ``limits``, a call beyond BFCL-LIMITS is not run either.
        """
        info = self.method(call.name)
        if call.fault is not None or info is None:
            return EXECUTION_ERROR + (call.fault or f"name '{call.name}' is not defined")
        bound = bind(info, call.args, call.kwargs)
        if isinstance(bound, str):
            return EXECUTION_ERROR + bound
        limit = (limit_fault(info, bound) or self.charge(info, bound)) if limits else None
        if limit is not None:
            return EXECUTION_ERROR + limit
        return self.execute(info, bound).text


def copy_literal(value: Any) -> Any:
    """A deep copy of a literal value (lists, tuples and dicts of scalars), faster than deepcopy."""
    if isinstance(value, list):
        return [copy_literal(v) for v in value]
    if isinstance(value, dict):
        return {k: copy_literal(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(copy_literal(v) for v in value)
    return value


def _run(target: Any, arguments: dict[str, Any]) -> Execution:
    try:
        result = target(**arguments)
    except RecursionError:
        message = "maximum recursion depth exceeded"
        return Execution(EXECUTION_ERROR + message, f"RecursionError: {message}", True)
    except Exception as exc:
        return Execution(EXECUTION_ERROR + str(exc), f"{type(exc).__name__}: {exc}", True)
    try:
        text = bfcl_text(result)
    except Exception as exc:
        return Execution(EXECUTION_ERROR + str(exc), f"{type(exc).__name__}: {exc}", True)
    return Execution(text, error_message(result))


def _isolated_math(target: Any, arguments: dict[str, Any]) -> Execution:
    """Run a MathAPI method and restore the process-wide precision it sets (mpmath, decimal).

    The result is rendered before the precision is restored, as BFCL renders it.
    """
    mpmath = sys.modules.get("mpmath")
    saved_dps = mpmath.mp.dps if mpmath is not None else None
    with decimal.localcontext():
        try:
            return _run(target, arguments)
        finally:
            if mpmath is not None:
                mpmath.mp.dps = saved_dps


def same_state(model: World, gold: World) -> tuple[bool, str | None]:
    """BFCL's state check: every public attribute of each gold instance equals the model's."""
    for name, gold_instance in gold.instances.items():
        model_instance = model.instances[name]
        for attribute, expected in vars(gold_instance).items():
            if attribute.startswith("_"):
                continue
            try:
                actual = getattr(model_instance, attribute)
            except AttributeError:
                return False, f"{name}.{attribute} missing"
            if actual != expected:
                return False, f"{name}.{attribute} differs"
    return True, None


__all__ = [
    "EXECUTION_ERROR",
    "FAMILIES",
    "MAX_INT_DIGITS",
    "MAX_NEGATIVE",
    "MAX_NEGATIVE_PER_ROLLOUT",
    "MAX_POWER_BITS",
    "MAX_PRECISION",
    "MAX_PRECISION_PER_ROLLOUT",
    "Execution",
    "World",
    "bfcl_text",
    "bind",
    "classify",
    "error_message",
    "instance_snapshot",
    "limit_fault",
    "number_fault",
    "numbers",
    "same_state",
    "snapshot",
    "type_fault",
]
