"""No text of a report figure lies on another or outside the figure (spec: REP-FIG-SIZE,
REP-PANEL, REP-ELIG-FIG, REP-LABELS-FIG; issue 30: the labels legend lay on the simulated-data
footnote). Measured with matplotlib's own extents of every drawn text, at the figure's size."""

from __future__ import annotations

import functools
import itertools
from typing import Any

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from prefixexec import read_records
from prefixexec.inference import evaluate
from prefixexec.kernel import ConditionKey, Label, Outcome, Rollout
from prefixexec.kernel.bootstrap import BootstrapSettings
from prefixexec.report import ReportOptions, build_report
from prefixexec.report.figures import (
    WIDTHS,
    elig_figure,
    labels_figure,
    panels,
    pec_figure,
    strip_offsets,
)
from prefixexec.report.model import Report

from conftest import REPO

INPUT = REPO / "tests" / "golden" / "report_input.jsonl"
NOTE = (
    "SIMULATED DATA: except 'gold' (BFCL's ground-truth calls), every method is a simulated agent made "
    "by a deterministic perturbation of the gold calls, not a language model."
)


def drawn_texts(fig: Figure) -> list[tuple[str, Bbox]]:
    """Every text the figure draws, with its extent in pixels: titles, legend entries, the note,
    axis labels, the tick labels of drawn ticks and the counts on bars."""
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]  # an Agg canvas
    found: list[Text] = []
    for sub in [fig, *fig.subfigs, *(s for f in fig.subfigs for s in f.subfigs)]:
        found += list(sub.texts)
        for legend in sub.legends:
            found += list(legend.get_texts())
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        found += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label, *ax.texts]
        legend = ax.get_legend()
        if legend is not None:  # an axes' own legend (a site's curves, FIG-NO-OVERLAP)
            found += list(legend.get_texts())
        for axis in (ax.xaxis, ax.yaxis):
            for tick in axis._update_ticks():
                found += [label for label in (tick.label1, tick.label2) if label.get_visible()]
    return [
        (t.get_text(), t.get_window_extent(renderer))
        for t in found
        if t.get_visible() and t.get_text().strip()
    ]


def layout_faults(fig: Figure) -> list[str]:
    """Pairs of drawn texts that overlap, and texts that leave the figure (1 pixel of slack)."""
    width, height = fig.get_size_inches() * fig.dpi
    texts = drawn_texts(fig)
    faults = [
        f"{a!r} overlaps {b!r}"
        for (a, ba), (b, bb) in itertools.combinations(texts, 2)
        if ba.x0 < bb.x1 - 1 and bb.x0 < ba.x1 - 1 and ba.y0 < bb.y1 - 1 and bb.y0 < ba.y1 - 1
    ]
    faults += [
        f"{t!r} leaves the figure"
        for t, b in texts
        if b.x0 < -1 or b.y0 < -1 or b.x1 > width + 1 or b.y1 > height + 1
    ]
    return faults


@functools.cache
def _golden() -> tuple[list[Rollout], list[Any]]:
    rollouts = read_records([str(INPUT)])
    return rollouts, evaluate(rollouts, BootstrapSettings(B=200, seed=7))


def golden_report(**options: object) -> Report:
    rollouts, results = _golden()
    return build_report(rollouts, results, "sig", ReportOptions(**options), (200, 7, 0.95))  # type: ignore[arg-type]  # test options


@functools.cache
def _crowded() -> tuple[list[Rollout], list[Any]]:
    methods = [
        "calls-before-offered (simulated)",
        "gold",
        "invents-id (simulated)",
        "retries-after-error (simulated)",
        "skips-precondition (simulated)",
    ]
    labels = list(Label)
    rollouts = []
    for d, dataset in enumerate(("bfcl-multi-turn/multi_turn_base", "tau-bench/airline")):
        for m, model in enumerate(("gpt-4o", "claude-sonnet-4-5")):
            for i, method in enumerate(methods):
                for task in range(40):
                    T = 2 + (task * 7 + i) % 13
                    fed = T + 1 if (task + i + m + d) % 3 else 1 + (task + i) % T
                    label = None if fed == T + 1 else labels[(task + i) % len(labels)]
                    rollouts.append(
                        Rollout(ConditionKey(dataset, model, method), f"t{task}", 0,
                                Outcome(T=T, fed=fed, label=label), (task + m) % 2 == 0)
                    )  # fmt: skip
    return rollouts, evaluate(rollouts, BootstrapSettings(B=100, seed=1))


def crowded_report(**options: object) -> Report:
    """Two datasets, two models, five methods with long names, horizons up to 14, every label: the
    demo's names on a grid like the paper's (rollouts made here, outcomes by a fixed rule)."""
    rollouts, results = _crowded()
    return build_report(rollouts, results, "sig", ReportOptions(**options), (100, 1, 0.95))  # type: ignore[arg-type]  # test options


FIGURES = {"pec": pec_figure, "pec_elig": elig_figure, "labels": labels_figure}
OPTIONS = [
    {},
    {"panel": "model", "figure_size": "single"},
    {"figure_size": "single", "note": NOTE},
    {"note": NOTE, "eligible": True, "label_shares": True},
]


@pytest.mark.spec("REP-FIG-SIZE", "REP-LABELS-FIG", "REP-ELIG-FIG", "FIG-NO-OVERLAP")
@pytest.mark.parametrize("name", sorted(FIGURES))
@pytest.mark.parametrize(
    "options", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default"
)
def test_no_text_lies_on_another(name: str, options: dict[str, object]) -> None:
    report = crowded_report(**options)
    fig = FIGURES[name](report)
    assert layout_faults(fig) == []
    width = WIDTHS[str(options.get("figure_size", "double"))]
    assert abs(fig.get_size_inches()[0] - width) < 1e-9  # a page's or a column's width


@pytest.mark.spec("REP-FIG-SIZE", "REP-PANEL")
@pytest.mark.parametrize("name", sorted(FIGURES))
def test_no_text_lies_on_another_with_few_conditions(name: str) -> None:
    # tests/golden/report_input.jsonl: datasets alpha (models m1, m2) and beta, short names.
    for options in ({}, {"note": NOTE, "figure_size": "single"}):
        assert layout_faults(FIGURES[name](golden_report(**options))) == []


@pytest.mark.spec("REP-FIG-SIZE")
def test_the_check_finds_overlaps() -> None:
    # The old labels figure: a legend under the panels and the note as a label under the figure,
    # both at the bottom: the check must see them overlap.
    fig = Figure(figsize=(7, 3), layout="constrained")
    ax = fig.subplots()
    ax.barh([0], [1], label="schema")
    fig.legend(loc="outside lower center")
    fig.supxlabel(NOTE)
    assert any("overlaps" in f for f in layout_faults(fig))
    clean = Figure(figsize=(7, 3))
    clean.text(0.1, 0.5, "left")
    clean.text(0.7, 0.5, "right")
    assert layout_faults(clean) == []


@pytest.mark.spec("REP-PANEL")
def test_one_panel_per_dataset_holds_every_model() -> None:
    report = crowded_report()
    assert [(p.title, len(p.rows)) for p in panels(report)] == [
        ("bfcl-multi-turn/multi_turn_base", 10),
        ("tau-bench/airline", 10),
    ]  # 2 models x 5 methods in each dataset's panel
    fig = pec_figure(report)
    lines = fig.axes[0].get_lines()
    assert len(lines) == 10 and len({str(line.get_linestyle()) for line in lines}) == 2  # a style a model
    assert [p.title for p in panels(crowded_report(panel="model"))] == [
        f"{d} / {m}"
        for d in ("bfcl-multi-turn/multi_turn_base", "tau-bench/airline")
        for m in ("claude-sonnet-4-5", "gpt-4o")
    ]


@pytest.mark.spec("REP-ELIG-FIG")
def test_equal_n_k_stay_visible_side_by_side() -> None:
    # Issue 30: in the n_k strip, gold's step lay behind calls-before-offered's. Each condition's
    # n_k markers are set apart at each depth, so equal counts show as neighbours.
    offsets = strip_offsets(5)
    assert offsets == sorted(offsets) and len(set(offsets)) == 5 and abs(sum(offsets)) < 1e-12
    assert max(offsets) - min(offsets) < 0.5  # within half a depth step of k
    fig = elig_figure(crowded_report())
    strip = fig.axes[1]
    markers = [line for line in strip.get_lines() if line.get_linestyle() == "None"]
    assert len(markers) == 10
    xs = {tuple(round(float(x), 6) for x in line.get_xdata()) for line in markers}
    assert len(xs) == 10  # no two conditions' markers at the same places
