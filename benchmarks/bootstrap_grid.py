"""Benchmark: every interval of a paper-scale grid, prefixexec versus a per-statistic scipy loop.

The grid mirrors the paper's (section 2.6): three datasets of 200, 200 and 164 tasks, 3 models x 4
methods each, one rollout per task and condition (6,768 rollouts), horizons 1..20. Outcomes are
synthetic (seeded). In one run it measures:

* prefixexec: point estimates and every interval of every condition (TER, AUC-PEC, mean FED,
  success, RR bootstrap + Wilson, PEC(k) and PEC_elig(k) at every depth) with B = 10,000;
* the peer: one ``scipy.stats.bootstrap(vectorized=True, method='percentile')`` call per statistic
  per condition, for the same statistics;

and prints both times, their ratio, the peak memory of the prefixexec part (tracemalloc), and how
many intervals are identical where the two are comparable (mean statistics, and ratio statistics
whose replicates are never undefined).

prefixexec's time is the best of ``--repeat`` runs (default 3, all printed); scipy's loop runs once
(about half a minute). Usage: python benchmarks/bootstrap_grid.py [--B 10000] [--repeat 3] [--skip-scipy]
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
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        results = evaluate(rollouts, settings)
        times.append(time.perf_counter() - start)
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
