"""The records reader's fast path decides exactly as the reference reader (schema + rules).

The reference is :func:`prefixexec.adapters.records.legacy_iter_lines`: the strict ``json``
parse, ``jsonschema`` with spec/record.schema.json, then ``record_to_rollout``. The fast path
(msgspec typed decoding, :func:`fast_rollouts`, :func:`record_chunks`) must

* accept only lines the reference accepts, with equal rollouts (meta included);
* accept every line the reference accepts, except the ones it leaves to the reference on
  purpose (integral floats such as ``1.0`` in an integer field, integers beyond 64 bits,
  numbers beyond the double range, lone surrogates);
* through the reader as a whole (fast path plus fallback), give the same rollouts, the same
  ``FILE:LINE`` places and the same first fault as the reference.

Lines are generated near the contract: valid records with one or more mutations (wrong types,
missing and extra keys, out-of-range values, bool for int, integral floats, null, repeated keys,
escapes, whitespace, both or neither of actions/outcome, label rules).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from prefixexec.adapters import InputError
from prefixexec.adapters.records import (
    fast_rollouts,
    iter_file,
    legacy_iter_lines,
    open_lines,
    record_chunks,
)
from prefixexec.kernel import Rollout
from prefixexec.kernel.accumulator import RolloutArrays

LABELS = ["schema", "dependency", "precondition", "state_consistency", "information"]
#: Mutations after which the fast path may leave a line the reference accepts to the reference.
DEFERRED = "deferred"

names = st.sampled_from(["a", "b", "x:y", "é", "long name", 't"q', "back\\slash", "u\u2028", "😀"])
plain = st.sampled_from(["a", "b", "c d", "m", "p:q"])


def _labels() -> st.SearchStrategy[Any]:
    # None: "label": null, which is no label (REC-FORMAT; issue 30: a data frame's missing label).
    return st.sampled_from(LABELS) | st.lists(st.sampled_from(LABELS), min_size=1, max_size=3) | st.none()


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | names,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(names, inner, max_size=3),
    max_leaves=6,
)


@st.composite
def valid_records(draw: st.DrawFn) -> dict[str, Any]:
    record: dict[str, Any] = {
        "dataset": draw(plain),
        "task_id": draw(names | st.integers(-5, 2**40)),
        "model": draw(plain),
        "method": draw(plain),
        "success": draw(st.booleans()),
    }
    if draw(st.booleans()):
        record["trial"] = draw(st.integers(0, 5))
    if draw(st.booleans()):
        T = draw(st.integers(1, 6))
        fed = draw(st.integers(1, T + 1))
        outcome: dict[str, Any] = {"T": T, "fed": fed}
        if fed <= T and draw(st.booleans()):
            outcome["label"] = draw(_labels())
        if fed <= T and draw(st.booleans()):
            outcome["reason"] = draw(names)
        record["outcome"] = outcome
    else:
        actions = []
        for _ in range(draw(st.integers(0, 4))):
            action: dict[str, Any] = {"tool": draw(names), "executable": draw(st.booleans())}
            if draw(st.booleans()):
                action["arguments"] = draw(st.dictionaries(names, json_values, max_size=3))
            if draw(st.booleans()):
                action["id"] = draw(names)
            if not action["executable"] and draw(st.booleans()):
                action["label"] = draw(_labels())
            if not action["executable"] and draw(st.booleans()):
                action["reason"] = draw(names)
            actions.append(action)
        record["actions"] = actions
        if draw(st.booleans()):
            record["no_tool_allowed"] = draw(st.booleans())
    if draw(st.integers(0, 3)) == 0:
        cost: dict[str, Any] = {}
        if draw(st.booleans()):
            cost["tokens"] = draw(st.integers(0, 10**6) | st.floats(0, 1e6))
        if draw(st.booleans()):
            cost["latency_s"] = draw(st.floats(0, 100))
        record["cost"] = cost
    if draw(st.integers(0, 3)) == 0:
        record["meta"] = draw(st.dictionaries(names, json_values, max_size=3))
    return record


def _objects(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    """Every object in ``value`` with its path."""
    found: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    if isinstance(value, dict):
        found.append((path, value))
        for k, v in value.items():
            found.extend(_objects(v, (*path, k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found.extend(_objects(v, (*path, i)))
    return found


WRONG = [None, True, False, 0, -1, 1.5, 2.0, "", "x", [], {}, ["schema"], 2**64, -(2**64), "schema"]


@st.composite
def near_valid_lines(draw: st.DrawFn) -> tuple[str, bool]:
    """A record line with mutations; and whether the fast path may defer it (see DEFERRED)."""
    record = draw(valid_records())
    deferred = False
    for _ in range(draw(st.integers(0, 2))):
        objects = _objects(record)
        _, obj = draw(st.sampled_from(objects))
        kind = draw(st.sampled_from(["drop", "extra", "wrong", "integral", "null", "both", "label", "fed"]))
        keys = list(obj)
        if kind == "drop" and keys:
            del obj[draw(st.sampled_from(keys))]
        elif kind == "extra":
            # copies: a later mutation must not change WRONG's own lists and dicts (Hypothesis
            # replays must draw the same data: FlakyStrategyDefinition otherwise)
            obj[draw(st.sampled_from(["extra", "T", "label", "reason", "trial", "outcome"]))] = copy.deepcopy(
                draw(st.sampled_from(WRONG))
            )
        elif kind == "wrong" and keys:
            obj[draw(st.sampled_from(keys))] = copy.deepcopy(draw(st.sampled_from(WRONG)))
        elif kind == "integral" and keys:
            key = draw(st.sampled_from(keys))
            if isinstance(obj[key], int) and not isinstance(obj[key], bool):
                obj[key] = float(obj[key])
                deferred = True
        elif kind == "null" and keys:
            obj[draw(st.sampled_from(keys))] = None
        elif kind == "both":
            record["outcome"] = {"T": 1, "fed": 1}
            record["actions"] = []
        elif kind == "label":
            label = draw(st.sampled_from(["unknown", [], ["schema", "nope"], "schema", LABELS]))
            obj["label"] = copy.deepcopy(label)
        elif kind == "fed" and "fed" in obj:
            obj["fed"] = draw(st.integers(-1, 9))
    for _, obj in _objects(record):
        for key, value in obj.items():
            if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2**63:
                deferred = True
            if key in ("trial", "T", "fed", "task_id") and isinstance(value, float) and value.is_integer():
                deferred = True
    text = json.dumps(
        record,
        ensure_ascii=draw(st.booleans()),
        separators=draw(st.sampled_from([(",", ":"), (", ", ": "), (" ,", " : ")])),
    )
    if draw(st.integers(0, 4)) == 0:
        # A repeated key: copy the first member of some object to its end.
        start = draw(st.sampled_from([i for i, ch in enumerate(text) if ch == "{"]))
        end = text.find("}", start)
        inner = text[start + 1 : end]
        if inner and "{" not in inner and "[" not in inner:
            first = inner.split(",")[0]
            text = text[:end] + "," + first + text[end:]
    if draw(st.integers(0, 6)) == 0:
        text = draw(st.sampled_from(["[]", "1", '"x"', "null", "{", text + " x", "{} {}", "NaN"]))
    if draw(st.integers(0, 8)) == 0:
        text = text.replace(":", ": \t", 1)
    return text + draw(st.sampled_from(["\n", "", " \n", "\r\n"])), deferred


def reference(line: str) -> Rollout | InputError:
    try:
        return next(iter([r for _, r in legacy_iter_lines("f.jsonl", [(1, line)])]))
    except InputError as exc:
        return exc


def same_rollout(a: Rollout, b: Rollout) -> bool:
    return (
        a == b
        and a.outcome.reason == b.outcome.reason
        and json.dumps(a.meta, sort_keys=False) == json.dumps(b.meta, sort_keys=False)
        and type(a.trial) is type(b.trial)
    )


@pytest.mark.spec("REC-FORMAT", "REC-OUTCOME")
@given(near_valid_lines())
def test_fast_path_accepts_exactly_what_the_schema_and_rules_accept(item: tuple[str, bool]) -> None:
    line, deferred = item
    ref = reference(line)
    fast = fast_rollouts([line])
    if fast is not None:
        assert isinstance(ref, Rollout), (line, ref)
        assert same_rollout(fast[0], ref), (line, fast[0], ref)
    elif not deferred:
        assert not isinstance(ref, Rollout), (line, ref)


@st.composite
def jsonl_files(draw: st.DrawFn) -> list[str]:
    """Lines of a file: mostly valid records (some repeated keys), blank lines, a bad line or not."""
    lines = []
    for _ in range(draw(st.integers(1, 12))):
        if draw(st.integers(0, 5)) == 0:
            lines.append(draw(st.sampled_from(["\n", "  \n", "\t\n"])))
        elif draw(st.integers(0, 3)) == 0:
            lines.append(draw(near_valid_lines())[0].rstrip("\n") + "\n")
        else:
            lines.append(json.dumps(draw(valid_records())) + "\n")
    return lines


def _reader_result(fn: Any) -> tuple[list[tuple[str, Rollout]], tuple[str, str] | None]:
    got: list[tuple[str, Rollout]] = []
    try:
        for item in fn():
            got.append(item)
    except InputError as exc:
        return got, (exc.where, exc.what)
    return got, None


def _assert_chunks_agree(
    name: str, size: int, block: int, want: list[tuple[str, Rollout]], want_fault: tuple[str, str] | None
) -> None:
    """record_chunks(name, size, block) gives the reference's rows (keys and every column),
    places and first fault."""
    rows: list[RolloutArrays] = []
    places: list[str] = []
    fault = None
    for arrays, wheres, error in record_chunks(name, size, block):
        rows.append(arrays)
        places.extend(wheres[i] for i in range(len(wheres)))
        if error is not None:
            fault = (error.where, error.what)
    assert fault == want_fault
    assert places == [w for w, _ in want]
    expected = RolloutArrays.from_rollouts([r for _, r in want])
    assert [a.key(i) for a in rows for i in range(len(a))] == [expected.key(i) for i in range(len(expected))]
    for column in ("trial", "T", "fed", "Y", "label"):
        joined = np.concatenate([getattr(a, column) for a in rows]) if rows else np.zeros(0)
        assert joined.tolist() == getattr(expected, column).tolist(), column


@pytest.mark.spec("REC-FORMAT", "REC-ERRORS")
@given(jsonl_files(), st.integers(1, 5), st.sampled_from([1, 50, 200, 1 << 17]))
def test_the_reader_gives_the_reference_rollouts_places_and_first_fault(
    tmp_path_factory: pytest.TempPathFactory, lines: list[str], size: int, block: int
) -> None:
    path = tmp_path_factory.mktemp("fast") / "r.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    name = str(path)
    numbered = list(open_lines(name))  # the reference's lines (text mode, as today)
    want, want_fault = _reader_result(lambda: legacy_iter_lines(name, numbered))
    got, got_fault = _reader_result(lambda: iter_file(name))
    assert got_fault == want_fault
    assert [w for w, _ in got] == [w for w, _ in want]
    assert all(same_rollout(a, b) for (_, a), (_, b) in zip(got, want, strict=True))
    # The columns of record_chunks: the same rows, places and fault, in batches of `size` rows
    # made of blocks of `block` bytes.
    _assert_chunks_agree(name, size, block, want, want_fault)


@pytest.mark.spec("REC-FORMAT")
def test_the_fast_path_decides_typical_records_itself() -> None:
    """Ordinary records are accepted by the fast path, not handed to the reference."""
    lines = [
        '{"dataset": "d", "task_id": "t1", "model": "m", "method": "x", "success": true, '
        '"outcome": {"T": 3, "fed": 2, "label": ["information", "dependency"], "reason": "r: no"}}\n',
        '{"dataset": "d", "task_id": 7, "model": "m", "method": "x", "trial": 2, "success": false, '
        '"actions": [{"tool": "a", "arguments": {"q": "x:y"}, "executable": true}, '
        '{"tool": "b", "executable": false, "label": "schema"}], "meta": {"k": [1, 2.5, null]}}\n',
        '{"dataset": "d", "task_id": "t\\"3", "model": "m", "method": "x", "success": true, '
        '"actions": [], "no_tool_allowed": true, "cost": {"tokens": 10, "latency_s": 0.5}}\n',
    ]
    fast = fast_rollouts(lines)
    assert fast is not None
    # Hand-computed: (T, FED, label) of the three records (EQ-1, CONV-NOTOOL, CONV-LABEL-ORDER).
    got = [(r.outcome.T, r.outcome.fed, r.outcome.label and r.outcome.label.value) for r in fast]
    assert got == [(3, 2, "dependency"), (2, 2, "schema"), (1, 2, None)]
    for line, rollout in zip(lines, fast, strict=True):
        ref = reference(line)
        assert isinstance(ref, Rollout) and same_rollout(rollout, ref)


@pytest.mark.spec("REC-ERRORS")
def test_a_repeated_key_is_left_to_the_reference_and_rejected() -> None:
    line = (
        '{"dataset": "d", "dataset": "e", "task_id": "t", "model": "m", "method": "x", '
        '"success": true, "outcome": {"T": 1, "fed": 2}}'
    )
    assert fast_rollouts([line]) is None
    ref = reference(line)
    assert isinstance(ref, InputError) and "appears twice" in ref.what
    nested = (
        '{"dataset": "d", "task_id": "t", "model": "m", "method": "x", "success": true, '
        '"actions": [{"tool": "a", "arguments": {"q": 1, "q": 2}, "executable": true}]}'
    )
    assert fast_rollouts([nested]) is None
    escaped = nested.replace('"q": 2', '"\\u0071": 2')  # the same key, escaped
    assert fast_rollouts([escaped]) is None
    assert isinstance(reference(escaped), InputError)


GOOD = (
    '{"dataset": "d", "task_id": "t%d", "model": "m", "method": "x", "success": true, '
    '"outcome": {"T": 2, "fed": 3}}'
)


@pytest.mark.spec("REC-ERRORS")
@pytest.mark.parametrize(
    "content",
    [
        # bytes that are not UTF-8 after many good lines (the block reader hands over to text mode)
        ("\n".join(GOOD % i for i in range(300)) + "\n").encode() + b'{"dataset": "\xff"}\n',
        # \r and \r\n line breaks (text mode reads \r as a line break too)
        ("\r\n".join(GOOD % i for i in range(50)) + "\r" + GOOD % 99).encode(),
        # blank lines of every kind, and a non-breaking space line (blank to str.isspace)
        ("\n \n\t\n".join(GOOD % i for i in range(40)) + "\n\u00a0\n" + GOOD % 77 + "\n").encode(),
        # a bad line shortly before bytes that are not UTF-8 (text mode stops at the bytes first)
        ("\n".join(GOOD % i for i in range(300)) + '\n{"dataset": 1}\n').encode() + b"\xff\n",
        # a bad line in the middle, a repeated key after it
        ("\n".join(GOOD % i for i in range(100)) + '\n{"dataset": 1}\n' + GOOD % 1).encode(),
    ],
)
@pytest.mark.parametrize("block", [64, 1 << 17])
def test_block_reader_hands_over_faults_and_odd_lines_as_the_reference_reads_them(
    tmp_path: Path, content: bytes, block: int
) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(content)
    want, want_fault = _reader_result(lambda: legacy_iter_lines(str(path), open_lines(str(path))))
    places: list[str] = []
    fault = None
    for _arrays, wheres, error in record_chunks(str(path), 7, block):
        places.extend(wheres[i] for i in range(len(wheres)))
        if error is not None:
            fault = (error.where, error.what)
    assert fault == want_fault
    assert places == [w for w, _ in want]


@pytest.mark.spec("REC-ERRORS")
@pytest.mark.parametrize(
    "content",
    [
        b"a" * (1 << 21),  # ASCII pieces only
        b"a" * ((1 << 20) - 1) + "é".encode() + b"a",  # a sequence split between two pieces
        b"a" * (1 << 20) + b"\xff",  # a bad byte in an ASCII file's second piece
        b"a" * ((1 << 20) - 1) + b"\xc3",  # a sequence cut off by the end of the file
        ("é" * 600_000).encode(),  # no ASCII piece at all
    ],
)
def test_the_utf8_check_agrees_with_decoding_the_whole_file(tmp_path: Path, content: bytes) -> None:
    from prefixexec.adapters.records import _utf8

    path = tmp_path / "f"
    path.write_bytes(content)
    try:
        content.decode("utf-8")
        valid = True
    except UnicodeDecodeError:
        valid = False
    assert _utf8(str(path)) is valid


@pytest.mark.spec("REC-ERRORS")
@pytest.mark.parametrize(
    "last",
    [
        # a repeated key whose dropped value holds a ':' (so do kept values)
        '{"dataset": "d:1", "task_id": "t:9", "model": "m", "method": "x", "success": true, '
        '"outcome": {"T": 2, "fed": 1, "reason": "a:b", "reason": "c:d"}}',
        # a repeated key next to members the count does not cover (no_tool_allowed, cost, meta)
        '{"dataset": "d", "task_id": 9, "model": "m", "method": "x", "success": true, "trial": 1, '
        '"trial": 1, "cost": {"tokens": 1}, "meta": {"k:": "v"}, "outcome": {"T": 2, "fed": 3}}',
        # a key repeated inside meta
        '{"dataset": "d", "task_id": "t", "model": "m", "method": "x", "success": true, '
        '"meta": {"k": 1, "k": 2}, "outcome": {"T": 2, "fed": 3}}',
    ],
)
def test_block_reader_finds_a_repeated_key_among_outcome_records(tmp_path: Path, last: str) -> None:
    """The block reader counts an outcome block's keys without re-encoding it; a repeat is still
    handed to the reference, which rejects it at its line."""
    path = tmp_path / "r.jsonl"
    good = [GOOD % i for i in range(30)] + [GOOD.replace('"d"', '"d:x"') % 99]
    path.write_text("\n".join([*good, last]) + "\n", encoding="utf-8")
    fault = None
    rows = 0
    for arrays, _wheres, error in record_chunks(str(path), 1000, 1 << 17):
        rows += len(arrays)
        if error is not None:
            fault = (error.where, error.what)
    assert rows == len(good)
    assert fault is not None and fault[0] == f"{path}:{len(good) + 1}" and "appears twice" in fault[1]


@pytest.mark.spec("REC-FORMAT", "REC-ERRORS")
@pytest.mark.parametrize("bad_at", [None, 150])
@pytest.mark.parametrize("task_limit", [4096, 100])
def test_block_reader_learns_names_and_reads_any_number_of_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad_at: int | None, task_limit: int
) -> None:
    """Dataset, model, method and task names are decoded as the names seen so far; a block with
    a new one (here every few lines, 200 models in all: more than the reader keeps; 400 task
    ids, more than 100) is read as any other, and a bad record among them is still the
    reference's first fault."""
    from prefixexec.adapters import records
    from prefixexec.adapters.records import LITERAL_NAMES

    monkeypatch.setattr(records, "LITERAL_TASKS", task_limit)
    if bad_at is None:  # valid records: the block reader reads them all, none is handed over
        monkeypatch.setattr(records, "_line_record_chunks", None)

    lines = []
    for i in range(400):
        record: dict[str, Any] = {
            "dataset": f"d{i % 3}",
            "task_id": f"t{i}" if i % 5 else i,
            "model": f"m{i // 2}",
            "method": "x" if i % 7 else "y:z",
            "success": i % 2 == 0,
            "outcome": {"T": 2, "fed": 1 + i % 3},
        }
        if i == bad_at:
            record["outcome"] = {"T": 2, "fed": 4}
        lines.append(json.dumps(record) + "\n")
    assert len({json.loads(x)["model"] for x in lines}) > LITERAL_NAMES
    path = tmp_path / "r.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    want, want_fault = _reader_result(lambda: legacy_iter_lines(str(path), open_lines(str(path))))
    _assert_chunks_agree(str(path), 64, 300, want, want_fault)


@pytest.mark.spec("REC-FORMAT", "REC-OUTCOME")
def test_a_null_label_is_no_label_on_both_paths() -> None:
    # Issue 30: "label": null (a data frame's missing label) was refused with a bare schema message.
    lines = [
        '{"dataset": "d", "task_id": "a", "model": "m", "method": "x", "success": true, '
        '"outcome": {"T": 3, "fed": 2, "label": null}}\n',
        '{"dataset": "d", "task_id": "b", "model": "m", "method": "x", "success": true, '
        '"outcome": {"T": 3, "fed": 4, "label": null}}\n',
        '{"dataset": "d", "task_id": "c", "model": "m", "method": "x", "success": false, '
        '"actions": [{"tool": "a", "executable": true, "label": null}, '
        '{"tool": "b", "executable": false, "label": null}]}\n',
    ]
    fast = fast_rollouts(lines)
    assert fast is not None  # decided by the fast path itself
    # Hand-computed (T, FED, label): a failure at 2 unlabelled, a fully executable one, FED 2 of 2.
    assert [(r.outcome.T, r.outcome.fed, r.outcome.label) for r in fast] == [
        (3, 2, None),
        (3, 4, None),
        (2, 2, None),
    ]
    for line, rollout in zip(lines, fast, strict=True):
        ref = reference(line)
        assert isinstance(ref, Rollout) and same_rollout(rollout, ref)
    # A real label on a fully executable outcome is still an error on both paths.
    bad = lines[1].replace('"label": null', '"label": "schema"')
    assert isinstance(reference(bad), InputError)
