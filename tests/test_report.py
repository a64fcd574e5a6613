"""`prefixexec report`: golden tables, the bold rule, costs, decomposition, summary, files, progress."""

from __future__ import annotations

import csv
import io
import json
import math
import re
import warnings
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from prefixexec.adapters import AdapterOptions, taubench
from prefixexec.cli import main
from prefixexec.inference import evaluate
from prefixexec.kernel import LABEL_KEYS, ConditionKey, Outcome, Rollout
from prefixexec.kernel.bootstrap import BootstrapSettings
from prefixexec.report import FILES, Progress, ReportOptions, build_report, evaluate_by_dataset, render_files
from prefixexec.report.model import best_flags, decomposition_row, main_table
from prefixexec.report.tables import md_escape, table_tex, tex_escape

from conftest import REAL, REPO, DrawnReport
from strategies import outcomes

GOLDEN = REPO / "tests" / "golden"
INPUT = GOLDEN / "report_input.jsonl"
#: The settings the golden files were produced with (tests/golden/README.md).
GOLDEN_ARGS = ["--bootstrap", "2000", "--seed", "7", "--checkpoints", "1,2,4", "--quiet"]
GOLDEN_FILES = (
    "table.md",
    "table.csv",
    "checkpoints.md",
    "checkpoints.csv",
    "labels.md",
    "labels.csv",
    "decomposition.md",
)
TAU_FIXTURE = REAL / "tau-bench-v1" / "gpt-4o-airline.json"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def golden_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "golden"
    assert main(["report", str(INPUT), "--out", str(out), *GOLDEN_ARGS]) == 0
    return out


def read_csv(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


# ------------------------------------------------------------------------ golden files


@pytest.mark.spec("REP-TABLE", "REP-CHECKPOINTS", "REP-LABELS", "REP-DECOMP", "REP-COST")
@pytest.mark.parametrize("name", GOLDEN_FILES)
def test_golden_files(golden_dir: Path, name: str) -> None:
    # Golden: tests/golden/report_<name>, produced and checked as tests/golden/README.md says.
    expected = (GOLDEN / f"report_{name}").read_text(encoding="utf-8")
    assert (golden_dir / name).read_text(encoding="utf-8") == expected


def naive_outcome(record: dict[str, Any]) -> tuple[int, int, str | None]:
    """(T, FED, primary label) of a record, read off literally (no kernel code)."""
    order = ["schema", "dependency", "precondition", "state_consistency", "information"]

    def primary(label: Any) -> str | None:
        names = [label] if isinstance(label, str) else list(label or [])
        return min(names, key=order.index) if names else "unlabelled"

    if "outcome" in record:
        o = record["outcome"]
        return o["T"], o["fed"], (None if o["fed"] == o["T"] + 1 else primary(o.get("label")))
    actions = record["actions"]
    if not actions:
        ok = record.get("no_tool_allowed", False)
        return 1, (2 if ok else 1), (None if ok else "unlabelled")
    for i, a in enumerate(actions):
        if not a["executable"]:
            return len(actions), i + 1, primary(a.get("label"))
    return len(actions), len(actions) + 1, None


def golden_conditions() -> dict[tuple[str, str, str], list[tuple[str, int, int, bool, str | None]]]:
    found: dict[tuple[str, str, str], list[tuple[str, int, int, bool, str | None]]] = {}
    for line in INPUT.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        T, fed, label = naive_outcome(r)
        found.setdefault((r["dataset"], r["model"], r["method"]), []).append(
            (r["task_id"], T, fed, r["success"], label)
        )
    return {k: sorted(v) for k, v in found.items()}


def scipy_interval(data: list[float], B: int, seed: int) -> tuple[float, float]:
    with warnings.catch_warnings():
        # scipy warns when a resample distribution is degenerate (all values equal); that case is
        # compared too, and the warning is not what is tested.
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        res = stats.bootstrap(
            (np.array(data, dtype=np.float64),), np.mean, n_resamples=B, method="percentile", rng=seed
        )
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


@pytest.mark.spec("REP-TABLE", "REP-BOLD")
def test_golden_table_numbers_are_independently_right() -> None:
    # Every point estimate of the golden table.csv is recomputed here from the raw records by
    # literal counting; every TER/success/mean FED interval by scipy.stats.bootstrap (percentile,
    # B = 2000, rng = 7: one rollout per task, tasks in sorted order, as BOOT-PERCENTILE promises
    # bit for bit) and every RR interval by statsmodels' Wilson interval.
    rows = {(r["dataset"], r["model"], r["method"]): r for r in read_csv(GOLDEN / "report_table.csv")}
    conditions = golden_conditions()
    assert set(rows) == set(conditions)
    for key, items in conditions.items():
        row = rows[key]
        N = len(items)
        full = [fed == T + 1 for _, T, fed, _, _ in items]
        Y = [y for *_, y, _ in items]
        eligible = N - sum(full)
        recovered = sum(1 for f, y in zip(full, Y, strict=True) if y and not f)
        expected = {
            "TER": Fraction(sum(full), N),
            "mean_FED": Fraction(sum(fed for _, _, fed, _, _ in items), N),
            "AUC_PEC": sum((Fraction(fed - 1, T) for _, T, fed, _, _ in items), Fraction(0)) / N,
            "success": Fraction(sum(Y), N),
        }
        for name, value in expected.items():
            assert row[f"{name}_exact"] == str(value), (key, name)
            assert float(row[name]) == float(value)
        assert int(row["N"]) == N and int(row["RR_eligible"]) == eligible
        if eligible:
            assert row["RR_exact"] == str(Fraction(recovered, eligible))
            lo, hi = proportion_confint(recovered, eligible, alpha=0.05, method="wilson")
            assert math.isclose(float(row["RR_lo"]), lo, abs_tol=1e-12)
            assert math.isclose(float(row["RR_hi"]), hi, abs_tol=1e-12)
        else:
            assert row["RR"] == row["RR_exact"] == row["RR_lo"] == ""  # REP-CSV: undefined is empty
        for name, data in (
            ("TER", [float(f) for f in full]),
            ("success", [float(y) for y in Y]),
            ("mean_FED", [float(fed) for _, _, fed, _, _ in items]),
        ):
            assert (float(row[f"{name}_lo"]), float(row[f"{name}_hi"])) == scipy_interval(data, 2000, 7), (
                key,
                name,
            )


@pytest.mark.spec("REP-BOLD")
def test_golden_bold_marks_ties_at_printed_precision() -> None:
    rows = {(r["dataset"], r["model"], r["method"]): r for r in read_csv(GOLDEN / "report_table.csv")}
    a, b, c = (rows[("alpha", "m1", m)] for m in "abc")
    # AUC-PEC: 17/30 = 0.5667 and 43/75 = 0.5733 differ exactly but both print 0.57: both bold.
    assert (a["AUC_PEC_exact"], b["AUC_PEC_exact"]) == ("17/30", "43/75")
    assert a["AUC_PEC_best"] == b["AUC_PEC_best"] == "true" and c["AUC_PEC_best"] == "false"
    # success: 3/5 for all three methods: all bold. TER: a and c tie exactly at 2/5.
    assert {r["success_best"] for r in (a, b, c)} == {"true"}
    assert (a["TER_best"], b["TER_best"], c["TER_best"]) == ("true", "false", "true")
    # RR: undefined (n/a) is never bold, whatever else is in the column.
    m2a = rows[("alpha", "m2", "a")]
    assert m2a["RR"] == "" and m2a["RR_best"] == "false"
    assert rows[("alpha", "m2", "b")]["RR_best"] == "true"
    md = (GOLDEN / "report_table.md").read_text(encoding="utf-8")
    assert "| a | 5 | **0.40** [0.00, 0.80] | 2.60 [1.60, 3.40] | **0.57** [0.23, 0.90] | 3 |" in md


@pytest.mark.spec("REP-BOLD")
@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        (["0.57", "0.57", "0.50"], [True, True, False]),  # tie at the printed precision
        (["0.10", "n/a", "0.30"], [False, False, True]),  # n/a is never bold
        (["n/a", "n/a"], [False, False]),  # nothing defined, nothing bold
        (["0.90"], [False]),  # a single method: nothing to compare
        (["2.80", "10.00", "9.99"], [False, True, False]),  # numeric, not string, order
        (["1.00", "1.00", "1.00"], [True, True, True]),
    ],
)
def test_best_flags(texts: list[str], expected: list[bool]) -> None:
    assert best_flags(texts) == expected


# ------------------------------------------------------------------------ LaTeX and escaping


@pytest.mark.spec("REP-TEX")
def test_tex_table_structure_and_escaping(tmp_path: Path) -> None:
    odd = "a_b & c% #1 $x {y} ~^\\ <z>|"
    path = tmp_path / "odd.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {
                    "dataset": "d_1",
                    "model": "m&m",
                    "method": method,
                    "task_id": t,
                    "success": y,
                    "outcome": {"T": 2, "fed": fed},
                }
            )
            + "\n"
            for method, t, fed, y in [
                (odd, "t1", 3, True),
                (odd, "t2", 1, False),
                ("plain", "t1", 1, True),
                ("plain", "t2", 3, False),
            ]
        ),
        encoding="utf-8",
    )
    rollouts = read_rollouts(path)
    report = build_report(rollouts, evaluate(rollouts, BootstrapSettings(B=200)), "sig|x_y", ReportOptions(),
                          (200, 0, 0.95))  # fmt: skip
    tex = table_tex(report)
    assert tex_escape(odd) in tex and odd not in tex
    assert r"\textit{d\_1 / m\&m}" in tex
    lines = tex.splitlines()
    assert lines.index(r"\toprule") < lines.index(r"\midrule") < lines.index(r"\bottomrule")
    start, end = lines.index(r"\toprule"), lines.index(r"\bottomrule")
    for line in lines[start + 1 : end]:
        if line == r"\midrule" or line.startswith(r"\multicolumn"):
            continue
        assert line.endswith(r"\\")
        # 8 columns: 7 unescaped '&' separators per row (escaped ones are '\&').
        assert len(re.findall(r"(?<!\\)&", line)) == 7, line
    assert tex.count("{") == tex.count("}")
    assert r"\textbf{" in tex and r"\texttt{sig|x\_y}" in tex


def read_rollouts(path: Path) -> list[Rollout]:
    from prefixexec import read_records

    return read_records([str(path)])


@pytest.mark.spec("REP-TABLE")
def test_markdown_escapes_names() -> None:
    assert md_escape("a|b*c<d>") == "a\\|b\\*c&lt;d&gt;"


# ------------------------------------------------------------------------ costs


@pytest.mark.spec("REP-COST")
@pytest.mark.usefixtures("figures_not_drawn")
def test_cost_columns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def rec(t: str, cost: dict[str, float] | None) -> str:
        r: dict[str, Any] = {"dataset": "d", "model": "m", "method": "x", "task_id": t, "success": True,
                             "outcome": {"T": 1, "fed": 2}}  # fmt: skip
        if cost is not None:
            r["cost"] = cost
        return json.dumps(r) + "\n"

    plain = tmp_path / "plain.jsonl"
    plain.write_text(rec("t1", None) + rec("t2", None), encoding="utf-8")
    assert (
        run(["report", str(plain), "--out", str(tmp_path / "p"), "--bootstrap", "0", "--quiet"], capsys)[0]
        == 0
    )
    assert "tokens" not in (tmp_path / "p" / "table.md").read_text(encoding="utf-8")
    assert "cost" not in json.loads((tmp_path / "p" / "summary.json").read_text())["conditions"][0]

    costly = tmp_path / "costly.jsonl"
    costly.write_text(
        rec("t1", {"tokens": 0.1, "latency_s": 2}) + rec("t2", {"tokens": 0.2}) + rec("t3", None),
        encoding="utf-8",
    )
    assert (
        run(["report", str(costly), "--out", str(tmp_path / "c"), "--bootstrap", "0", "--quiet"], capsys)[0]
        == 0
    )
    md = (tmp_path / "c" / "table.md").read_text(encoding="utf-8")
    # tokens: (0.1 + 0.2) / 2 = 0.15 over 2 of 3 rollouts (printed to 0 decimals); latency 2 over 1 of 3.
    assert "| 0 (2/3) | 2.00 (1/3) |" in md
    cost = json.loads((tmp_path / "c" / "summary.json").read_text())["conditions"][0]["cost"]
    # Exact: each double read exactly, so the mean is (Fraction(0.1) + Fraction(0.2)) / 2, not 0.15.
    assert cost["tokens"]["exact"] == str((Fraction(0.1) + Fraction(0.2)) / 2)
    assert cost["tokens"]["n"] == 2 and cost["latency_s"] == {"mean": 2.0, "exact": "2", "n": 1}
    row = read_csv(tmp_path / "c" / "table.csv")[0]
    assert (row["tokens_n"], row["latency_s_mean"], row["latency_s_n"]) == ("2", "2.0", "1")


# ------------------------------------------------------------------------ decomposition


def taubench_rollouts() -> list[Rollout]:
    return taubench.read([str(TAU_FIXTURE)], AdapterOptions())


@pytest.mark.spec("REP-DECOMP", "EQ-12")
def test_decomposition_identity_on_the_taubench_fixture() -> None:
    rollouts = taubench_rollouts()
    report = build_report(rollouts, evaluate(rollouts, None), "sig", ReportOptions())
    rows = report.rows
    assert rows  # the fixture's conditions (GPT-4o airline)
    for row in rows:
        d = decomposition_row(row)
        mine = [r for r in rollouts if r.condition == row.key]
        successes = sum(r.success for r in mine)
        full = [r for r in mine if r.outcome.fed == r.outcome.T + 1]
        # Independent: success counted from the rollouts, the split counted by hand.
        assert d.success == Fraction(successes, len(mine))
        assert d.holds and d.combined == d.success
        assert d.uninterrupted == sum(r.success for r in full)
        assert d.recovered == successes - d.uninterrupted
        assert d.successes == successes


@pytest.mark.spec("REP-DECOMP", "EQ-12")
@given(
    st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), outcomes(), st.booleans()), min_size=1, max_size=40)
)
def test_decomposition_identity_on_generated_conditions(items: list[tuple[str, Outcome, bool]]) -> None:
    rollouts = [
        Rollout(ConditionKey("d", "m", method), f"t{i}", 0, outcome, y)
        for i, (method, outcome, y) in enumerate(items)
    ]
    report = build_report(rollouts, evaluate(rollouts, None), "sig", ReportOptions())
    for row in report.rows:
        d = decomposition_row(row)
        assert d.combined == d.success  # including q = 0 (s undefined) and q = 1 (r undefined)


@pytest.mark.spec("REP-DECOMP")
@pytest.mark.usefixtures("figures_not_drawn")
def test_decomposition_sentence_of_the_paper_example(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Paper section 3.1: 200 rollouts, 10 fully executable and successful, 138 of 190 failing ones
    # successful -> "138/148 = 93.2%" of the successes came after a first failure.
    lines = [
        {"dataset": "bfcl", "model": "llama", "method": "pc-react", "task_id": f"t{i:03d}",
         "success": i < 10 or i < 148, "outcome": {"T": 4, "fed": 5 if i < 10 else 1 + i % 4}}
        for i in range(200)
    ]  # fmt: skip
    path = tmp_path / "paper.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    assert (
        run(["report", str(path), "--out", str(tmp_path / "r"), "--bootstrap", "0", "--quiet"], capsys)[0]
        == 0
    )
    md = (tmp_path / "r" / "decomposition.md").read_text(encoding="utf-8")
    row = "| pc-react | 200 | 10/200 = 0.05 | 10/10 = 1.00 | 138/190 = 0.73 | 37/50 = 0.74 | 148/200 = 0.74 |"
    assert row + " holds | 10 | 138 |" in md
    assert "(138/148 = 93.2% of the successes)" in md


# ------------------------------------------------------------------------ summary.json


@pytest.mark.spec("REP-SUMMARY", "OUT-JSON")
def test_summary_extends_the_score_json(golden_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    summary = json.loads((golden_dir / "summary.json").read_text(encoding="utf-8"))
    code, out, _ = run(["score", "--json", str(INPUT), "--bootstrap", "2000", "--seed", "7"], capsys)
    assert code == 0
    scored = json.loads(out)
    assert summary["signature"] == scored["signature"]
    assert len(summary["conditions"]) == len(scored["conditions"])
    for mine, theirs in zip(summary["conditions"], scored["conditions"], strict=True):
        assert {k: mine[k] for k in theirs} == theirs
        assert set(mine) - set(theirs) == {
            "bold",
            "checkpoints",
            "label_shares",
            "success_after_failure",
            "cost",
        }
    assert summary["files"] == list(FILES)
    assert summary["settings"] == {
        "checkpoints": [1, 2, 4],
        "max_depth": None,
        "eligible": False,
        "intervals": True,
        "panel": "dataset",
        "figure_size": "double",
    }
    a = summary["conditions"][0]
    assert (a["dataset"], a["model"], a["method"]) == ("alpha", "m1", "a")
    assert a["bold"] == ["TER", "AUC_PEC", "success"]
    assert [c["k"] for c in a["checkpoints"]] == [1, 2, 4]
    # alpha/m1/a has horizons <= 4 and FED <= 4: PEC(4) = 0, every replicate 0 (INV-PEC-ZERO).
    assert a["checkpoints"][2] == {"k": 4, "PEC": 0.0, "exact": "0", "ci": [0.0, 0.0], "best": True}
    assert a["label_shares"]["precondition"] == 1 / 3
    assert a["success_after_failure"] == {
        "successes": 3, "after_failure": 1, "share": 1 / 3, "exact": "1/3", "identity_holds": True
    }  # fmt: skip
    assert a["cost"]["tokens"] == {"mean": 250.0, "exact": "250", "n": 4}


# ------------------------------------------------------------------------ files and errors


@pytest.mark.spec("REP-FILES")
def test_report_writes_exactly_the_files_reproducibly(golden_dir: Path, tmp_path: Path) -> None:
    assert sorted(p.name for p in golden_dir.iterdir()) == sorted(FILES)
    again = tmp_path / "again"
    assert main(["report", str(INPUT), "--out", str(again), *GOLDEN_ARGS]) == 0
    for name in FILES:
        assert (again / name).read_bytes() == (golden_dir / name).read_bytes(), name
    # Order of records and split over files do not matter (INV-PERM).
    lines = INPUT.read_text(encoding="utf-8").splitlines()
    first, second = tmp_path / "1.jsonl", tmp_path / "2.jsonl"
    first.write_text("\n".join(lines[::-2]) + "\n", encoding="utf-8")
    second.write_text("\n".join(lines[-2::-2]) + "\n", encoding="utf-8")
    split = tmp_path / "split"
    assert main(["report", str(second), str(first), "--out", str(split), *GOLDEN_ARGS]) == 0
    for name in ("table.md", "table.csv", "summary.json", "pec.svg"):
        assert (split / name).read_bytes() == (golden_dir / name).read_bytes(), name
    assert (golden_dir / "table.md").stat().st_mode & 0o044  # readable by others, not mkstemp's 0600


@pytest.mark.spec("REP-FILES", "REC-ERRORS")
def test_bad_input_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(INPUT.read_text(encoding="utf-8") + '{"dataset": "alpha"}\n', encoding="utf-8")
    out = tmp_path / "never"
    code, stdout, err = run(["report", str(bad), "--out", str(out), "--quiet"], capsys)
    assert code == 2 and stdout == ""
    assert err.startswith(f"prefixexec: error: {bad}:32: ")
    assert not out.exists()
    a_file = tmp_path / "file"
    a_file.write_text("x", encoding="utf-8")
    code, _, err = run(["report", str(INPUT), "--out", str(a_file), "--quiet"], capsys)
    assert code == 2 and "not a directory" in err and a_file.read_text(encoding="utf-8") == "x"


@pytest.mark.spec("REP-FILES")
def test_bad_options_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    for option in (["--checkpoints", "1,x"], ["--checkpoints", "0"], ["--max-depth", "0"]):
        with pytest.raises(SystemExit) as exc:
            main(["report", str(INPUT), "--out", str(tmp_path / "o"), *option])
        assert exc.value.code == 2
    assert not (tmp_path / "o").exists()


@pytest.mark.spec("REP-TABLE")
@pytest.mark.usefixtures("figures_not_drawn")
def test_without_intervals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["report", str(INPUT), "--out", str(tmp_path), "--bootstrap", "0", "--quiet"], capsys)[0] == 0
    md = (tmp_path / "table.md").read_text(encoding="utf-8")
    assert not re.search(r"\[\d", md)
    assert "No intervals (--bootstrap 0)." in md and md.rstrip().endswith("adapter:records|boot:0`")
    row = read_csv(tmp_path / "table.csv")[0]
    assert row["TER_lo"] == row["TER_hi"] == "" and row["TER_exact"] == "2/5"


# ------------------------------------------------------------------------ progress


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.spec("REP-PROGRESS")
def test_progress_appears_only_after_the_delay() -> None:
    clock, stream = FakeClock(), Tty()
    p = Progress(3, stream=stream, clock=clock, delay=0.5, label="x")
    p.step("first")
    assert stream.getvalue() == ""  # quick: silent
    clock.now = 0.6
    p.step("second")
    p.close()
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", stream.getvalue())
    assert "2/3" in plain and plain.rstrip().endswith("second")
    piped = io.StringIO()  # not a terminal: nothing at all, however long the run
    q = Progress(3, stream=piped, clock=clock, delay=0.0, label="x")
    q.step("first")
    q.close()
    assert piped.getvalue() == ""


@pytest.mark.spec("REP-PROGRESS")
def test_progress_redraws_one_line_on_a_terminal_and_quiet_is_silent() -> None:
    clock, tty = FakeClock(), Tty()
    clock.now = 0.0
    p = Progress(2, stream=tty, clock=clock, delay=0.0, label="x")
    p.step("a")
    p.step("b")
    p.close()
    # A rich bar redrawn in place (cursor movement, no line per step), ending on the last step.
    text = tty.getvalue()
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)
    assert "\x1b[" in text and plain.count("\n") == 1
    assert plain.rstrip().endswith("2/2 0:00:00 left 0:00:00 b")  # steps done, elapsed, time left
    assert "\r" in plain  # redrawn in place
    quiet = io.StringIO()
    q = Progress(2, stream=quiet, clock=clock, delay=0.0, enabled=False)
    q.step("a")
    q.close()
    assert quiet.getvalue() == ""


@pytest.mark.spec("REP-PROGRESS")
def test_cli_quiet_and_stdout(drawn_report: DrawnReport) -> None:
    # `prefixexec report tests/golden/report_input.jsonl --bootstrap 300 --seed 7 --quiet`, in this
    # process, every figure drawn (conftest.py's session fixture, shared with the figure and page tests)
    assert drawn_report.argv[1] == str(INPUT) and drawn_report.argv[-1] == "--quiet"
    folder, out = drawn_report.folder, drawn_report.stdout
    assert drawn_report.status == 0 and drawn_report.stderr == ""
    assert out == f"wrote {len(FILES)} files to {folder}; open {folder / 'report.html'}\n"


@pytest.mark.spec("REP-PROGRESS", "BOOT-DRAW")
def test_scoring_dataset_by_dataset_changes_nothing() -> None:
    from prefixexec import read_records

    rollouts = read_records([str(INPUT)])
    settings = BootstrapSettings(B=300, seed=3)
    stream = Tty()
    progress = Progress(2, stream=stream, delay=0.0)
    apart = evaluate_by_dataset(rollouts, settings, progress=progress)
    together = evaluate(rollouts, settings)
    assert [r.key for r in apart] == [r.key for r in together]
    for x, y in zip(apart, together, strict=True):
        assert x.metrics == y.metrics and x.intervals == y.intervals
    assert "scoring alpha" in stream.getvalue() and "scoring beta" in stream.getvalue()


# ------------------------------------------------------------------------ helpers used above


def _labels_sum(report_dir: Path) -> Iterator[tuple[int, int]]:
    for row in read_csv(report_dir / "labels.csv"):
        yield int(row["RR_eligible"]), sum(int(row[k]) for k in LABEL_KEYS)


@pytest.mark.spec("REP-LABELS", "INV-LABEL-SUM")
def test_label_counts_sum_to_rr_eligible(golden_dir: Path) -> None:
    pairs = list(_labels_sum(golden_dir))
    assert len(pairs) == 7 and all(a == b for a, b in pairs)
    # Hand count from tests/golden/report_input.jsonl, alpha/m2/b: labels schema, schema,
    # dependency, information and one unlabelled.
    row = read_csv(golden_dir / "labels.csv")[4]
    assert (row["method"], row["schema"], row["dependency"], row["information"], row["unlabelled"]) == (
        "b", "2", "1", "1", "1"
    )  # fmt: skip
    assert row["schema_share"] == "0.4"


@pytest.mark.spec("REP-TABLE")
@pytest.mark.usefixtures("figures_not_drawn")
def test_main_table_cells_carry_the_intervals_of_inference() -> None:
    from prefixexec import read_records

    rollouts = read_records([str(INPUT)])
    results = evaluate(rollouts, BootstrapSettings(B=500, seed=1))
    report = build_report(rollouts, results, "sig", ReportOptions(), (500, 1, 0.95))
    table = main_table(report.blocks[0], report)
    method, cells = table.rows[0]
    first = report.blocks[0].rows[0].result
    assert first.intervals is not None
    assert method == "a" and cells[1].interval == first.intervals.scalars["TER"]
    assert cells[5].interval == first.intervals.RR_wilson
    files = render_files(report)
    assert list(files) == list(FILES)


@pytest.mark.spec("REP-ROUND")
@pytest.mark.parametrize(
    ("value", "printed"),
    [
        (Fraction(53, 8), "6.63"),  # 6.625: a tie, half up (format() gives 6.62)
        (6.625, "6.63"),  # the same tie as a double (6.625 is exact in binary)
        (Fraction(1, 8), "0.13"),
        (Fraction(-1, 8), "-0.13"),  # half away from zero
        (-0.001, "0.00"),  # never -0.00
        (Fraction(17, 30), "0.57"),
        (0.285, "0.28"),  # the double nearest 0.285 is 0.28499999999999998002: below the tie
        (Fraction(57, 200), "0.29"),  # the exact 0.285 is a tie: up
    ],
)
def test_half_up_on_the_exact_value(value: Fraction | float, printed: str) -> None:
    from prefixexec.report.model import fmt

    assert fmt(value) == printed


@pytest.mark.spec("REP-CSV")
def test_no_csv_of_a_report_writes_n_a(golden_dir: Path) -> None:
    for name in ("table.csv", "checkpoints.csv", "labels.csv"):
        text = (golden_dir / name).read_text(encoding="utf-8")
        assert "n/a" not in text and ",," in text  # undefined cells exist in this input, empty


@pytest.mark.spec("REP-TEX-COMPACT")
@pytest.mark.usefixtures("figures_not_drawn")
def test_tex_compact_puts_half_widths_on_a_second_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Checked by hand beyond this test: the golden input's compact table (with both cost columns)
    # and the tau-bench airline one compile with pdflatex in \documentclass[twocolumn]{article}
    # with no "Overfull \hbox" (TeX is not installed by the test command).
    argv = ["report", str(INPUT), "--out", str(tmp_path), "--tex-compact", *GOLDEN_ARGS]
    assert run(argv, capsys)[0] == 0
    tex = (tmp_path / "table.tex").read_text(encoding="utf-8")
    assert r"\footnotesize" in tex and r"\setlength{\tabcolsep}{2pt}" in tex
    header = next(line for line in tex.splitlines() if line.startswith("Method &"))
    assert header == r"Method & $N$ & TER & FED & AUC & Elig. & RR & Succ. & Tok. & Lat. \\"
    lines = tex.splitlines()
    first = lines.index(next(line for line in lines if line.startswith("a & 5 &")))  # alpha / m1 / a
    assert lines[first + 1].startswith(" & ") and lines[first + 1].endswith(r"\\[1pt]")
    # TER of alpha/m1/a: table.csv gives its interval; the half-width is printed.
    table = read_csv(tmp_path / "table.csv")
    a = next(r for r in table if (r["dataset"], r["model"], r["method"]) == ("alpha", "m1", "a"))
    from prefixexec.report.model import fmt

    half = fmt((float(a["TER_hi"]) - float(a["TER_lo"])) / 2)
    assert lines[first + 1].split(" & ")[2] == rf"{{\scriptsize $\pm${half}}}"
    assert "[0" not in lines[first + 1]  # no bracketed interval in the compact layout
    assert r"|\allowbreak{}" in tex  # the signature can break
