"""Benchmark: every interval of a paper-scale grid, prefixexec versus a per-statistic scipy loop.

The grid mirrors the paper's (section 2.6): three datasets of 200, 200 and 164 tasks, 3 models x 4
methods each, one rollout per task and condition (6,768 rollouts), horizons 1..20. Outcomes are
synthetic (seeded). In one run it measures:

* prefixexec: point estimates and every interval of every condition (TER, AUC-PEC, mean FED,
  success, RR bootstrap + Wilson, PEC(k) and PEC_elig(k) at every depth) with B = 10,000;
* the peer: one ``scipy.stats.bootstrap(vectorized=True, method='percentile')`` call per statistic
  per condition, for the same statistics;

* the floor: a minimal numpy kernel computing the same intervals from numpy columns prepared
  beforehand (one resample-count matrix per dataset, per-task sums by ``bincount``, one matrix
  product, ratios, ``numpy.partition`` at the four order statistics, scipy's interpolation), with
  no point estimates and no Python objects per rollout; it must give identical intervals;

and prints the times, the ratios prefixexec / floor and scipy / prefixexec, the peak memory of
the prefixexec part (tracemalloc), and how many intervals are identical where the two are
comparable (mean statistics, and ratio statistics whose replicates are never undefined).

prefixexec's and the floor's times are the best of ``--repeat`` runs each, alternated (default 3,
all printed); scipy's loop runs once (about half a minute).
Usage: python benchmarks/bootstrap_grid.py [--B 10000] [--repeat 3] [--skip-scipy]
"""

from __future__ import annotations

import argparse
import math
import time
import tracemalloc
import warnings
from typing import Any

import numpy as np

from prefixexec.inference import evaluate
from prefixexec.kernel import ConditionKey, Label, Outcome, Rollout
from prefixexec.kernel.bootstrap import BootstrapSettings

DATASETS = {"bfcl": 200, "toolsandbox": 200, "tau3": 164}
MODELS = ("model-a", "model-b", "model-c")
METHODS = ("react", "prompt-planning", "plan-cond-react", "dual-loop")


def build_grid(seed: int = 2026) -> list[Rollout]:
    rng = np.random.default_rng(seed)
    rollouts: list[Rollout] = []
    for dataset, n_tasks in DATASETS.items():
        for model in MODELS:
            for m, method in enumerate(METHODS):
                p_exec = 0.35 + 0.15 * m
                for t in range(n_tasks):
                    T = int(rng.integers(1, 21))
                    if rng.random() < p_exec:
                        outcome = Outcome(T=T, fed=T + 1)
                    else:
                        outcome = Outcome(T=T, fed=int(rng.integers(1, T + 1)), label=Label.SCHEMA)
                    y = bool(rng.random() < 0.6)
                    key = ConditionKey(dataset, model, method)
                    rollouts.append(Rollout(key, f"task{t:04d}", 0, outcome, y))
    return rollouts


def kernel_columns(rollouts: list[Rollout]) -> dict[str, dict[ConditionKey, dict[str, Any]]]:
    """Per dataset and condition: numpy columns (task index into the dataset's sorted tasks, T,
    FED, Y) -- the floor's input, prepared before it is timed."""
    out: dict[str, dict[ConditionKey, dict[str, Any]]] = {}
    tasks = {d: sorted({r.task_id for r in rollouts if r.condition.dataset == d}) for d in DATASETS}
    index = {d: {t: j for j, t in enumerate(ts)} for d, ts in tasks.items()}
    groups: dict[ConditionKey, list[Rollout]] = {}
    for r in rollouts:
        groups.setdefault(r.condition, []).append(r)
    for key, rs in groups.items():
        out.setdefault(key.dataset, {})[key] = {
            "n_tasks": len(tasks[key.dataset]),
            "task": np.array([index[key.dataset][r.task_id] for r in rs]),
            "T": np.array([r.outcome.T for r in rs]),
            "fed": np.array([r.outcome.fed for r in rs]),
            "Y": np.array([r.success for r in rs], dtype=np.int64),
        }
    return out


def floor_intervals(
    columns: dict[str, dict[ConditionKey, dict[str, Any]]], B: int, seed: int, level: float
) -> dict[ConditionKey, list[tuple[float, float] | None]]:
    """The minimal kernel: every bootstrap percentile interval of every condition, in the order
    TER, AUC_PEC, mean_FED, success, RR, PEC(1..K), PEC_elig(1..K)."""
    alpha = np.float64((1 - level) / 2)
    out: dict[ConditionKey, list[tuple[float, float] | None]] = {}
    for conditions in columns.values():
        n = next(iter(conditions.values()))["n_tasks"]
        idx = np.random.default_rng(seed).integers(0, n, size=(B, n))
        W = np.bincount((idx + (np.arange(B) * n)[:, None]).ravel(), minlength=B * n).reshape(B, n)
        blocks, shapes = [], []
        for c in conditions.values():
            task, T, fed, Y = c["task"], c["T"], c["fed"], c["Y"]
            L = math.lcm(*np.unique(T).tolist())
            K = int(T.max())
            k = np.arange(1, K + 1)
            per = np.column_stack(
                [np.ones_like(T), fed == T + 1, (fed - 1) * (L // T), np.full_like(T, L), fed, Y,
                 fed <= T, Y * (fed <= T), fed[:, None] > k, T[:, None] >= k]
            ).astype(np.int64)
            X = np.zeros((n, per.shape[1]), dtype=np.int64)
            np.add.at(X, task, per)
            blocks.append(X)
            shapes.append(K)
        Z = np.concatenate(blocks, axis=1).T.astype(np.float64) @ W.T.astype(np.float64)
        start = 0
        for key, K in zip(conditions, shapes, strict=True):
            z = Z[start : start + 8 + 2 * K]
            start += 8 + 2 * K
            num = np.concatenate([z[[1, 2, 4, 5, 7]], z[8 : 8 + K], z[8 : 8 + K]])
            den = np.concatenate([z[[0, 3, 0, 0, 6]], np.broadcast_to(z[0], (K, B)), z[8 + K :]])
            with np.errstate(divide="ignore", invalid="ignore"):
                rows = num / den
            rows[den == 0] = np.nan
            out[key] = _percentiles(rows, alpha)
    return out


def _percentiles(rows: np.ndarray[Any, Any], alpha: np.float64) -> list[tuple[float, float] | None]:
    """Type-7 percentile interval of each row's defined values (scipy's arithmetic)."""

    def positions(n: int, p: np.float64) -> tuple[int, int, np.float64]:
        jg = p * n + (1 - p)
        g = np.float64(0) if jg // 1 - 1 < 0 else jg % 1
        return int(min(max(jg // 1 - 1, 0), n - 1)), int(min(max(jg // 1, 0), n - 1)), g

    found: list[tuple[float, float] | None] = [None] * rows.shape[0]
    nan = np.isnan(rows).any(axis=1)
    full = np.flatnonzero(~nan)
    if full.shape[0]:
        (a, a1, ga), (b, b1, gb) = (positions(rows.shape[1], p) for p in (alpha, 1 - alpha))
        part = np.partition(rows[full], sorted({a, a1, b, b1}), axis=1)
        lows = (1 - ga) * part[:, a] + ga * part[:, a1]
        highs = (1 - gb) * part[:, b] + gb * part[:, b1]
        for i, r in enumerate(full.tolist()):
            found[r] = (float(lows[i]), float(highs[i]))
    for r in np.flatnonzero(nan).tolist():
        y = rows[r][~np.isnan(rows[r])]
        if y.shape[0]:
            (a, a1, ga), (b, b1, gb) = (positions(y.shape[0], p) for p in (alpha, 1 - alpha))
            y = np.sort(y)
            found[r] = (float((1 - ga) * y[a] + ga * y[a1]), float((1 - gb) * y[b] + gb * y[b1]))
    return found


def scipy_intervals(rollouts: list[Rollout], B: int, seed: int, level: float) -> dict[Any, dict[str, Any]]:
    from scipy import stats

    groups: dict[ConditionKey, list[Rollout]] = {}
    for r in rollouts:
        groups.setdefault(r.condition, []).append(r)
    out: dict[Any, dict[str, Any]] = {}

    def ci(data: tuple[np.ndarray[Any, Any], ...], statistic: Any) -> tuple[float, float]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = stats.bootstrap(
                data,
                statistic,
                n_resamples=B,
                method="percentile",
                rng=seed,
                vectorized=True,
                paired=len(data) > 1,
                confidence_level=level,
            )
        return (float(res.confidence_interval.low), float(res.confidence_interval.high))

    for key, rs in groups.items():
        rs = sorted(rs, key=lambda r: r.task_id)
        T = np.array([r.outcome.T for r in rs])
        fed = np.array([r.outcome.fed for r in rs])
        Y = np.array([r.success for r in rs], dtype=np.float64)
        L = math.lcm(*np.unique(T).tolist())
        res: dict[str, Any] = {
            "TER": ci(((fed == T + 1).astype(np.float64),), np.mean),
            "AUC_PEC": ci(
                (((fed - 1) * (L // T)).astype(np.float64),),
                lambda x, axis, L=L: np.sum(x, axis=axis) / (L * x.shape[axis]),
            ),
            "mean_FED": ci((fed.astype(np.float64),), np.mean),
            "success": ci((Y,), np.mean),
        }
        eligible = (fed <= T).astype(np.float64)
        recovered = ((fed <= T) & (Y > 0)).astype(np.float64)
        res["RR"] = ci((recovered, eligible), lambda r, e, axis: np.sum(r, axis=axis) / np.sum(e, axis=axis))
        res["PEC"] = [ci(((fed > k).astype(np.float64),), np.mean) for k in range(1, int(T.max()) + 1)]
        res["PEC_elig"] = [
            ci(
                ((fed > k).astype(np.float64), (T >= k).astype(np.float64)),
                lambda s, e, axis: np.sum(s, axis=axis) / np.sum(e, axis=axis),
            )
            for k in range(1, int(T.max()) + 1)
        ]
        out[key] = res
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--B", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-scipy", action="store_true")
    parser.add_argument("--repeat", type=int, default=3, help="prefixexec runs (the best is compared)")
    args = parser.parse_args()
    rollouts = build_grid()
    settings = BootstrapSettings(B=args.B, seed=args.seed)
    print(
        f"grid: {len(rollouts)} rollouts, {len(DATASETS)} datasets, "
        f"{len(MODELS) * len(METHODS)} conditions each, B = {args.B}"
    )

    evaluate(rollouts[:50], BootstrapSettings(B=10, seed=0))  # warm-up (imports, BLAS threads)
    columns = kernel_columns(rollouts)
    times, floor_times = [], []
    for _ in range(args.repeat):
        start = time.perf_counter()
        results = evaluate(rollouts, settings)
        times.append(time.perf_counter() - start)
        start = time.perf_counter()
        floor = floor_intervals(columns, args.B, args.seed, settings.level)
        floor_times.append(time.perf_counter() - start)
    ours = min(times)
    tracemalloc.start()  # memory in a separate run: tracing slows allocation down
    evaluate(rollouts, settings)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    n_intervals = sum(
        len(r.intervals.scalars) + 1 + len(r.intervals.PEC) + len(r.intervals.PEC_elig)
        for r in results
        if r.intervals is not None
    )
    print(
        f"prefixexec: {ours:.3f} s (best of {args.repeat}: {', '.join(f'{t:.3f}' for t in times)} s) for "
        f"{len(results)} conditions, {n_intervals} intervals; peak traced memory {peak / 2**20:.1f} MiB"
    )
    same_as_floor = sum(
        a == b
        for r in results
        if r.intervals is not None
        for a, b in zip(
            [*(r.intervals.scalars[n] for n in ("TER", "AUC_PEC", "mean_FED", "success", "RR")),
             *r.intervals.PEC, *r.intervals.PEC_elig],
            floor[r.key],
            strict=True,
        )
    )
    n_floor = sum(len(v) for v in floor.values())
    print(
        f"minimal numpy kernel (floor): {min(floor_times):.3f} s (best of {args.repeat}: "
        f"{', '.join(f'{t:.3f}' for t in floor_times)} s); identical intervals {same_as_floor} of {n_floor}; "
        f"ratio prefixexec / floor {ours / min(floor_times):.2f}x (target <= 1.2x)"
    )
    if args.skip_scipy:
        return
    start = time.perf_counter()
    ref = scipy_intervals(rollouts, args.B, args.seed, settings.level)
    theirs = time.perf_counter() - start
    print(f"scipy.stats.bootstrap, one call per statistic per condition: {theirs:.3f} s (one run)")
    print(f"ratio scipy / prefixexec: {theirs / ours:.1f}x")

    same = differ = incomparable = 0
    for r in results:
        assert r.intervals is not None
        theirs_c = ref[r.key]
        pairs = [
            (r.intervals.scalars[n], theirs_c[n], r.intervals.dropped[n])
            for n in ("TER", "AUC_PEC", "mean_FED", "success", "RR")
        ]
        pairs += [(a, b, 0) for a, b in zip(r.intervals.PEC, theirs_c["PEC"], strict=True)]
        pairs += [
            (a, b, d)
            for a, b, d in zip(
                r.intervals.PEC_elig, theirs_c["PEC_elig"], r.intervals.dropped_PEC_elig, strict=True
            )
        ]
        for a, b, dropped in pairs:
            if dropped:
                incomparable += 1
            elif a == b:
                same += 1
            else:
                differ += 1
    print(
        f"intervals identical: {same}, different: {differ}, "
        f"not comparable (undefined replicates, scipy gives NaN): {incomparable}"
    )


if __name__ == "__main__":
    main()
