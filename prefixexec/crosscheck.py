"""Cross-checking another tool's per-condition metrics against ours.

(spec: XCHK-INPUT, XCHK-COMPARE, XCHK-ROLLOUTS)

Their report is our ``score --json`` shape (any subset of its keys; a condition may add
``"rollouts": [{"task_id", "trial"?, "fed", "T"?, "label"?}]``) or a CSV with one row per
condition whose columns are mapped to our names. Every value they report is compared with
ours: counts must be equal, ratios may differ by the tolerance (by default 1e-9 for JSON
numbers and half a unit of the last printed digit for CSV cells), exact rationals must be
equal, ``null``/``n/a`` matches only an undefined value. Per-rollout FED, T and label are
compared when they give them.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

import attrs

from prefixexec.adapters import InputError
from prefixexec.adapters.numbers import ascii_digits, json_fault
from prefixexec.adapters.records import parse_json_line
from prefixexec.kernel import LABEL_KEYS, UNLABELLED, ConditionKey, Rollout

from .audit_table import UNDEFINED, parse_figure
from .conformance import SCALAR_KEYS, parse_rational
from .inference import ConditionResult, ci_json
from .numbers import count as counted

#: Condition columns of a CSV report (our names; ``--map OURS=THEIRS`` renames).
CONDITION_COLUMNS = SCALAR_KEYS
#: Columns of a per-rollout CSV (``--their-rollouts``).
ROLLOUT_COLUMNS = ("dataset", "model", "method", "task_id", "trial", "fed", "T", "label")
COUNT_KEYS = ("N", "RR_eligible", "recovered", "fully_executable")
RATIO_KEYS = ("TER", "AUC_PEC", "mean_FED", "success", "RR")
DEFAULT_TOLERANCE = Fraction(1, 10**9)

#: How a value is compared: "count" exactly, "ratio" within the tolerance, "exact" as rationals,
#: "float" (intervals) within the tolerance.
Kind = str


@attrs.frozen(slots=True)
class Reported:
    """One value they report: ``None`` means they report it as undefined."""

    value: Fraction | None
    text: str
    kind: Kind
    tolerance: Fraction


@attrs.frozen(slots=True)
class TheirRollout:
    task_id: str
    trial: int
    fed: int
    T: int | None
    #: The label they give (``None``: none); ``has_label`` False when they give no label field.
    label: str | None
    has_label: bool
    where: str


@attrs.frozen(slots=True)
class TheirCondition:
    key: ConditionKey
    where: str
    values: Mapping[str, Reported]
    #: Reported lengths of the curves (PEC, PEC_elig, n_k and their exact forms).
    lengths: Mapping[str, int]
    rollouts: Mapping[tuple[str, int], TheirRollout] | None


# ---------------------------------------------------------------------------------------------
# Reading their report (XCHK-INPUT)


#: XCHK-NUMBERS: the most digits of a number or an exact rational in their report (Python's own
#: int <-> str limit); beyond it a value is refused with one line.
MAX_DIGITS = 4300


def _number(where: str, value: Any) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(where, f"expected a number or null, got {_shown(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(where, f"expected a finite number, got {value!r}")
    return Fraction(value)


def _shown(value: Any, limit: int = 60) -> str:
    text = json.dumps(value[:limit] if isinstance(value, str) else value)
    return text if len(text) <= limit + 2 else text[: limit - 3] + "..."


def _approx(value: Fraction) -> float:
    """``float(value)``, or an infinity where the value is beyond floats (the comparison is
    exact; the float is for display: XCHK-NUMBERS)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _reported_json(where: str, value: Any, kind: Kind, tol: Fraction) -> Reported:
    text = json.dumps(value)
    if value is None:
        return Reported(None, "null", kind, tol)
    if kind == "exact":
        if isinstance(value, str) and len(value) > 2 * MAX_DIGITS + 2:
            raise InputError(where, f"an exact rational of more than {MAX_DIGITS} digits (XCHK-NUMBERS)")
        parsed = parse_rational(value)
        if parsed is None:
            raise InputError(
                where, f'expected an exact rational string such as "139/200", got {_shown(value)}'
            )
        return Reported(parsed, str(value), kind, Fraction(0))
    return Reported(_number(where, value), text, kind, tol)


def _list(where: str, value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise InputError(where, f"expected a list, got {json.dumps(value)[:60]}")
    return value


def _dict(where: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InputError(where, f"expected an object, got {json.dumps(value)[:60]}")
    return value


def _flatten(
    cond: Mapping[str, Any], where: str, tol: Fraction
) -> tuple[dict[str, Reported], dict[str, int]]:
    values: dict[str, Reported] = {}
    lengths: dict[str, int] = {}

    def put(path: str, value: Any, kind: Kind) -> None:
        values[path] = _reported_json(f"{where}.{path}", value, kind, tol)

    for key in COUNT_KEYS:
        if key in cond:
            put(key, cond[key], "count")
    for key in RATIO_KEYS:
        if key in cond:
            put(key, cond[key], "ratio")
    for key, kind in (("PEC", "ratio"), ("PEC_elig", "ratio"), ("n_k", "count")):
        if key in cond:
            items = _list(f"{where}.{key}", cond[key])
            lengths[key] = len(items)
            for k, v in enumerate(items, start=1):
                put(f"{key}[k={k}]", v, kind)
    if "labels" in cond:
        for name, v in _dict(f"{where}.labels", cond["labels"]).items():
            put(f"labels.{name}", v, "count")
    if "decomposition" in cond:
        d = _dict(f"{where}.decomposition", cond["decomposition"])
        for name in ("q", "s", "r"):
            if name in d:
                put(f"decomposition.{name}", d[name], "ratio")
        for name in ("uninterrupted", "recovered"):
            if name in d:
                put(f"decomposition.{name}", d[name], "count")
    if "exact" in cond:
        e = _dict(f"{where}.exact", cond["exact"])
        for key in RATIO_KEYS:
            if key in e:
                put(f"exact.{key}", e[key], "exact")
        for key in ("PEC", "PEC_elig"):
            if key in e:
                items = _list(f"{where}.exact.{key}", e[key])
                lengths[f"exact.{key}"] = len(items)
                for k, v in enumerate(items, start=1):
                    put(f"exact.{key}[k={k}]", v, "exact")
        if "decomposition" in e:
            d = _dict(f"{where}.exact.decomposition", e["decomposition"])
            for name in ("q", "s", "r"):
                if name in d:
                    put(f"exact.decomposition.{name}", d[name], "exact")
    if "ci" in cond:
        ci = _dict(f"{where}.ci", cond["ci"])
        for key in ("TER", "AUC_PEC", "mean_FED", "success", "RR_wilson", "RR_bootstrap"):
            if key in ci:
                _interval(put, f"ci.{key}", ci[key], f"{where}.ci.{key}")
        for key in ("PEC", "PEC_elig"):
            if key in ci:
                for k, pair in enumerate(_list(f"{where}.ci.{key}", ci[key]), start=1):
                    _interval(put, f"ci.{key}[k={k}]", pair, f"{where}.ci.{key}[{k - 1}]")
    return values, lengths


def _interval(put: Any, path: str, pair: Any, where: str) -> None:
    if pair is None:
        put(f"{path}.lo", None, "float")
        put(f"{path}.hi", None, "float")
        return
    items = _list(where, pair)
    if len(items) != 2:
        raise InputError(where, f"expected [lo, hi], got {json.dumps(pair)}")
    put(f"{path}.lo", items[0], "float")
    put(f"{path}.hi", items[1], "float")


def _str_field(where: str, obj: Mapping[str, Any], key: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not value:
        raise InputError(where, f"'{key}' must be a non-empty string")
    return value


def _their_rollout_json(where: str, obj: Any) -> TheirRollout:
    r = _dict(where, obj)
    unknown = sorted(set(r) - {"task_id", "trial", "fed", "T", "label", "success"})
    if unknown:
        raise InputError(where, f"unknown key(s) {', '.join(unknown)} in a rollout")
    task = r.get("task_id")
    if isinstance(task, bool) or not isinstance(task, str | int) or task == "":
        raise InputError(where, "'task_id' must be a non-empty string or an integer")
    trial = r.get("trial", 0)
    fed = r.get("fed")
    T = r.get("T")
    for name, v, required in (("trial", trial, True), ("fed", fed, True), ("T", T, False)):
        if (v is not None or required) and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
            raise InputError(where, f"'{name}' must be a non-negative integer, got {json.dumps(v)}")
    label = r.get("label")
    if label is not None and not isinstance(label, str):
        raise InputError(where, f"'label' must be a string or null, got {json.dumps(label)}")
    assert isinstance(fed, int) and isinstance(trial, int)
    return TheirRollout(str(task), trial, fed, T, _norm_label(label), "label" in r, where)


def _norm_label(label: str | None) -> str | None:
    if label is None or label.strip() in ("", UNLABELLED, "none"):
        return None
    return label.strip()


def _add_rollout(table: dict[tuple[str, int], TheirRollout], r: TheirRollout) -> None:
    key = (r.task_id, r.trial)
    if key in table:
        raise InputError(r.where, f"rollout (task_id, trial) = {key!r} already given at {table[key].where}")
    table[key] = r


def read_their_json(path: str, tolerance: Fraction | None) -> list[TheirCondition]:
    """Their report in our ``score --json`` shape (any subset of its keys per condition)."""
    text = _read_text(path)
    try:
        doc = parse_json_line(text)
    except ValueError as exc:
        raise InputError(path, f"not valid JSON: {json_fault(exc)}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("conditions"), list):
        raise InputError(path, "expected an object with a 'conditions' list (the score --json shape)")
    tol = DEFAULT_TOLERANCE if tolerance is None else tolerance
    out: list[TheirCondition] = []
    for i, cond in enumerate(doc["conditions"]):
        where = f"{path}: conditions[{i}]"
        cond = _dict(where, cond)
        key = ConditionKey(*(_str_field(where, cond, k) for k in ("dataset", "model", "method")))
        values, lengths = _flatten(cond, where, tol)
        rollouts: dict[tuple[str, int], TheirRollout] | None = None
        if "rollouts" in cond:
            rollouts = {}
            for j, r in enumerate(_list(f"{where}.rollouts", cond["rollouts"])):
                _add_rollout(rollouts, _their_rollout_json(f"{where}.rollouts[{j}]", r))
        out.append(TheirCondition(key, where, values, lengths, rollouts))
    return _unique(out)


def _unique(conditions: list[TheirCondition]) -> list[TheirCondition]:
    seen: dict[ConditionKey, str] = {}
    for c in conditions:
        if c.key in seen:
            raise InputError(c.where, f"condition {_name(c.key)} already reported at {seen[c.key]}")
        seen[c.key] = c.where
    return conditions


def _read_text(path: str) -> str:
    from prefixexec.adapters.inputs import read_text  # the checks of every input (HOSTILE-*)

    return read_text(path, "a file")


def parse_mapping(items: Iterable[str], allowed: Sequence[str]) -> dict[str, str]:
    """``OURS=THEIRS`` pairs of ``--map`` (our column name, the column in their CSV)."""
    mapping: dict[str, str] = {}
    for item in items:
        ours, sep, theirs = item.partition("=")
        ours, theirs = ours.strip(), theirs.strip()
        if not sep or not ours or not theirs:
            raise InputError("--map", f"expected OURS=THEIRS, got {item!r}")
        if ours not in allowed:
            raise InputError("--map", f"unknown name {ours!r} (ours are: {', '.join(allowed)})")
        if ours in mapping:
            raise InputError("--map", f"{ours!r} mapped twice")
        mapping[ours] = theirs
    return mapping


def _csv_rows(path: str) -> tuple[list[str], list[tuple[str, dict[str, str]]]]:
    text = _read_text(path)
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))  # CSV's own line ends, quoted ones kept
    except csv.Error as exc:
        raise InputError(path, f"not valid CSV: {exc}") from None
    numbered = [(i, r) for i, r in enumerate(rows, start=1) if r and any(c.strip() for c in r)]
    if not numbered:
        raise InputError(path, "empty file: expected a header row")
    (_, header), body = numbered[0], numbered[1:]
    header = [h.strip() for h in header]
    out = []
    for number, cells in body:
        where = f"{path}:{number}"
        if len(cells) != len(header):
            raise InputError(where, f"{len(cells)} cells, the header has {len(header)}")
        out.append((where, dict(zip(header, cells, strict=True))))
    return header, out


def _columns(
    path: str, header: list[str], names: Sequence[str], mapping: Mapping[str, str]
) -> dict[str, str]:
    """Our name -> their column, for the names their header has."""
    found: dict[str, str] = {}
    for name in names:
        column = mapping.get(name, name)
        if column in header:
            found[name] = column
        elif name in mapping:
            raise InputError(
                path, f"--map {name}={column}: no column {column!r} (columns: {', '.join(header)})"
            )
    for name in ("dataset", "model", "method"):
        if name not in found:
            raise InputError(path, f"no column for {name!r}; add one or map it with --map {name}=COLUMN")
    return found


def _csv_value(where: str, name: str, column: str, text: str, tolerance: Fraction | None) -> Reported | None:
    cell = text.strip()
    if not cell:
        return None
    kind = "count" if name in COUNT_KEYS else "ratio"
    if cell.lower() in UNDEFINED:
        return Reported(None, cell, kind, Fraction(0))
    figure = parse_figure(cell, column, where)
    assert figure is not None
    return Reported(figure.value, cell, kind, figure.half_unit if tolerance is None else tolerance)


def read_their_csv(path: str, mapping: Mapping[str, str], tolerance: Fraction | None) -> list[TheirCondition]:
    """Their report as a CSV, one row per condition; columns named as ours unless mapped."""
    header, rows = _csv_rows(path)
    columns = _columns(path, header, CONDITION_COLUMNS, mapping)
    out: list[TheirCondition] = []
    for where, cells in rows:
        key = ConditionKey(*(cells[columns[k]].strip() for k in ("dataset", "model", "method")))
        if not all((key.dataset, key.model, key.method)):
            raise InputError(where, "empty dataset, model or method")
        values: dict[str, Reported] = {}
        for name in CONDITION_COLUMNS[3:]:
            if name in columns:
                reported = _csv_value(where, name, columns[name], cells[columns[name]], tolerance)
                if reported is not None:
                    values[name] = reported
        out.append(TheirCondition(key, where, values, {}, None))
    return _unique(out)


def read_their_rollouts_csv(path: str, mapping: Mapping[str, str]) -> dict[ConditionKey, list[TheirRollout]]:
    """Their per-rollout FED (and T, label) as a CSV, one row per rollout."""
    header, rows = _csv_rows(path)
    columns = _columns(path, header, ROLLOUT_COLUMNS, mapping)
    for required in ("task_id", "fed"):
        if required not in columns:
            raise InputError(path, f"no column for {required!r}; map it with --map {required}=COLUMN")
    out: dict[ConditionKey, list[TheirRollout]] = {}
    for where, cells in rows:
        key = ConditionKey(*(cells[columns[k]].strip() for k in ("dataset", "model", "method")))
        ints: dict[str, int | None] = {}
        for name in ("trial", "fed", "T"):
            text = cells[columns[name]].strip() if name in columns else ""
            if not text:
                ints[name] = 0 if name == "trial" else None
                continue
            if not ascii_digits(text) or len(text) > 30:  # XCHK-NUMBERS: a FED, T or trial has a few digits
                what = f"not a non-negative integer of at most 30 digits: {_shown(text)}"
                raise InputError(where, f"column {columns[name]}: {what}")
            ints[name] = int(text)
        fed = ints["fed"]
        if fed is None:
            raise InputError(where, f"column {columns['fed']}: empty FED")
        task = cells[columns["task_id"]].strip()
        if not task:
            raise InputError(where, "empty task_id")
        label = _norm_label(cells[columns["label"]]) if "label" in columns else None
        trial = ints["trial"]
        assert trial is not None
        out.setdefault(key, []).append(
            TheirRollout(task, trial, fed, ints["T"], label, "label" in columns, where)
        )
    return out


def attach_rollouts(
    conditions: list[TheirCondition], extra: Mapping[ConditionKey, list[TheirRollout]]
) -> list[TheirCondition]:
    """Add per-rollout rows (from ``--their-rollouts``) to their conditions."""
    by_key = {c.key: c for c in conditions}
    out = []
    for c in conditions:
        if c.key not in extra:
            out.append(c)
            continue
        table = dict(c.rollouts or {})
        for r in extra[c.key]:
            _add_rollout(table, r)
        out.append(attrs.evolve(c, rollouts=table))
    for key, rows in extra.items():
        if key not in by_key:
            table = {}
            for r in rows:
                _add_rollout(table, r)
            out.append(TheirCondition(key, rows[0].where, {}, {}, table))
    return out


# ---------------------------------------------------------------------------------------------
# Comparing (XCHK-COMPARE, XCHK-ROLLOUTS)


@attrs.frozen(slots=True)
class Compared:
    """One reported value next to ours."""

    path: str
    theirs: Reported
    ours: Fraction | float | None
    ours_text: str
    difference: float | None
    differs: bool
    note: str = ""


@attrs.frozen(slots=True)
class RolloutDifference:
    task_id: str
    trial: int
    what: str


@attrs.frozen(slots=True)
class ConditionCheck:
    key: ConditionKey
    status: str  # "checked", "only_theirs", "only_ours"
    compared: tuple[Compared, ...] = ()
    length_notes: tuple[str, ...] = ()
    rollouts_compared: int = 0
    rollout_differences: tuple[RolloutDifference, ...] = ()

    @property
    def differs(self) -> bool:
        return (
            self.status != "checked"
            or any(c.differs for c in self.compared)
            or bool(self.length_notes)
            or bool(self.rollout_differences)
        )


def _ours(result: ConditionResult) -> dict[str, Any]:
    """Our values under the same flat paths as :func:`_flatten` (curves handled separately)."""
    m, d = result.metrics, result.metrics.decomposition
    ours: dict[str, Any] = {
        "N": m.N,
        "RR_eligible": m.RR_eligible,
        "recovered": m.recovered,
        "fully_executable": d.fully_executable,
        "TER": m.TER,
        "AUC_PEC": m.AUC_PEC,
        "mean_FED": m.mean_FED,
        "success": m.success,
        "RR": m.RR,
        "decomposition.q": d.q,
        "decomposition.s": d.s,
        "decomposition.r": d.r,
        "decomposition.uninterrupted": d.uninterrupted,
        "decomposition.recovered": d.recovered,
    }
    for name in RATIO_KEYS:
        ours[f"exact.{name}"] = ours[name]
    for name in ("q", "s", "r"):
        ours[f"exact.decomposition.{name}"] = ours[f"decomposition.{name}"]
    for name, count in m.labels:
        ours[f"labels.{name}"] = count
    if result.intervals is not None:
        ci, _ = ci_json(result.intervals)
        for key in ("TER", "AUC_PEC", "mean_FED", "success", "RR_wilson", "RR_bootstrap"):
            pair = ci[key]
            ours[f"ci.{key}.lo"], ours[f"ci.{key}.hi"] = (None, None) if pair is None else pair
        for key in ("PEC", "PEC_elig"):
            for k, pair in enumerate(ci[key], start=1):
                ours[f"ci.{key}[k={k}].lo"], ours[f"ci.{key}[k={k}].hi"] = (
                    (None, None) if pair is None else pair
                )
    return ours


def _curve_value(m: Any, path: str) -> tuple[bool, Any]:
    """(known, value) of a curve entry such as ``PEC[k=3]`` or ``exact.PEC_elig[k=7]``."""
    name, _, rest = path.removeprefix("exact.").partition("[k=")
    k = int(rest.rstrip("]"))
    curve = {"PEC": m.PEC, "PEC_elig": m.PEC_elig, "n_k": m.n_k}[name]
    if k <= len(curve):
        return True, curve[k - 1]
    # beyond the longest horizon: PEC = 0, n_k = 0, PEC_elig undefined (INV-PEC-ZERO, CONV-PEC-RANGE)
    return True, {"PEC": Fraction(0), "n_k": 0, "PEC_elig": None}[name]


def _text(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, Fraction):
        shown = f"{_approx(value):.6g}"
        return shown if value.denominator == 1 else f"{shown} ({value})"
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def _compare_value(path: str, theirs: Reported, ours: Any) -> Compared:
    if theirs.value is None or ours is None:
        same = theirs.value is None and ours is None
        return Compared(
            path, theirs, ours, _text(ours), None, not same, "" if same else "undefined on one side only"
        )
    if theirs.kind == "count":
        diff = abs(theirs.value - Fraction(ours))
        return Compared(path, theirs, ours, _text(ours), _approx(diff), diff != 0)
    if theirs.kind == "exact":
        diff = abs(theirs.value - ours)
        return Compared(path, theirs, ours, str(ours), _approx(diff), theirs.value != ours)
    ours_exact = Fraction(ours)
    diff = abs(theirs.value - ours_exact)
    return Compared(path, theirs, ours, _text(ours), _approx(diff), diff > theirs.tolerance)


def check_condition(
    theirs: TheirCondition, ours: ConditionResult, rollouts: Sequence[Rollout]
) -> ConditionCheck:
    """Compare everything they report for one condition with ours."""
    flat = _ours(ours)
    compared: list[Compared] = []
    for path, reported in theirs.values.items():
        if path.startswith("ci.") and ours.intervals is None:
            continue  # intervals are compared only when ours were computed (--bootstrap B)
        if "[k=" in path and not path.startswith("ci."):
            _, value = _curve_value(ours.metrics, path)
        elif path in flat:
            value = flat[path]
        elif path.startswith("labels."):
            compared.append(
                Compared(path, reported, None, "-", None, True, f"not one of our labels {LABEL_KEYS}")
            )
            continue
        elif path.startswith("ci."):
            compared.append(Compared(path, reported, None, "-", None, True, "beyond our longest horizon"))
            continue
        else:  # pragma: no cover - _flatten produces only known paths
            raise AssertionError(path)
        compared.append(_compare_value(path, reported, value))
    notes = []
    for name, length in theirs.lengths.items():
        ours_len = len(ours.metrics.PEC)
        if length < ours_len:
            notes.append(f"{name}: {length} depths reported, ours has {ours_len} (k = 1..max T)")
    count, diffs = 0, list[RolloutDifference]()
    if theirs.rollouts is not None:
        count, diffs = _check_rollouts(theirs.rollouts, rollouts)
    return ConditionCheck(theirs.key, "checked", tuple(compared), tuple(notes), count, tuple(diffs))


def _check_rollouts(
    theirs: Mapping[tuple[str, int], TheirRollout], ours: Sequence[Rollout]
) -> tuple[int, list[RolloutDifference]]:
    mine = {(r.task_id, r.trial): r for r in ours}
    diffs: list[RolloutDifference] = []
    compared = 0
    for key in sorted(set(theirs) | set(mine)):
        t, o = theirs.get(key), mine.get(key)
        if t is None:
            diffs.append(RolloutDifference(*key, "in our rollouts, not in theirs"))
            continue
        if o is None:
            diffs.append(RolloutDifference(*key, "in theirs, not in our rollouts"))
            continue
        compared += 1
        what = []
        if t.fed != o.outcome.fed:
            what.append(f"FED theirs {t.fed}, ours {o.outcome.fed}")
        if t.T is not None and t.T != o.outcome.T:
            what.append(f"T theirs {t.T}, ours {o.outcome.T}")
        our_label = None if o.outcome.label is None else o.outcome.label.value
        if t.has_label and t.label != our_label:
            what.append(f"label theirs {t.label or 'none'}, ours {our_label or 'none'}")
        if what:
            diffs.append(RolloutDifference(*key, "; ".join(what)))
    return compared, diffs


def crosscheck(
    theirs: Sequence[TheirCondition], results: Sequence[ConditionResult], rollouts: Sequence[Rollout]
) -> list[ConditionCheck]:
    """Every condition of either side, in (dataset, model, method) order."""
    ours = {r.key: r for r in results}
    by_key = {c.key: c for c in theirs}
    grouped: dict[ConditionKey, list[Rollout]] = {}
    for r in rollouts:
        grouped.setdefault(r.condition, []).append(r)
    out = []
    for key in sorted(set(ours) | set(by_key)):
        if key not in ours:
            out.append(ConditionCheck(key, "only_theirs"))
        elif key not in by_key:
            out.append(ConditionCheck(key, "only_ours"))
        else:
            out.append(check_condition(by_key[key], ours[key], grouped.get(key, [])))
    return out


# ---------------------------------------------------------------------------------------------
# Output


def _name(key: ConditionKey) -> str:
    return f"{key.dataset} / {key.model} / {key.method}"


def _is_curve(path: str) -> bool:
    return "[k=" in path


def format_checks(checks: Sequence[ConditionCheck], signature: str) -> str:
    """Side-by-side table per condition (curves summarised), then the rollouts that differ."""
    lines: list[str] = []
    for c in checks:
        if c.status == "only_theirs":
            lines += [
                f"{_name(c.key)}: DIFF: in their report, but no rollouts of this condition in the input",
                "",
            ]
            continue
        if c.status == "only_ours":
            lines += [f"{_name(c.key)}: DIFF: in our rollouts, not in their report", ""]
            continue
        lines.append(_name(c.key))
        table = [["metric", "theirs", "ours", "|diff|", "tolerance", ""]]
        curves: dict[str, list[Compared]] = {}
        for x in c.compared:
            if _is_curve(x.path):
                curves.setdefault(x.path.split("[k=")[0], []).append(x)
                if not x.differs:
                    continue
            table.append(
                [
                    x.path,
                    x.theirs.text,
                    x.ours_text,
                    "-" if x.difference is None else f"{x.difference:.3g}",
                    "exact" if x.theirs.kind in ("count", "exact") else f"{float(x.theirs.tolerance):.3g}",
                    ("DIFF" + (f": {x.note}" if x.note else "")) if x.differs else "",
                ]
            )
        widths = [max(len(r[i]) for r in table) for i in range(6)]
        lines.extend(
            "  " + "  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in table
        )
        for name, items in curves.items():
            bad = sum(1 for x in items if x.differs)
            lines.append(
                f"  {name}: {len(items)} depths compared, " + (f"{bad} DIFF" if bad else "all agree")
            )
        lines.extend(f"  DIFF: {note}" for note in c.length_notes)
        if c.rollouts_compared or c.rollout_differences:
            lines.append(
                f"  rollouts: {c.rollouts_compared} compared, "
                f"{counted(len(c.rollout_differences), 'differs', 'differ')}"
                + (":" if c.rollout_differences else "")
            )
            lines.extend(f"    task {d.task_id} trial {d.trial}: {d.what}" for d in c.rollout_differences)
        lines.append("")
    bad = sum(1 for c in checks if c.differs)
    agree, differ = ("agrees" if len(checks) - bad == 1 else "agree"), ("differs" if bad == 1 else "differ")
    lines.append(f"{len(checks) - bad} of {counted(len(checks), 'condition')} {agree}, {bad} {differ}")
    lines.append(f"signature: {signature}")
    return "\n".join(lines) + "\n"


def checks_json(checks: Sequence[ConditionCheck], signature: str) -> dict[str, Any]:
    """The ``crosscheck --json`` document."""
    conditions = []
    for c in checks:
        conditions.append(
            {
                "dataset": c.key.dataset,
                "model": c.key.model,
                "method": c.key.method,
                "status": c.status,
                "differs": c.differs,
                "values": [
                    {
                        "metric": x.path,
                        "theirs": x.theirs.text,
                        "ours": None
                        if x.ours is None
                        else (str(x.ours) if isinstance(x.ours, Fraction) else x.ours),
                        "difference": x.difference,
                        "tolerance": None
                        if x.theirs.kind in ("count", "exact")
                        else float(x.theirs.tolerance),
                        "differs": x.differs,
                        "note": x.note,
                    }
                    for x in c.compared
                ],
                "length_notes": list(c.length_notes),
                "rollouts_compared": c.rollouts_compared,
                "rollout_differences": [
                    {"task_id": d.task_id, "trial": d.trial, "what": d.what} for d in c.rollout_differences
                ],
            }
        )
    return {
        "signature": signature,
        "conditions": conditions,
        "differ": sum(1 for c in checks if c.differs),
    }


from prefixexec._callable import make_callable  # noqa: E402  # API-COMMANDS: prefixexec.crosscheck(...) runs the command

make_callable(__name__)
