"""Published claims against their own trajectories (spec: spec/claims.md, CLAIM-*).

A claim is a number a leaderboard publishes: a tau2 submission's ``results.<domain>.pass_k``
(percent, ``null`` when not run), a cell of BFCL's ``data_multi_turn.csv`` (a category's accuracy
or the multi-turn overall accuracy) or the ``accuracy`` of a BFCL score file
(``BFCL_v<N>_multi_turn_<category>_score.json``: counts on its first line, then one line per
invalid entry). Each claim is recomputed from the trajectories given, with the benchmark's own
rule (tau2's ``pass_hat_k`` over the tasks it has, infrastructure errors left out; BFCL's
per-category accuracy and the unweighted mean over the four categories), and gets a verdict
(CLAIM-VERDICT) with the reasons that explain a difference (CLAIM-EXPLAIN).
"""

from __future__ import annotations

import io
import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from fractions import Fraction
from typing import Any

import attrs

from prefixexec.adapters import ADAPTERS, AdapterOptions, InputError
from prefixexec.adapters.inputs import plain_name
from prefixexec.adapters.numbers import json_fault
from prefixexec.adapters.records import parse_json_line
from prefixexec.kernel import ConditionKey, Rollout
from prefixexec.kernel.passk import pass_hat_k

from .audit_table import UNDEFINED, parse_figure
from .numbers import count

#: Claim formats (CLAIM-INPUT); ``crosscheck --format`` also takes our own ``json`` and ``csv``.
FORMATS = ("tau2-submission", "bfcl-csv", "bfcl-score")
#: Verdicts, in report order (CLAIM-VERDICT).
VERDICTS = ("reproduced", "reproduced_best_of", "differs", "not_checkable", "not_reported")
#: Float noise allowed beside a claim's printed precision (a proportion: 1e-9 percentage points).
FLOAT_NOISE = Fraction(1, 10**11)
#: BFCL's multi-turn columns of data_multi_turn.csv and the categories they report.
BFCL_COLUMNS = {
    "Base": "multi_turn_base",
    "Miss Func": "multi_turn_miss_func",
    "Miss Param": "multi_turn_miss_param",
    "Long Context": "multi_turn_long_context",
}
BFCL_OVERALL = "Multi Turn Overall Acc"
BFCL_DATASET = "bfcl-multi-turn/"
TAU_DATASET = "tau-bench/"
_SCORE_NAME = re.compile(r"^BFCL_v\d+_(multi_turn_[a-z_]+)_score\.json$")
_PASS_KEY = re.compile(r"^pass_([1-9][0-9]*)$")
#: Words of a submission's notes that describe retries or a selection over several runs.
_SELECTION_WORDS = re.compile(
    r"\b(retr(?:y|ies|ied)|rounds?|best[- ]of|ensembles?|oracle|any (?:model|run|trial)|"
    r"selects?|selected|router|routes?|orchestrat\w*|majority|vote)\b",
    re.I,
)
#: Reasons shown per claim at most, and entries listed per claim at most.
_MAX_ENTRIES = 20


@attrs.frozen(slots=True)
class ScoreEntry:
    """One invalid entry of a BFCL score file."""

    task_id: str
    error_type: str
    message: str
    where: str
    prompt: Mapping[str, Any] | None = attrs.field(default=None, eq=False, repr=False)
    answer: Any = attrs.field(default=None, eq=False, repr=False)


@attrs.frozen(slots=True)
class Claim:
    """One published number, as read (CLAIM-INPUT)."""

    source: str
    dataset: str
    metric: str
    k: int
    #: The claimed proportion (percent / 100); ``None``: reported as not run.
    value: Fraction | None
    text: str
    tolerance: Fraction
    #: The system the claim is about (submission model_name, CSV row, score file model).
    system: str | None
    #: BFCL score files: (correct, total) and every invalid entry.
    counts: tuple[int, int] | None = None
    invalid: Mapping[str, ScoreEntry] | None = None
    #: The BFCL overall accuracy: the category datasets it averages.
    parts: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


@attrs.frozen(slots=True)
class Claims:
    path: str
    format: str
    system: str | None
    claims: tuple[Claim, ...]


@attrs.frozen(slots=True)
class Reason:
    code: str
    text: str


@attrs.frozen(slots=True)
class Run:
    """The rollouts of one condition in one input file, as a benchmark computes over them."""

    file: str
    key: ConditionKey
    rollouts: tuple[Rollout, ...]
    #: The run's own task list (tau2 ``tasks``), when the file has one.
    tasks: tuple[str, ...] | None = None
    num_trials: int | None = None
    #: Rollouts left out as the benchmark leaves them out (tau2: infrastructure errors).
    dropped: int = 0
    #: Every rollout read of the condition in the file, the left-out ones too (what ``score``
    #: scores: the leaderboard of submissions ranks these, LB-TRIALS).
    read: tuple[Rollout, ...] = attrs.field(default=(), eq=False, repr=False)


@attrs.frozen(slots=True)
class EntryDifference:
    task_id: str
    theirs: str
    ours: str


@attrs.frozen(slots=True)
class ClaimCheck:
    claim: Claim
    verdict: str
    ours: Fraction | None = None
    ours_text: str = ""
    exact: bool = False
    reasons: tuple[Reason, ...] = ()
    runs: tuple[Run, ...] = ()
    entries: tuple[EntryDifference, ...] = ()

    @property
    def difference(self) -> Fraction | None:
        if self.ours is None or self.claim.value is None:
            return None
        return self.ours - self.claim.value


# ---------------------------------------------------------------------------------------------
# Reading claims (CLAIM-INPUT)


def _read_text(path: str) -> str:
    """A claims file's text, opened with the checks of every input (HOSTILE-PSEUDO, HOSTILE-READ)."""
    from prefixexec.adapters.inputs import read_text

    return read_text(path, "a claims file")


def detect_format(path: str, text: str) -> str | None:
    """The claim format of ``path`` (CLAIM-INPUT), or ``None`` for one of crosscheck's own."""
    name = plain_name(os.path.basename(path))  # INPUT-COMPRESSED: a .gz or .zst copy
    if _SCORE_NAME.match(name):
        return "bfcl-score"
    first = text.lstrip().split("\n")[0].rstrip("\r") if text.strip() else ""  # HOSTILE-LINES
    if name.lower().endswith(".csv") or ("," in first and not first.startswith("{")):
        header = [c.strip() for c in first.split(",")]
        return "bfcl-csv" if BFCL_OVERALL in header or set(BFCL_COLUMNS) & set(header) else None
    try:
        doc = parse_json_line(text)
    except ValueError:
        doc = None
    if isinstance(doc, dict) and isinstance(doc.get("results"), dict) and "conditions" not in doc:
        return "tau2-submission"
    if doc is None and first.startswith("{"):
        try:
            head = parse_json_line(first)
        except ValueError:
            return None
        if isinstance(head, dict) and {"accuracy", "correct_count", "total_count"} <= set(head):
            return "bfcl-score"
    return None


def _percent(where: str, value: Any) -> tuple[Fraction, str, Fraction]:
    """A percentage from JSON: (proportion, text, tolerance as a proportion). The proportion is the
    decimal as written (Python's shortest round-trip form of the double: ``84.2`` is 842/1000, not
    the double nearest to it), the tolerance half a unit of its last digit."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(where, f"expected a percentage from 0 to 100, or null, got {json.dumps(value)}")
    if not 0 <= value <= 100:
        raise InputError(where, f"a percentage must lie in [0, 100], got {value!r}")
    text = repr(value)
    exponent = Decimal(text).as_tuple().exponent
    assert isinstance(exponent, int)  # finite
    half = Fraction(10) ** exponent / 2 / 100
    return Fraction(text) / 100, text, max(half, FLOAT_NOISE)  # the decimal as written, not the double


def _notes(doc: Mapping[str, Any]) -> tuple[str, ...]:
    method = doc.get("methodology")
    if not isinstance(method, dict):
        return ()
    found = [method.get("notes")]
    verification = method.get("verification")
    if isinstance(verification, dict):
        found.append(verification.get("details"))
    return tuple(n.strip() for n in found if isinstance(n, str) and n.strip())


def read_tau2_submission(path: str, tolerance: Fraction | None = None) -> Claims:
    """A tau2 leaderboard ``submission.json``: one claim per ``results.<domain>.pass_<k>``."""
    text = _read_text(path)
    try:
        doc = parse_json_line(text)
    except ValueError as exc:
        raise InputError(path, f"not valid JSON: {json_fault(exc)}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), dict):
        raise InputError(path, "expected a tau2 submission: an object with a 'results' object per domain")
    system = doc.get("model_name") if isinstance(doc.get("model_name"), str) else None
    notes = _notes(doc)
    claims: list[Claim] = []
    for domain, results in doc["results"].items():
        where = f"{path}: results.{domain}"
        if not isinstance(results, dict):
            raise InputError(where, f"expected an object of pass_k values, got {json.dumps(results)[:60]}")
        for key, value in results.items():
            match = _PASS_KEY.match(key)
            if match is None:
                continue  # cost, retrieval_config: not claims about success
            here = f"{where}.{key}"
            if len(match.group(1)) > 9:  # HOSTILE-BIGINT: no int() of thousands of digits
                what = f"'pass_k' with a k of {len(match.group(1))} digits: not a number of trials"
                raise InputError(f"{where}.pass_{match.group(1)[:9]}...", what)
            k = int(match.group(1))
            if value is None:
                claims.append(Claim(here, TAU_DATASET + domain, key, k, None, "null", Fraction(0), system))
                continue
            proportion, shown, tol = _percent(here, value)
            tol = tol if tolerance is None else tolerance
            claims.append(
                Claim(here, TAU_DATASET + domain, key, k, proportion, shown, tol, system, notes=notes)
            )
    if not claims:
        raise InputError(path, "no pass_k values under 'results'")
    return Claims(path, "tau2-submission", system, tuple(claims))


def read_bfcl_csv(path: str, tolerance: Fraction | None = None) -> Claims:
    """BFCL's ``data_multi_turn.csv``: per row (model), a claim per category and the overall one."""
    import csv

    text = _read_text(path)
    try:
        # HOSTILE-LINES: the csv module's line ends (a quoted U+2028 stays in its cell)
        rows = [r for r in csv.reader(io.StringIO(text, newline="")) if r and any(c.strip() for c in r)]
    except csv.Error as exc:
        raise InputError(path, f"not valid CSV: {exc}") from None
    if not rows:
        raise InputError(path, "empty file: expected BFCL's header row")
    header = [h.strip() for h in rows[0]]
    if "Model" not in header or not (set(BFCL_COLUMNS) | {BFCL_OVERALL}) & set(header):
        columns = ", ".join(("Model", BFCL_OVERALL, *BFCL_COLUMNS))
        raise InputError(f"{path}:1", f"expected BFCL's multi-turn header ({columns})")
    claims: list[Claim] = []
    for number, cells in enumerate(rows[1:], start=2):
        where = f"{path}:{number}"
        if len(cells) != len(header):
            raise InputError(where, f"{len(cells)} cells, the header has {len(header)}")
        row = dict(zip(header, (c.strip() for c in cells), strict=True))
        model = row["Model"]
        if not model:
            raise InputError(where, "empty Model cell")
        categories = tuple(BFCL_DATASET + c for c in BFCL_COLUMNS.values())
        for column in (BFCL_OVERALL, *BFCL_COLUMNS):
            if column not in row:
                continue
            here = f"{where} ({model}, {column})"
            overall = column == BFCL_OVERALL
            dataset = BFCL_DATASET + ("overall" if overall else BFCL_COLUMNS[column])
            metric = "overall_accuracy" if overall else "accuracy"
            parts = categories if overall else ()
            cell = row[column]
            if cell.lower() in UNDEFINED:
                claims.append(Claim(here, dataset, metric, 1, None, cell, Fraction(0), model, parts=parts))
                continue
            figure = parse_figure(cell, column, here)
            if figure is None:
                continue
            if not 0 <= figure.value <= 1:
                raise InputError(here, f"an accuracy must lie in [0%, 100%], got {cell!r}")
            tol = max(figure.half_unit, FLOAT_NOISE) if tolerance is None else tolerance
            claims.append(Claim(here, dataset, metric, 1, figure.value, cell, tol, model, parts=parts))
    if not claims:
        raise InputError(path, "no model rows")
    return Claims(path, "bfcl-csv", None, tuple(claims))


def read_bfcl_score(path: str, tolerance: Fraction | None = None) -> Claims:
    """A BFCL score file: the accuracy on its first line and every invalid entry after it."""
    lines = [(n, line) for n, line in enumerate(_read_text(path).split("\n"), start=1) if line.strip()]
    if not lines:
        raise InputError(path, "empty file: expected BFCL's {accuracy, correct_count, total_count} line")
    objects: list[tuple[str, dict[str, Any]]] = []
    for number, line in lines:
        try:
            value = parse_json_line(line)
        except ValueError as exc:
            raise InputError(f"{path}:{number}", f"not valid JSON: {json_fault(exc)}") from None
        if not isinstance(value, dict):
            raise InputError(f"{path}:{number}", "expected a JSON object")
        objects.append((f"{path}:{number}", value))
    where, head = objects[0]
    counts = []
    for key in ("correct_count", "total_count"):
        v = head.get(key)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise InputError(where, f"'{key}' must be a non-negative integer, got {json.dumps(v)}")
        counts.append(v)
    correct, total = counts
    if correct > total or total == 0:
        raise InputError(
            where, f"need 0 <= correct_count <= total_count and total_count >= 1: {correct}, {total}"
        )
    accuracy = head.get("accuracy")
    if isinstance(accuracy, bool) or not isinstance(accuracy, int | float) or not 0 <= accuracy <= 1:
        raise InputError(where, f"'accuracy' must be a number in [0, 1], got {json.dumps(accuracy)}")
    match = _SCORE_NAME.match(plain_name(os.path.basename(path)))
    category = match.group(1) if match else None
    invalid: dict[str, ScoreEntry] = {}
    models: set[str] = set()
    for here, entry in objects[1:]:
        task = entry.get("id")
        if not isinstance(task, str) or not task:
            raise InputError(here, "an entry needs an 'id' (a string such as 'multi_turn_base_0')")
        if entry.get("valid") is not False:
            got = json.dumps(entry.get("valid"))
            raise InputError(here, f"expected an invalid entry ('valid': false), got {got}")
        if task in invalid:
            raise InputError(here, f"entry {task!r} is listed twice (first at {invalid[task].where})")
        entry_category = entry.get("test_category")
        if isinstance(entry_category, str):
            if category is not None and entry_category != category:
                raise InputError(here, f"test_category {entry_category!r} in a {category} score file")
            category = entry_category
        if isinstance(entry.get("model_name"), str):
            models.add(entry["model_name"])
        error: dict[str, Any] = entry["error"] if isinstance(entry.get("error"), dict) else {}
        prompt = entry.get("prompt") if isinstance(entry.get("prompt"), dict) else None
        kind, message = str(error.get("error_type", "")), str(error.get("error_message", ""))
        invalid[task] = ScoreEntry(task, kind, message, here, prompt, entry.get("possible_answer"))
    if len(invalid) != total - correct:
        raise InputError(
            path,
            f"{len(invalid)} invalid entries listed, but total_count - correct_count = {total - correct}",
        )
    if category is None:
        raise InputError(
            path, "cannot tell the category: name the file BFCL_v<N>_multi_turn_<category>_score.json"
        )
    if len(models) > 1:
        raise InputError(path, f"entries of several models: {', '.join(sorted(models))}")
    from prefixexec.adapters.bfcl.reader import _model_from_path  # the BFCL adapter's naming

    system = next(iter(models)) if models else _model_from_path(path)
    value = Fraction(correct, total)
    tol = Fraction(0) if tolerance is None else tolerance
    text = f"{correct}/{total} (accuracy {accuracy!r})"
    if abs(Fraction(accuracy) - value) > Fraction(1, 10**9):
        raise InputError(where, f"'accuracy' {accuracy!r} is not correct_count / total_count = {value}")
    claim = Claim(
        where, BFCL_DATASET + category, "accuracy", 1, value, text, tol, system, (correct, total), invalid
    )
    return Claims(path, "bfcl-score", system, (claim,))


def read_claims(path: str, fmt: str | None = None, tolerance: Fraction | None = None) -> Claims:
    """Read a claims file in ``fmt`` (detected when ``None``; CLAIM-INPUT)."""
    if fmt is None:
        fmt = detect_format(path, _read_text(path))
        if fmt is None:
            raise InputError(path, f"not a claims file ({', '.join(FORMATS)}); give --format")
    readers = {
        "tau2-submission": read_tau2_submission,
        "bfcl-csv": read_bfcl_csv,
        "bfcl-score": read_bfcl_score,
    }
    if fmt not in readers:
        raise InputError("--format", f"expected one of {', '.join(FORMATS)}, got {fmt!r}")
    return readers[fmt](path, tolerance)


# ---------------------------------------------------------------------------------------------
# Reading trajectories, one run per file and condition


def _tau2_facts(path: str) -> tuple[dict[tuple[str, int], str], tuple[str, ...] | None, int | None]:
    """Termination reason per (task, trial), the task list and ``num_trials`` of a tau2 file."""
    from prefixexec.adapters.taubench.reader import load

    _, data = load(path)
    if not isinstance(data, dict) or not isinstance(data.get("simulations"), list):
        return {}, None, None
    reasons: dict[tuple[str, int], str] = {}
    for s in data["simulations"]:
        if isinstance(s, dict):
            trial = s.get("trial")
            reasons[(str(s.get("task_id")), trial if isinstance(trial, int) else 0)] = str(
                s.get("termination_reason")
            )
    tasks = data.get("tasks")
    ids = None
    if isinstance(tasks, list):
        ids = tuple(str(t["id"]) for t in tasks if isinstance(t, dict) and "id" in t)
    info = data.get("info")
    trials = info.get("num_trials") if isinstance(info, dict) else None
    return reasons, ids, trials if isinstance(trials, int) and not isinstance(trials, bool) else None


def read_runs(paths: Sequence[str], adapter: str, options: AdapterOptions) -> list[Run]:
    """Each file read on its own (a claim may be over one file or several: CLAIM-RUNS)."""
    runs: list[Run] = []
    for path in paths:
        if path == "-":
            raise InputError("-", "crosscheck of claims reads each file on its own: give file paths")
        from prefixexec.adapters import harness

        with harness.collecting() as log:  # the harness errors the adapter left out (HARNESS-DEFAULT)
            rollouts = ADAPTERS[adapter].read([path], options)
        left_out: dict[ConditionKey, int] = {}
        for e in log.errors:
            if not e.counted:
                left_out[e.condition] = left_out.get(e.condition, 0) + 1
        reasons: dict[tuple[str, int], str] = {}
        tasks: tuple[str, ...] | None = None
        trials: int | None = None
        if adapter == "taubench":
            reasons, tasks, trials = _tau2_facts(path)
        grouped: dict[ConditionKey, list[Rollout]] = {}
        for r in rollouts:
            grouped.setdefault(r.condition, []).append(r)
        for key in sorted(grouped):
            kept = [r for r in grouped[key] if reasons.get((r.task_id, r.trial)) != "infrastructure_error"]
            dropped = len(grouped[key]) - len(kept) + left_out.get(key, 0)
            runs.append(Run(path, key, tuple(kept), tasks, trials, dropped, tuple(grouped[key])))
    return runs


# ---------------------------------------------------------------------------------------------
# Checking (CLAIM-VERDICT, CLAIM-TAU2, CLAIM-BFCL, CLAIM-EXPLAIN)


def _pct(value: Fraction) -> str:
    shown = f"{float(value) * 100:.4f}".rstrip("0").rstrip(".")
    return f"{shown}%"


def _rate_text(num: int, den: int) -> str:
    return f"{num}/{den} = {_pct(Fraction(num, den))}"


def _tokens(name: str) -> frozenset[str]:
    return frozenset(re.findall(r"[a-z0-9]+", name.lower()))


def _same_system(ours: str, theirs: str) -> bool:
    """A model name in the input and a claim's model name are the same system (CLAIM-BFCL)."""
    a, b = _tokens(ours), _tokens(theirs)
    return bool(a) and bool(b) and (a <= b or b <= a)


def _runs_for(claim: Claim, runs: Sequence[Run], by_model: bool) -> list[Run]:
    found = [r for r in runs if r.key.dataset == claim.dataset]
    if by_model and claim.system is not None:
        found = [r for r in found if _same_system(r.key.model, claim.system)]
    return found


def _by_task(rollouts: Iterable[Rollout]) -> dict[str, list[bool]]:
    out: dict[str, list[bool]] = {}
    for r in rollouts:
        out.setdefault(r.task_id, []).append(r.success)
    return out


def overlap(runs: Sequence[Run]) -> bool:
    """Whether runs repeat a (task, trial) pair: several runs of one domain, as a best-of-K
    submission gives them."""
    seen: set[tuple[str, int]] = set()
    for run in runs:
        keys = {(r.task_id, r.trial) for r in run.rollouts}
        if keys & seen:
            return True
        seen |= keys
    return False


def _matches(claim: Claim, ours: Fraction) -> tuple[bool, bool]:
    """(within the claim's precision, exactly equal: as rationals, or as the claim's float)."""
    assert claim.value is not None
    exact = ours == claim.value or (claim.counts is None and float(ours * 100) == float(claim.value * 100))
    return abs(ours - claim.value) <= claim.tolerance, exact


def _implied(claim: Claim, n: int) -> list[int]:
    """The success counts c of n tasks whose rate c / n matches the claim."""
    assert claim.value is not None
    centre = claim.value * n
    near = range(max(0, math.floor(centre) - 1), min(n, math.ceil(centre) + 1) + 1)
    return [c for c in near if abs(Fraction(c, n) - claim.value) <= claim.tolerance]


def _methodology(claim: Claim) -> list[Reason]:
    """The sentences of the submission's notes that describe retries or a selection over runs."""
    quotes: list[str] = []
    for note in claim.notes:
        for sentence in re.split(r"(?<=[.!?])\s+|\n+", note):
            if _SELECTION_WORDS.search(sentence) and len(quotes) < 3:
                quotes.append(" ".join(sentence.split())[:300])
    if not quotes:
        return []
    shown = " | ".join(f'"{q}"' for q in quotes)
    return [
        Reason("methodology", f"the submission's notes describe retries or a selection over runs: {shown}")
    ]


def _run_summary(run: Run) -> str:
    tasks = _by_task(run.rollouts)
    c = sum(any(v) for v in tasks.values())
    return f"{run.file}: {run.key.model} / {run.key.method}, {c} of {len(tasks)} tasks with a success"


def _best_of(runs: Sequence[Run]) -> tuple[int, int]:
    """(tasks with a success in any run, tasks)."""
    tasks = _by_task(r for run in runs for r in run.rollouts)
    return sum(any(v) for v in tasks.values()), len(tasks)


def check_tau2(claim: Claim, runs: Sequence[Run], best_of: bool) -> ClaimCheck:
    """CLAIM-TAU2: tau2's pass^k over the given trajectories of the claim's domain."""
    reasons: list[Reason] = []
    summaries = [Reason("run", _run_summary(run)) for run in runs]
    if best_of:
        if claim.k != 1:
            reason = Reason("best_of", "--best-of defines pass_1 only (a task passes if any run succeeds)")
            return ClaimCheck(claim, "not_checkable", reasons=(reason,), runs=tuple(runs))
        won, total = _best_of(runs)
        why = f"best of {len(runs)} run(s): a task passes if any of them succeeds ({won} of {total} tasks)"
        reasons.append(Reason("best_of", why))
        text = _rate_text(won, total)
        return _verdict(claim, Fraction(won, total), text, reasons + summaries, runs, best=True, n=total)
    if len(runs) > 1 and (overlap(runs) or len({run.key for run in runs}) > 1):
        won, total = _best_of(runs)
        assert claim.value is not None
        would = abs(Fraction(won, total) - claim.value) <= claim.tolerance
        why = (
            f"{len(runs)} runs (files or systems) cover the claim's domain and are not one tau2 run; best "
            f"of the {len(runs)} runs: {_rate_text(won, total)}, which "
            + (
                "matches the claim: rerun with --best-of to check it as a best-of-K claim"
                if would
                else "does not match the claim either"
            )
        )
        reasons.append(Reason("several_runs", why))
        return ClaimCheck(claim, "not_checkable", reasons=tuple(reasons + summaries), runs=tuple(runs))
    rollouts = [r for run in runs for r in run.rollouts]
    if len(runs) > 1:
        why = f"the claim is over {len(runs)} files of one system, pooled (disjoint (task, trial) pairs)"
        reasons.append(Reason("several_files", why))
    dropped = sum(run.dropped for run in runs)
    if dropped:
        why = f"{dropped} simulation(s) ended in infrastructure_error and are left out, as tau2's metrics do"
        reasons.append(Reason("infrastructure_errors", why))
    if not rollouts:
        reasons.append(Reason("no_trajectories", "no simulation is left"))
        return ClaimCheck(claim, "not_checkable", reasons=tuple(reasons), runs=tuple(runs))
    tasks = _by_task(rollouts)
    trials = [len(v) for v in tasks.values()]
    wins = [sum(v) for v in tasks.values()]
    listed = {t for run in runs if run.tasks is not None for t in run.tasks}
    declared = max((run.num_trials for run in runs if run.num_trials is not None), default=None)
    short = [t for t, v in tasks.items() if declared is not None and len(v) < declared]
    if short:
        why = (
            f"the run declares num_trials = {declared}, but {len(short)} task(s) have fewer simulations "
            f"(fewest: {min(trials)}): {_ids(short)}"
        )
        reasons.append(Reason("fewer_simulations", why))
    if claim.k > min(trials):
        lacking = [t for t, v in tasks.items() if len(v) < claim.k]
        why = (
            f"{claim.metric} needs at least {claim.k} trials of every task (tau2 caps k at the smallest "
            f"per-task trial count); {len(lacking)} of {len(tasks)} tasks have fewer "
            f"(fewest: {min(trials)}): {_ids(lacking)}"
        )
        reasons.append(Reason("trials_needed", why))
        return ClaimCheck(claim, "not_checkable", reasons=tuple(reasons), runs=tuple(runs))
    ours = pass_hat_k(trials, wins, claim.k)
    single = claim.k == 1 and max(trials) == 1
    if single:
        text = _rate_text(sum(wins), len(tasks))
    else:
        text = f"{ours} = {_pct(ours)} over {len(tasks)} tasks x {min(trials)}..{max(trials)} trials"
    missing = sorted(listed - set(tasks))
    if missing:
        k = claim.k
        counted = pass_hat_k(trials + [k] * len(missing), wins + [0] * len(missing), k)
        assert claim.value is not None
        alt = ", which matches the claim" if abs(counted - claim.value) <= claim.tolerance else ""
        why = (
            f"fewer simulations than tasks: the trajectories cover {len(tasks)} of the {len(listed)} tasks "
            f"the run lists; tau2 averages over the tasks it has; with the {len(missing)} missing task(s) "
            "counted "
            f"as failures it would be {_pct(counted)}{alt}: missing {_ids(missing)}"
        )
        reasons.append(Reason("missing_tasks", why))
    return _verdict(claim, ours, text, reasons, runs, n=len(tasks) if single else None)


def _ids(ids: Sequence[str]) -> str:
    return ", ".join(ids[:10]) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")


def _verdict(
    claim: Claim,
    ours: Fraction,
    text: str,
    reasons: list[Reason],
    runs: Sequence[Run],
    best: bool = False,
    n: int | None = None,
    entries: Sequence[EntryDifference] = (),
) -> ClaimCheck:
    assert claim.value is not None
    within, exact = _matches(claim, ours)
    if within:
        if not exact:
            why = f"{text} is the claimed {claim.text} to the claim's precision (+/- {_pct(claim.tolerance)})"
            reasons.append(Reason("precision", why))
        verdict = "reproduced_best_of" if best else "reproduced"
        return ClaimCheck(claim, verdict, ours, text, exact, tuple(reasons), tuple(runs), tuple(entries))
    if n is not None:
        implied = _implied(claim, n)
        if implied:
            shown = " or ".join(str(c) for c in implied)
            why = f"the claim implies {shown} of {n} tasks passing; the trajectories give {text}"
        else:
            why = f"no count of {n} tasks gives the claim: it is not a rate over these tasks"
        reasons.append(Reason("implied_count", why))
    reasons += _methodology(claim)
    return ClaimCheck(claim, "differs", ours, text, False, tuple(reasons), tuple(runs), tuple(entries))


def _bfcl_version() -> str:
    from prefixexec.adapters.bfcl import backend

    return f"bfcl-eval {backend.installed_version() or backend.BFCL_VERSION}"


def _dataset_size(category: str) -> int | None:
    from prefixexec.adapters.bfcl import backend

    try:
        return len(backend.entries(category))
    except InputError:
        return None


def _entry_drift(entries: Iterable[ScoreEntry]) -> list[str]:
    """Entries of a score file whose prompt or ground truth differs from the installed dataset's."""
    from prefixexec.adapters.bfcl import backend

    drifted = []
    for e in entries:
        try:
            mine = backend.entry(e.task_id)
        except KeyError:
            drifted.append(f"{e.task_id} (not in the installed dataset)")
            continue
        what = []
        if e.answer is not None and [list(t) for t in mine.gold] != e.answer:
            what.append("ground truth")
        if e.prompt is not None:
            question = e.prompt.get("question")
            if isinstance(question, list):
                said = [
                    tuple(
                        str(m.get("content", ""))
                        for m in turn
                        if isinstance(m, dict) and m.get("role") == "user"
                    )
                    for turn in question
                    if isinstance(turn, list)
                ]
                if tuple(said) != mine.questions:
                    what.append("questions")
            config = e.prompt.get("initial_config")
            if isinstance(config, dict) and json.dumps(config, sort_keys=True) != json.dumps(
                backend.thaw(mine.initial_config), sort_keys=True
            ):
                what.append("initial config")
        if what:
            drifted.append(f"{e.task_id} ({', '.join(what)})")
    return drifted


def check_bfcl(claim: Claim, runs: Sequence[Run], every: Sequence[Run]) -> ClaimCheck:
    """CLAIM-BFCL: a category's accuracy (success over the entries), or the overall accuracy."""
    if claim.parts:
        return _check_bfcl_overall(claim, every)
    reasons: list[Reason] = []
    if overlap(runs):
        reasons.append(Reason("several_runs", "the files repeat entries: give one result file per model"))
        return ClaimCheck(claim, "not_checkable", reasons=tuple(reasons), runs=tuple(runs))
    if len(runs) > 1:
        reasons.append(Reason("several_files", f"the claim is over {len(runs)} files, pooled"))
    ours = {r.task_id: r for run in runs for r in run.rollouts}
    c, n = sum(r.success for r in ours.values()), len(ours)
    category = claim.dataset.removeprefix(BFCL_DATASET)
    size = _dataset_size(category)
    if size is not None and n < size:
        why = (
            f"the input holds {n} of {_bfcl_version()}'s {size} {category} tasks; BFCL scores the entries "
            "of its result file"
        )
        reasons.append(Reason("subset", why))
    entries: list[EntryDifference] = []
    if claim.invalid is not None and claim.counts is not None:  # a score file: entry by entry
        for task, r in sorted(ours.items()):
            theirs_ok = task not in claim.invalid
            if theirs_ok != r.success:
                theirs = "valid" if theirs_ok else _their_error(claim.invalid[task])
                entries.append(EntryDifference(task, theirs, _our_check(r)))
        absent = sorted(set(claim.invalid) - set(ours))
        if absent or claim.counts[1] != n:
            also = f"; invalid there but not in the input: {_ids(absent)}" if absent else ""
            reasons.append(
                Reason("missing_tasks", f"their score counts {claim.counts[1]} entries, the input {n}{also}")
            )
        drift = _entry_drift(claim.invalid.values())
        if drift:
            why = (
                f"their score file's prompt or ground truth differs from {_bfcl_version()}'s for "
                f"{_ids(drift)}: the claim was computed against another version of the dataset"
            )
            reasons.append(Reason("dataset_differs", why))
        if entries:
            plural = "entry" if len(entries) == 1 else "entries"
            reasons.append(
                Reason("entries_differ", f"{len(entries)} {plural} judged differently (listed below)")
            )
    check = _verdict(claim, Fraction(c, n), _rate_text(c, n), reasons, runs, n=n, entries=entries)
    if check.verdict == "reproduced" and entries:  # the counts agree, the entries do not
        check = attrs.evolve(check, verdict="differs", exact=False)
    if check.verdict != "differs":
        return check
    if claim.invalid is None:  # a CSV cell: our failing entries are what the claim disagrees with
        failing = sorted(t for t, r in ours.items() if not r.success)
        entries = [EntryDifference(t, "-", _our_check(ours[t])) for t in failing[:_MAX_ENTRIES]]
    which = (
        ""
        if claim.invalid is not None
        else " (that run's score file, which lists each invalid entry, shows which); our failing entries are "
        "listed below"
    )
    reason = Reason(
        "dataset_version",
        (
            f"each entry's success is BFCL's multi-turn check against {_bfcl_version()}'s ground truth; a "
            "leaderboard number computed against other data or ground truth judges entries "
            f"differently{which}"
        ),
    )
    return attrs.evolve(check, reasons=(*check.reasons, reason), entries=tuple(entries))


def _their_error(entry: ScoreEntry) -> str:
    text = f"invalid: {entry.error_type}" if entry.error_type else "invalid"
    return f"{text}: {entry.message[:200]}" if entry.message else text


def _our_check(rollout: Rollout) -> str:
    check = rollout.meta.get("success_check")
    state = "valid" if rollout.success else "invalid"
    return f"{state}: {check}" if isinstance(check, str) and check != "valid" else state


def _check_bfcl_overall(claim: Claim, runs: Sequence[Run]) -> ClaimCheck:
    """The unweighted mean of the four categories' accuracies (BFCL counts a category not run as 0)."""
    parts: list[Fraction] = []
    used: list[Run] = []
    lacking: list[str] = []
    for dataset in claim.parts:
        mine = [r for r in runs if r.key.dataset == dataset and _same_system(r.key.model, claim.system or "")]
        rollouts = [r for run in mine for r in run.rollouts]
        if not rollouts:
            lacking.append(dataset.removeprefix(BFCL_DATASET))
            continue
        used += mine
        parts.append(Fraction(sum(r.success for r in rollouts), len(rollouts)))
    if lacking:
        reason = Reason(
            "several_files",
            (
                f"the overall accuracy is the unweighted mean of {len(claim.parts)} categories, one result "
                "file "
                f"each; the input has no entries of {', '.join(lacking)}"
            ),
        )
        return ClaimCheck(claim, "not_checkable", reasons=(reason,), runs=tuple(used))
    ours = sum(parts, Fraction(0)) / len(parts)
    text = f"mean of {', '.join(_pct(p) for p in parts)} = {_pct(ours)}"
    return _verdict(claim, ours, text, [], used)


def check(claims: Claims, runs: Sequence[Run], best_of: bool = False) -> list[ClaimCheck]:
    """Every claim of ``claims`` checked against ``runs`` (CLAIM-VERDICT)."""
    out: list[ClaimCheck] = []
    bfcl = claims.format in ("bfcl-csv", "bfcl-score")
    for claim in claims.claims:
        if claim.value is None:
            reason = Reason("not_reported", f"reported as {claim.text}: not run")
            out.append(ClaimCheck(claim, "not_reported", reasons=(reason,)))
            continue
        mine = _runs_for(claim, runs, by_model=bfcl)
        if not mine and not claim.parts:
            held = ", ".join(sorted({f"{r.key.dataset} ({r.key.model})" for r in runs}))
            what = claim.dataset + (f" of {claim.system}" if bfcl and claim.system else "")
            text = f"no trajectories of {what} among the input files (they hold {held})"
            same = [r for r in runs if r.key.dataset == claim.dataset]
            if bfcl and claim.system and same:  # BFCL-MODEL: the input's model is another name
                text += (
                    f"; the input's model is read from its score file or folder name; if these are "
                    f"{claim.system}'s entries, give --model {claim.system}"
                )
            reason = Reason("no_trajectories", text)
            out.append(ClaimCheck(claim, "not_checkable", reasons=(reason,)))
            continue
        result = check_bfcl(claim, mine, runs) if bfcl else check_tau2(claim, mine, best_of)
        if not bfcl and claims.system is not None:
            llms = sorted({r.key.model for r in mine})
            if llms and not any(_same_system(m, claims.system) for m in llms):
                named = ", ".join(llms)
                note = Reason(
                    "system",
                    f"the trajectories name the agent model {named}, the submission {claims.system!r}",
                )
                result = attrs.evolve(result, reasons=(*result.reasons, note))
        out.append(result)
    return out


# ---------------------------------------------------------------------------------------------
# Output


def _fraction(value: Fraction | None) -> str | None:
    return None if value is None else str(value)


def _float(value: Fraction | None) -> float | None:
    return None if value is None else float(value)


def checks_json(
    claims: Claims, checks: Sequence[ClaimCheck], signature: str, best_of: bool
) -> dict[str, Any]:
    """The ``crosscheck --json`` document of a claims file (CLAIM-OUTPUT)."""
    items = []
    for c in checks:
        items.append({
            "source": c.claim.source,
            "dataset": c.claim.dataset,
            "system": c.claim.system,
            "metric": c.claim.metric,
            "k": c.claim.k,
            "claimed": c.claim.text,
            "claimed_value": _float(c.claim.value),
            "claimed_exact": _fraction(c.claim.value),
            "tolerance": _float(c.claim.tolerance) if c.claim.value is not None else None,
            "verdict": c.verdict,
            "exact": c.exact,
            "ours": _float(c.ours),
            "ours_exact": _fraction(c.ours),
            "ours_text": c.ours_text or None,
            "difference": _float(c.difference),
            "difference_exact": _fraction(c.difference),
            "reasons": [{"code": r.code, "text": r.text} for r in c.reasons],
            "runs": [
                {"file": r.file, "dataset": r.key.dataset, "model": r.key.model, "method": r.key.method,
                 "rollouts": len(r.rollouts), "tasks": len({x.task_id for x in r.rollouts}),
                 "successes": sum(x.success for x in r.rollouts), "dropped": r.dropped}
                for r in c.runs
            ],
            "entries": [{"task_id": e.task_id, "theirs": e.theirs, "ours": e.ours} for e in c.entries],
        })  # fmt: skip
    summary = {v: sum(1 for c in checks if c.verdict == v) for v in VERDICTS}
    return {
        "signature": signature,
        "claims_file": claims.path,
        "format": claims.format,
        "system": claims.system,
        "best_of": best_of,
        "claims": items,
        "summary": summary,
        "differ": summary["differs"],
    }


_WORDS = {
    "reproduced": "REPRODUCED",
    "reproduced_best_of": "REPRODUCED as a best-of-K claim",
    "differs": "DIFFERS",
    "not_checkable": "NOT CHECKABLE",
    "not_reported": "not reported (null: not run)",
}


def format_checks(claims: Claims, checks: Sequence[ClaimCheck], signature: str) -> str:
    """One paragraph per claim: claimed value, verdict, ours, and each reason (CLAIM-OUTPUT)."""
    title = (
        f"claims of {claims.path} ({claims.format}" + (f": {claims.system}" if claims.system else "") + ")"
    )
    lines = [title]
    for c in checks:
        head = f"  {c.claim.dataset} {c.claim.metric}"
        if c.claim.system and claims.format == "bfcl-csv":
            head += f" [{c.claim.system}]"
        head += f": claimed {c.claim.text} -> {_WORDS[c.verdict]}"
        if c.ours_text:
            head += f": {c.ours_text}" + (" (exact)" if c.exact else "")
        if c.difference is not None and c.verdict == "differs":
            head += f", {'+' if c.difference > 0 else ''}{float(c.difference) * 100:.4g} points"
        lines.append(head)
        lines += [f"      {r.code}: {r.text}" for r in c.reasons if r.code != "not_reported"]
        lines += [f"      entry {e.task_id}: theirs {e.theirs}; ours {e.ours}" for e in c.entries]
    counts = {v: sum(1 for c in checks if c.verdict == v) for v in VERDICTS}
    lines.append(
        f"{count(len(checks), 'claim')}: {counts['reproduced']} reproduced, "
        f"{counts['reproduced_best_of']} reproduced as "
        f"best-of-K, {count(counts['differs'], 'differs', 'differ')}, "
        f"{counts['not_checkable']} not checkable, "
        f"{counts['not_reported']} not reported"
    )
    lines.append(f"signature: {signature}")
    return "\n".join(lines) + "\n"


def check_claims(
    claims: str | os.PathLike[str],
    files: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    best_of: bool = False,
    format: str | None = None,
    tolerance: Fraction | None = None,
    adapter: str = "auto",
    **adapter_options: object,
) -> dict[str, Any]:
    """API-CLAIMS: the ``prefixexec crosscheck CLAIMS FILE... --json`` document, as a dict.

    ``claims`` is a tau2 submission.json, BFCL's data_multi_turn.csv or a BFCL score file
    (``format`` detected when ``None``); ``files`` are the trajectories (``adapter`` and its
    options as for :func:`prefixexec.read`). Bad input raises :class:`prefixexec.InputError`.
    """
    from prefixexec.api import _paths, _resolve, adapter_arguments
    from prefixexec.options import adapter_options as checked
    from prefixexec.options import signature_of

    paths = _paths(files)
    name = _resolve(adapter, paths)
    arguments = adapter_arguments(name, paths, adapter_options)
    found = read_claims(os.fspath(claims), format, tolerance)
    runs = read_runs(paths, name, checked(arguments))
    signature = signature_of(arguments, 0, 0, 0.95)
    document = checks_json(found, check(found, runs, best_of), str(signature), best_of)
    loaded: dict[str, Any] = json.loads(json.dumps(document, allow_nan=False))
    return loaded


__all__ = [
    "BFCL_COLUMNS",
    "FORMATS",
    "VERDICTS",
    "Claim",
    "ClaimCheck",
    "Claims",
    "Reason",
    "Run",
    "check",
    "check_bfcl",
    "check_claims",
    "check_tau2",
    "checks_json",
    "detect_format",
    "format_checks",
    "read_bfcl_csv",
    "read_bfcl_score",
    "read_claims",
    "read_runs",
    "read_tau2_submission",
]
