"""The shared input-shape checks (adapters/shape.py): each returns the value or names the fault."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest

from prefixexec.adapters import InputError, shape


@pytest.mark.spec("ARCH-ACYCLIC", "REC-ERRORS")
@pytest.mark.parametrize(
    ("check", "value", "message"),
    [
        (lambda v: shape.need_dict(v, "f:1", "'info'"), [], "f:1: 'info' must be a JSON object, got list"),
        (lambda v: shape.need_list(v, "f:1", "'tools'"), None, "f:1: 'tools' must be a JSON list, got null"),
        (lambda v: shape.need_str(v, "f:1", "'name'"), 3, "f:1: 'name' must be a string, got int"),
        (lambda v: shape.need_str(v, "f:1", "'name'", non_empty=True), "", "must be a non-empty string"),
        (lambda v: shape.need_number(v, "f:1", "'reward'"), True, "'reward' must be a number, got bool"),
        (lambda v: shape.need_number(v, "f", "'r'", finite=True), math.inf, "must be a finite number"),
        (lambda v: shape.need_bool(v, "f:1", "'success'"), 1, "f:1: 'success' must be a boolean, got 1"),
        (lambda v: shape.task_id(v, "f:1"), False, "'task_id' must be a string or an integer, got bool"),
        (lambda v: shape.trial(v, "f:1"), -1, "'trial' must be an integer >= 0, got -1"),
        (lambda v: shape.optional_number({"x": v}, "x", "f"), "1", "'x' must be a finite number or null"),
        (lambda v: shape.optional_str({"x": v}, "x", "f"), 1, "'x' must be a string or null, got int"),
    ],
)
def test_a_wrong_shape_is_an_input_error_naming_where_and_what(
    check: Callable[[object], object], value: object, message: str
) -> None:
    with pytest.raises(InputError) as caught:
        check(value)
    assert message in str(caught.value)


@pytest.mark.spec("ARCH-ACYCLIC")
def test_a_right_shape_is_returned() -> None:
    assert shape.need_dict({"a": 1}, "f", "x") == {"a": 1}
    assert shape.need_number(2, "f", "x") == 2.0 and isinstance(shape.need_number(2, "f", "x"), float)
    assert shape.task_id(7, "f") == "7" and shape.trial(None, "f") == 0 and shape.trial(3, "f") == 3
    assert shape.optional_number({}, "x", "f") is None and shape.optional_str({"x": None}, "x", "f") is None
