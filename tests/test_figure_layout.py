"""No text of the leaderboard figure or of a site's figures lies on another, leaves the figure, or
crosses a panel's frame (spec: FIG-NO-OVERLAP, LB-FIGURE, SITE-PAGES; issue 37: the title lay on
the panel titles, rank labels on each other and on the frame). The report's figures are checked by
tests/test_report_layout.py with the same measure, matplotlib's own extents of every drawn text."""

from __future__ import annotations

import functools
from typing import Any

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Annotation
from test_report_layout import drawn_texts, layout_faults

import prefixexec
from prefixexec.kernel import ConditionKey, Label, Outcome, Rollout
from prefixexec.kernel.accumulator import AccumulatorSet
from prefixexec.kernel.bootstrap import BootstrapSettings
from prefixexec.ranking import LeaderboardOptions, leaderboard_document
from prefixexec.ranking.figure import leaderboard_figure
from prefixexec.site import domains_of
from prefixexec.site.figure import system_curves

from conftest import REAL, REPO

BOARD = REAL / "tau2-leaderboard"
AIRLINE = [
    BOARD / "claude-sonnet-4-5_airline_default_gpt4.1_1trials.json.zst",
    BOARD / "langchain_agent_airline_2025-11-26_00-37-06.json.zst",
    BOARD / "toolorchestra_airline_gpt-5_1trial.json.zst",
]
GOLDEN = REPO / "tests" / "golden" / "report_input.jsonl"


def frame_faults(fig: Figure) -> list[str]:
    """Rank labels (annotations) that cross their panel's frame: each lies inside its axes."""
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]  # an Agg canvas
    faults = []
    for ax in fig.axes:
        box = ax.get_window_extent(renderer)
        for t in ax.texts:
            if isinstance(t, Annotation) and t.get_visible() and t.get_text().strip():
                b = t.get_window_extent(renderer)
                if b.x0 < box.x0 - 1 or b.x1 > box.x1 + 1 or b.y0 < box.y0 - 1 or b.y1 > box.y1 + 1:
                    faults.append(f"{t.get_text()!r} crosses the frame of its panel")
    return faults


def clustered_rollouts(systems: int, tasks: int = 40) -> list[Rollout]:
    """``systems`` systems whose success and TER differ by one task or two: their points cluster
    (rollouts made here by a fixed rule)."""
    out = []
    for s in range(systems):
        for t in range(tasks):
            T = 4
            fed = 5 if (t + s // 3) % 4 else 2
            success = (t + s // 2) % 5 != 0
            label = None if fed == 5 else Label.SCHEMA
            out.append(
                Rollout(
                    ConditionKey("crowd", f"model-{s}", "agent"),
                    f"t{t}",
                    0,
                    Outcome(T=T, fed=fed, label=label),
                    success,
                )
            )
    return out


@functools.cache
def crowded_document(systems: int) -> dict[str, Any]:
    rollouts = clustered_rollouts(systems)
    return leaderboard_document(
        AccumulatorSet.from_rollouts(rollouts), BootstrapSettings(B=50, seed=3), LeaderboardOptions(), "sig"
    )


def documents() -> dict[str, Any]:
    return {
        "tau2-airline": prefixexec.leaderboard(AIRLINE, bootstrap=50).document,
        "golden": prefixexec.leaderboard(GOLDEN, bootstrap=50, shared_tasks=True).document,
        "clustered-6": crowded_document(6),
        "clustered-14": crowded_document(14),
    }


@pytest.mark.spec("FIG-NO-OVERLAP", "LB-FIGURE")
@pytest.mark.parametrize("name", ["tau2-airline", "golden", "clustered-6", "clustered-14"])
def test_leaderboard_figure_text_never_overlaps(name: str) -> None:
    fig = leaderboard_figure(documents()[name])
    assert layout_faults(fig) + frame_faults(fig) == []


@pytest.mark.spec("FIG-NO-OVERLAP", "LB-FIGURE")
def test_every_rank_is_labelled_when_points_cluster() -> None:
    # Six systems, three pairs of which share both success and TER: each pair's points coincide,
    # yet every number 1..6 is drawn in both panels, each beside its own point.
    doc = crowded_document(6)
    fig = leaderboard_figure(doc)
    for ax in fig.axes:
        numbers = sorted(int(t.get_text()) for t in ax.texts if isinstance(t, Annotation))
        assert numbers == list(range(1, 7))


@pytest.mark.spec("FIG-NO-OVERLAP", "SITE-PAGES")
def test_site_figures_text_never_overlaps() -> None:
    doc = prefixexec.leaderboard(AIRLINE, bootstrap=50).document
    rollouts = prefixexec.read("auto", AIRLINE)
    for dom in domains_of(doc, rollouts):
        for s in dom.board["systems"]:
            fig = system_curves(s, dom.board["k"], dom.rollouts[s["system"]])
            assert layout_faults(fig) == []


@pytest.mark.spec("FIG-NO-OVERLAP")
def test_the_checks_see_a_label_on_the_frame_and_an_axes_legend() -> None:
    fig = Figure(figsize=(3, 3), layout="constrained")
    ax = fig.subplots()
    ax.set_xlim(0, 1)
    ax.annotate("7", (1.0, 0.5), textcoords="offset points", xytext=(4, 3))
    assert frame_faults(fig) == ["'7' crosses the frame of its panel"]
    ax.plot([0, 1], [0, 1], label="pass^k")
    ax.plot([0, 1], [1, 0], label="TER^k")
    ax.legend(loc="center")
    texts = [t for t, _ in drawn_texts(fig)]
    assert "pass^k" in texts and "TER^k" in texts  # an axes' legend is measured too
    assert texts.count("7") == 1
