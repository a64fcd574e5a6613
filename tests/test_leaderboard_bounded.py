"""The leaderboard's cost bounded (issue 40, spec/leaderboard.md LB-MEMORY, LB-KENDALL, LB-FLIPS;
spec/hostile.md HOSTILE-COUNT-COST): the bootstrap drawn in blocks with only the ranked replicates
kept, Kendall's tau-b and the flipped pairs counted in O(n log n), the largest flips found without
exact arithmetic on every pair. Measured by counts (rows held, blocks drawn, exact comparisons),
not by time; every number is checked against an independent computation (the whole resample
matrix, every pair compared, scipy).
"""

from __future__ import annotations

import itertools
import json
import math
import random
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.stats
from hypothesis import given
from hypothesis import strategies as st

import prefixexec.ranking.core as core
from prefixexec.cli import main
from prefixexec.kernel import passk as pk
from prefixexec.kernel.bootstrap import percentile_intervals_rows, resample_counts


def records(path: Path, systems: int, tasks: int, trials: int, seed: int) -> Path:
    """Rollout records (the records format, spec/SPEC.md) of ``systems`` systems, each with
    ``trials`` trials of ``tasks`` tasks, drawn from a seeded generator."""
    r = random.Random(seed)
    with path.open("w", encoding="utf-8") as f:
        for s in range(systems):
            p = r.random()
            for j in range(tasks):
                for t in range(trials):
                    T = r.randint(1, 5)
                    fed = r.randint(1, T + 1)
                    line = {"dataset": "d", "task_id": f"t{j}", "model": f"m{s}", "method": "x", "trial": t,
                            "success": r.random() < p, "outcome": {"T": T, "fed": fed}}  # fmt: skip
                    f.write(json.dumps(line) + "\n")
    return path


def document(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(["leaderboard", "--json", *argv]) == 0
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    return doc


@pytest.mark.spec("LB-MEMORY", "BOOT-BLOCK", "PASSK-BOOT", "BOOT-DRAW")
def test_blocked_draw_holds_a_group_and_equals_the_whole_matrix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = records(tmp_path / "r.jsonl", systems=6, tasks=5, trials=20, seed=3)
    B = 300
    whole = document(capsys, "--bootstrap", str(B), "--seed", "4", str(path))
    # Groups of at most 37 curve points and blocks of at most 16 resamples.
    held: list[int] = []
    blocks: list[int] = []
    real_rows, real_blocks = core.percentile_intervals_rows, core.resample_blocks

    def rows_spy(rows: np.ndarray[Any, Any], *a: Any, **k: Any) -> Any:
        held.append(int(rows.shape[0]))
        return real_rows(rows, *a, **k)

    def blocks_spy(*a: Any) -> Any:
        for W in real_blocks(*a):
            blocks.append(int(W.shape[0]))
            yield W

    monkeypatch.setattr(core, "GROUP_BYTES", 37 * B * core.REPLICATE_BYTES)
    monkeypatch.setattr(core, "BLOCK_BYTES", 16 * 5 * core.CELL_BYTES)
    monkeypatch.setattr(core, "percentile_intervals_rows", rows_spy)
    monkeypatch.setattr(core, "resample_blocks", blocks_spy)
    blocked = document(capsys, "--bootstrap", str(B), "--seed", "4", str(path))
    assert blocked == whole  # the same replicates, bit for bit
    points = 6 * 20 * 4 - 6 * 2  # every curve point but the kept pass^k and TER^k at k = 20
    assert max(held) <= 37 and sum(h for h in held if h != 6) >= points
    assert max(blocks) <= 16 and sum(blocks) == B * math.ceil(points / 37)
    # Independently: pass@3 of the first system from the whole matrix, as PASSK-BOOT defines it.
    W = resample_counts(5, B, 4)
    first = whole["datasets"][0]["systems"][0]
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    mine = [r for r in rows if f"{r['model']} / {r['method']}" == first["system"]]
    c = [sum(r["success"] for r in mine if r["task_id"] == f"t{j}") for j in range(5)]
    reps = pk.replicates(W, [pk.task_columns([20] * 5, c, 3, True)])
    (ci,) = percentile_intervals_rows(reps, 0.95)
    assert first["curves"]["pass_at_k"][2]["ci"] == (None if ci is None else list(ci))


def many_systems(path: Path, systems: int) -> Path:
    """``systems`` systems on 2 tasks, one trial each: success and TER take few values, so ties,
    concordant, discordant and flipped pairs all occur."""
    r = random.Random(systems)
    with path.open("w", encoding="utf-8") as f:
        for s in range(systems):
            for j in range(2):
                T = r.randint(1, 3)
                fed = r.randint(1, T + 1)
                line = {"dataset": "d", "task_id": f"t{j}", "model": f"m{s:04d}", "method": "x",
                        "success": r.random() < 0.5, "outcome": {"T": T, "fed": fed}}  # fmt: skip
                f.write(json.dumps(line) + "\n")
    return path


def exact_points(doc: dict[str, Any], metric: str) -> tuple[list[str], list[Fraction], list[Fraction]]:
    systems = doc["datasets"][0]["systems"]
    labels = [s["system"] for s in systems]
    return (
        labels,
        [Fraction(s["metrics"]["success"]["exact"]) for s in systems],
        [Fraction(s["metrics"][metric]["exact"]) for s in systems],
    )


@pytest.mark.spec("LB-KENDALL", "LB-FLIPS", "HOSTILE-COUNT-COST")
def test_a_thousand_systems_are_counted_in_n_log_n_and_the_largest_flips_found_exactly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = many_systems(tmp_path / "r.jsonl", 1000)
    signs = 0
    real_sign = core._sign

    def counted(a: Fraction, b: Fraction) -> int:
        nonlocal signs
        signs += 1
        return real_sign(a, b)

    monkeypatch.setattr(core, "_sign", counted)
    doc = document(capsys, "--bootstrap", "20", "--metric", "TER", str(path))
    # Before: every pair compared exactly, 499,500 pairs a metric; now only the listed ones.
    assert signs <= 2 * core.MAX_FLIPS
    ds = doc["datasets"][0]
    labels, xs, ys = exact_points(doc, "TER")
    # Independently: every pair's signs (numpy over the exact values' ranks).
    order_x = {v: i for i, v in enumerate(sorted(set(xs)))}
    order_y = {v: i for i, v in enumerate(sorted(set(ys)))}
    rx = np.array([order_x[v] for v in xs])
    ry = np.array([order_y[v] for v in ys])
    a, b = np.triu_indices(len(xs), 1)
    sx, sy = np.sign(rx[a] - rx[b]), np.sign(ry[a] - ry[b])
    (tau,) = ds["kendall"]
    assert (tau["concordant"], tau["discordant"]) == (int(np.sum(sx * sy > 0)), int(np.sum(sx * sy < 0)))
    assert (tau["ties_success"], tau["ties_metric"]) == (int(np.sum(sx == 0)), int(np.sum(sy == 0)))
    expected_tau = scipy.stats.kendalltau(
        [float(v) for v in xs], [float(v) for v in ys], variant="b"
    ).statistic
    assert math.isclose(tau["tau_b"], expected_tau, abs_tol=1e-12)
    assert ds["flipped_pairs"]["TER"] == int(np.sum(sx != sy)) > core.MAX_FLIPS
    # The 20 largest by exact size (ties to the earlier pair), from every flipped pair.
    flipped = np.flatnonzero(sx != sy)
    sizes = [(abs(xs[a[i]] - xs[b[i]]) + abs(ys[a[i]] - ys[b[i]]), int(a[i]), int(b[i])) for i in flipped]
    best = sorted(sizes, key=lambda t: (-t[0], t[1], t[2]))[: core.MAX_FLIPS]
    listed = {frozenset((f["first"], f["second"])) for f in ds["flips"]}
    assert listed == {frozenset((labels[p], labels[q])) for _, p, q in best}


@pytest.mark.spec("LB-FLIPS")
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=0, max_size=40))
def test_largest_flips_agree_with_every_pair_compared(values: list[tuple[int, int]]) -> None:
    xs = [Fraction(x, 3) for x, _ in values]
    ys = [Fraction(y, 7) for _, y in values]
    every = [
        (abs(xs[p] - xs[q]) + abs(ys[p] - ys[q]), p, q)
        for p, q in itertools.combinations(range(len(xs)), 2)
        if core._sign(xs[p], xs[q]) != core._sign(ys[p], ys[q])
    ]
    best = sorted(every, key=lambda t: (-t[0], t[1], t[2]))[: core.MAX_FLIPS]
    assert core._largest_flips(xs, ys) == sorted((p, q) for _, p, q in best)


@pytest.mark.spec("LB-KENDALL", "LB-RANK")
@given(
    st.integers(1, 9).flatmap(
        lambda n: st.lists(
            st.tuples(*(st.lists(st.integers(0, 3), min_size=n, max_size=n),) * 2), min_size=1, max_size=4
        )
    )
)
def test_kendall_counts_and_ranks_agree_with_scipy(rows: list[tuple[list[int], list[int]]]) -> None:
    x = np.array([r[0] for r in rows], dtype=np.float64)
    y = np.array([r[1] for r in rows], dtype=np.float64)
    counts = core.kendall_counts(x, y)
    for i, (xi, yi) in enumerate(rows):
        pairs = list(itertools.combinations(range(len(xi)), 2))
        s = [(np.sign(xi[p] - xi[q]), np.sign(yi[p] - yi[q])) for p, q in pairs]
        assert int(counts.discordant[i]) == sum(1 for a, b in s if a * b < 0)
        assert int(counts.concordant[i]) == sum(1 for a, b in s if a * b > 0)
        assert int(counts.flipped[i]) == sum(1 for a, b in s if a != b)
        expected = scipy.stats.kendalltau(xi, yi, variant="b").statistic if len(xi) > 1 else math.nan
        got = float(counts.tau_b()[i])
        assert (math.isnan(got) and math.isnan(expected)) or math.isclose(got, expected, abs_tol=1e-12)
    assert np.array_equal(core.average_ranks(x), scipy.stats.rankdata(-x, method="average", axis=1))
