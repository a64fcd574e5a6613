"""Input-shape checks shared by every reader (spec: ARCH-ACYCLIC, REC-ERRORS).

Each check returns the value with its type narrowed, or raises :class:`InputError` naming where
(``FILE``, ``FILE:LINE`` or a record path), what was expected and what was found, so that every
adapter words the same fault the same way: ``'tools' must be a JSON list, got dict``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .errors import InputError


class _Absent:
    """The value of a field a JSON object does not have (:data:`ABSENT`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "absent"

    def __bool__(self) -> bool:  # ``field(x, k) or default`` reads like ``x.get(k) or default``
        return False


#: What :func:`field` gives for a missing key, so that messages say ``absent``, not ``null``
#: (an absent field is called absent: REC-ERRORS).
ABSENT: Any = _Absent()


def field(entry: Mapping[str, Any], key: str) -> Any:
    """``entry[key]``, or :data:`ABSENT` when ``entry`` has no such key."""
    return entry.get(key, ABSENT)


def kind(value: object) -> str:
    """The name of a decoded JSON value's type, as the messages print it (``null`` for None,
    ``absent`` for a missing field)."""
    if value is ABSENT:
        return "absent"
    return "null" if value is None else type(value).__name__


def need_dict(value: object, where: str, what: str) -> dict[str, Any]:
    """``value`` if it is a JSON object."""
    if not isinstance(value, dict):
        raise InputError(where, f"{what} must be a JSON object, got {kind(value)}")
    return value


def need_list(value: object, where: str, what: str) -> list[Any]:
    """``value`` if it is a JSON list."""
    if not isinstance(value, list):
        raise InputError(where, f"{what} must be a JSON list, got {kind(value)}")
    return value


def need_str(value: object, where: str, what: str, *, non_empty: bool = False) -> str:
    """``value`` if it is a string (non-empty when ``non_empty``)."""
    if not isinstance(value, str):
        raise InputError(where, f"{what} must be a string, got {kind(value)}")
    if non_empty and not value:
        raise InputError(where, f"{what} must be a non-empty string")
    return value


def need_number(value: object, where: str, what: str, *, finite: bool = False) -> float:
    """``value`` as a float if it is a JSON number (not a boolean; finite when ``finite``)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(where, f"{what} must be a number, got {kind(value)}")
    if finite and not math.isfinite(value):
        raise InputError(where, f"{what} must be a finite number, got {value!r}")
    return float(value)


def need_bool(value: object, where: str, what: str) -> bool:
    """``value`` if it is a boolean."""
    if not isinstance(value, bool):
        raise InputError(where, f"{what} must be a boolean, got {value!r}")
    return value


def task_id(value: object, where: str) -> str:
    """A task id: a string, or an integer (not a boolean) compared as its decimal string."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise InputError(where, f"'task_id' must be a string or an integer, got {kind(value)}")
    return str(value)


def trial(value: object, where: str) -> int:
    """A trial index: an integer >= 0 (not a boolean); absent (None) is trial 0."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(where, f"'trial' must be an integer >= 0, got {value!r}")
    return value


def optional_number(entry: Mapping[str, Any], key: str, where: str) -> float | None:
    """``entry[key]`` as a finite float, or None when absent or null."""
    value = entry.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(where, f"'{key}' must be a finite number or null, got {value!r}")
    return float(value)


def optional_str(entry: Mapping[str, Any], key: str, where: str) -> str | None:
    """``entry[key]`` if it is a string, or None when absent or null."""
    value = entry.get(key)
    if value is not None and not isinstance(value, str):
        raise InputError(where, f"'{key}' must be a string or null, got {type(value).__name__}")
    return value
