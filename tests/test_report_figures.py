"""The report's figures, checked on the figure objects (panels, lines, bands), not on pixels."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import pytest
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure

from prefixexec import read_records
from prefixexec.inference import evaluate
from prefixexec.kernel.bootstrap import BootstrapSettings
from prefixexec.report import Report, ReportOptions, build_report
from prefixexec.report.figures import (
    labels_figure,
    legend_of,
    note_of,
    panel_titles,
    pec_figure,
    render,
    title_of,
)

from conftest import REPO, DrawnReport

INPUT = REPO / "tests" / "golden" / "report_input.jsonl"
BLOCKS = ["alpha / m1", "alpha / m2", "beta / m1"]


def report_of(options: ReportOptions, B: int = 300) -> Report:
    rollouts = read_records([str(INPUT)])
    settings = BootstrapSettings(B=B, seed=7) if B else None
    results = evaluate(rollouts, settings)
    return build_report(rollouts, results, "sig", options, None if not B else (B, 7, 0.95))


def visible(fig: Figure) -> list[object]:
    return [ax for ax in fig.axes if ax.get_visible()]


@pytest.mark.spec("REP-PEC-FIG")
def test_pec_panels_lines_and_bands() -> None:
    report = report_of(ReportOptions(panel="model"))
    fig = pec_figure(report)
    assert panel_titles(fig) == BLOCKS
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert len(fig.axes) == 4 and len(axes) == 3  # 3 panels in two rows of 2 (7 in wide), one left empty
    for ax, block in zip(axes, report.blocks, strict=True):
        lines = ax.get_lines()
        assert [line.get_label() for line in lines] == [r.key.method for r in block.rows]
        K = max(len(r.metrics.PEC) for r in block.rows)
        for line, row in zip(lines, block.rows, strict=True):
            assert list(line.get_xdata()) == list(range(1, K + 1))
            expected = [float(v) for v in row.metrics.PEC] + [0.0] * (K - len(row.metrics.PEC))
            assert list(line.get_ydata()) == expected  # padded with 0 beyond its longest horizon
        bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
        assert len(bands) == len(block.rows)
        assert ax.get_xlabel() == "depth k" and ax.get_ylabel() == "PEC(k)"
    # alpha / m1 / a, by hand from tests/golden/report_input.jsonl: FED = 3, 2, 4, 1, 3 over N = 5
    # -> PEC(1..4) = 4/5, 3/5, 1/5, 0 (longest horizon 4 in the block: alpha/m1/b has T = 5).
    a = axes[0].get_lines()[0]
    assert list(a.get_ydata()) == [0.8, 0.6, 0.2, 0.0, 0.0]


@pytest.mark.spec("REP-PEC-FIG")
def test_pec_eligible_dashed_and_max_depth() -> None:
    report = report_of(ReportOptions(eligible=True, max_depth=2, panel="model"))
    fig = pec_figure(report)
    ax = fig.axes[0]
    lines = ax.get_lines()
    solid = [line for line in lines if line.get_linestyle() == "-"]
    dashed = [line for line in lines if line.get_linestyle() == "--"]
    assert len(solid) == len(dashed) == 3
    assert [line.get_label() for line in dashed] == ["a (PEC_elig)", "b (PEC_elig)", "c (PEC_elig)"]
    for line in lines:
        assert list(line.get_xdata()) == [1, 2]  # --max-depth 2
    for line, s in zip(dashed, solid, strict=True):
        assert line.get_color() == s.get_color()
    # alpha / m1 / a: n_k = 5, 4 (T = 2, 3, 3, 1, 4); survivors 4, 3 -> PEC_elig = 4/5, 3/4.
    assert list(dashed[0].get_ydata()) == [0.8, 0.75]


@pytest.mark.spec("REP-PEC-FIG")
def test_pec_eligible_gap_where_n_k_is_zero() -> None:
    fig = pec_figure(report_of(ReportOptions(eligible=True, panel="model")))
    # alpha / m1 / c (tests/golden/report_input.jsonl): T = 2, 2, 1, 3, 2, so n_4 = n_5 = 0, in a
    # block whose longest horizon is 5 (alpha / m1 / b): PEC_elig is undefined (NaN) at k = 4, 5.
    c = next(line for line in fig.axes[0].get_lines() if line.get_label() == "c (PEC_elig)")
    y = list(c.get_ydata())
    assert len(y) == 5 and not any(math.isnan(v) for v in y[:3]) and all(math.isnan(v) for v in y[3:])


@pytest.mark.spec("REP-PEC-FIG")
def test_no_bands_without_intervals_and_note_in_title() -> None:
    fig = pec_figure(report_of(ReportOptions(note="SIMULATED"), B=0))
    for ax in visible(fig):
        assert not [c for c in ax.collections if isinstance(c, PolyCollection)]
    # Short title; the note is a footnote under the panels, not a title line (REP-PEC-FIG).
    assert title_of(fig) == "Prefix executability PEC(k)"
    assert note_of(fig) == "SIMULATED" and note_of(pec_figure(report_of(ReportOptions(), B=0))) is None


@pytest.mark.spec("REP-LABELS")
def test_labels_figure_stacks_counts() -> None:
    report = report_of(ReportOptions(panel="model"), B=0)
    fig = labels_figure(report)
    assert panel_titles(fig) == BLOCKS
    ax = fig.axes[1]  # alpha / m2
    containers = ax.containers
    assert [c.get_label() for c in containers] == [
        "schema", "dependency", "precondition", "state consistency", "information", "unlabelled"
    ]  # fmt: skip
    # alpha/m2/b by hand: schema 2, dependency 1, precondition 0, state 0, information 1, unlabelled 1;
    # alpha/m2/a is fully executable (no bar). Bars stack left to right.
    widths_b = [c.patches[1].get_width() for c in containers]
    lefts_b = [c.patches[1].get_x() for c in containers]
    assert widths_b == [2, 1, 0, 0, 1, 1] and lefts_b == [0, 2, 3, 3, 3, 4]
    assert [c.patches[0].get_width() for c in containers] == [0] * 6


@pytest.mark.spec("REP-PEC-FIG", "REP-LABELS")
def test_figure_files(drawn_report: DrawnReport) -> None:
    # `prefixexec report tests/golden/report_input.jsonl --bootstrap 300 --seed 7 --quiet`
    assert drawn_report.argv[1] == str(INPUT) and drawn_report.status == 0, drawn_report.stderr
    out = drawn_report.folder
    for name in ("pec.png", "labels.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    root = ET.fromstring((out / "pec.svg").read_bytes())
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    # The SVG is reproducible: no date, fixed ids.
    assert b"<dc:date>" not in (out / "pec.svg").read_bytes()
    fig = pec_figure(report_of(ReportOptions()))
    assert render(fig, "svg") == render(fig, "svg")


@pytest.mark.spec("REP-PEC-FIG")
def test_a_method_keeps_its_colour_in_every_panel() -> None:
    for panel in ("dataset", "model"):
        fig = pec_figure(report_of(ReportOptions(panel=panel), B=0))
        colours: dict[str, set[str]] = {}
        for ax in visible(fig):
            for line in ax.get_lines():
                method = str(line.get_label()).split(" · ")[0]
                colours.setdefault(method, set()).add(str(line.get_color()))
        # Methods a and b appear in all three blocks, c in one; distinct methods, distinct colours.
        assert all(len(c) == 1 for c in colours.values())
        assert len({next(iter(c)) for c in colours.values()}) == len(colours) == 3


@pytest.mark.spec("REP-ELIG-FIG")
def test_elig_figure_has_curves_bands_and_an_n_k_strip() -> None:
    from prefixexec.report.figures import elig_figure

    report = report_of(ReportOptions(panel="model"))
    fig = elig_figure(report)
    # Two axes per panel (curve, strip), three panels.
    assert len(fig.axes) == 6
    top, strip = fig.axes[0], fig.axes[1]
    assert top.get_title() == "alpha / m1" and top.get_ylabel() == "PEC_elig(k)"
    assert strip.get_ylabel() == "n_k" and strip.get_xlabel() == "depth k"
    # alpha / m1 / a (tests/golden/report_input.jsonl): T = 2, 3, 3, 1, 4 -> n_k = 5, 4, 3, 1, 0
    # at k = 1..5; PEC_elig(1), PEC_elig(2) = 4/5, 3/4 (test_pec_eligible_dashed_and_max_depth).
    a_curve = top.get_lines()[0]
    assert list(a_curve.get_ydata())[:2] == [0.8, 0.75]
    a_strip = strip.get_lines()[0]
    assert list(a_strip.get_ydata()) == [5, 4, 3, 1, 0]
    assert len([c for c in top.collections if isinstance(c, PolyCollection)]) == 3  # one band per method
    no_bands = elig_figure(report_of(ReportOptions(bands=False, panel="model")))
    assert not [c for ax in no_bands.axes for c in ax.collections if isinstance(c, PolyCollection)]


@pytest.mark.spec("REP-PEC-FIG")
def test_bands_get_lighter_with_more_methods_and_can_be_turned_off() -> None:
    from prefixexec.report.figures import band_alpha

    assert band_alpha(1) == 0.2 and band_alpha(5) < band_alpha(3) < band_alpha(2) and band_alpha(100) == 0.06
    fig = pec_figure(report_of(ReportOptions(bands=False)))
    assert not [c for ax in visible(fig) for c in ax.collections if isinstance(c, PolyCollection)]
    bands = [c for c in pec_figure(report_of(ReportOptions(panel="model"))).axes[0].collections]
    assert {round(b.get_alpha(), 6) for b in bands} == {round(band_alpha(3), 6)}  # alpha / m1: 3 methods
    bands = [c for c in pec_figure(report_of(ReportOptions())).axes[0].collections]
    assert {round(b.get_alpha(), 6) for b in bands} == {round(band_alpha(5), 6)}  # alpha: m1 a, b, c; m2 a, b


@pytest.mark.spec("REP-LABELS-FIG")
def test_labels_figure_prints_counts_and_lists_only_present_labels() -> None:
    report = report_of(ReportOptions(panel="model"), B=0)
    fig = labels_figure(report)
    ax = fig.axes[1]  # alpha / m2: b has schema 2, dependency 1, information 1, unlabelled 1 (by hand)
    printed = [t.get_text() for t in ax.texts if t.get_text() and t.get_visible()]
    assert sorted(printed) == ["1", "1", "1", "2"]
    legend = legend_of(fig)
    present = [t.get_text() for t in legend.get_texts()]
    # Every label occurs somewhere in this input (tests/golden/README.md), so all six are listed;
    # precondition occurs only in alpha / m1 (a t4) and beta (by hand).
    assert present == [
        "schema",
        "dependency",
        "precondition",
        "state consistency",
        "information",
        "unlabelled",
    ]
    only_b = [r for r in report.rows if r.key.model == "m2"]
    assert all(r.metrics.label_counts["precondition"] == 0 for r in only_b)


@pytest.mark.spec("REP-LABELS-FIG")
def test_labels_figure_omits_empty_labels_from_the_legend() -> None:
    from prefixexec.kernel import ConditionKey, Outcome, Rollout
    from prefixexec.kernel.actions import Label

    rollouts = [
        Rollout(ConditionKey("d", "m", "x"), "t1", 0, Outcome(T=2, fed=1, label=Label.SCHEMA), True),
        Rollout(ConditionKey("d", "m", "x"), "t2", 0, Outcome(T=2, fed=3), True),
    ]
    report = build_report(rollouts, evaluate(rollouts, None), "sig", ReportOptions())
    legend = legend_of(labels_figure(report))
    assert [t.get_text() for t in legend.get_texts()] == ["schema"]


@pytest.mark.spec("REP-LABELS-FIG")
def test_label_shares() -> None:
    report = report_of(ReportOptions(label_shares=True, panel="model"), B=0)
    ax = labels_figure(report).axes[1]
    # alpha/m2/b: RR-Eligible 5 (schema 2, dependency 1, information 1, unlabelled 1): shares sum to 1.
    widths = [c.patches[1].get_width() for c in ax.containers]
    assert widths == [0.4, 0.2, 0.0, 0.0, 0.2, 0.2] and ax.get_xlabel() == "share of RR-Eligible"
    assert "2/5" in [t.get_text() for t in ax.texts]


@pytest.mark.spec("REP-FIG-FILES")
def test_every_figure_in_three_formats_reproducibly(drawn_report: DrawnReport) -> None:
    # The same report as test_figure_files (figures drawn without intervals: tests/test_report_drill.py
    # and tests/test_hostile.py, through the command; labels_figure below).
    assert drawn_report.argv[1] == str(INPUT) and drawn_report.status == 0, drawn_report.stderr
    out = drawn_report.folder
    for stem in ("pec", "pec_elig", "labels"):
        png = (out / f"{stem}.png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        assert (out / f"{stem}.pdf").read_bytes()[:5] == b"%PDF-"
        assert ET.fromstring((out / f"{stem}.svg").read_bytes()).tag == "{http://www.w3.org/2000/svg}svg"
        assert b"CreationDate" not in (out / f"{stem}.pdf").read_bytes()
    # 300 dpi: a page-wide figure (7 in, REP-FIG-SIZE) is 2100 pixels wide (PNG IHDR width, bytes 16-20).
    width = int.from_bytes((out / "pec.png").read_bytes()[16:20], "big")
    assert width == int(7.0 * 300)
    fig = labels_figure(report_of(ReportOptions(), B=0))
    assert render(fig, "pdf") == render(fig, "pdf")
