"""Benchmark: streaming and sharded scoring of a Parquet outcome table (issue 10).

The data mirror the paper's grid (section 2.6; as in benchmarks/bootstrap_grid.py): three datasets
of 200, 200 and 164 tasks, 3 models x 4 methods each (36 conditions, 6,768 (condition, task)
cells), horizons 1..20, with many trials per cell so that the table has about ``--rows`` rows.
Outcomes are synthetic (seeded). Rows are written condition by condition, trial by trial, in
row groups of 2^20 rows, as ``prefixexec convert`` writes them.

In one run it measures, on the same file:

* single process: ``prefixexec score``'s streaming path (Parquet batches -> accumulators ->
  point estimates), rows per second and peak memory (``ru_maxrss`` of a fresh process, with
  the same process's footprint after imports alone for reference);
* memory as the row count grows: the same for tables of the same tasks with 10x fewer and with
  2x more rows (resident memory rises over the first batches while the allocators warm up, then
  stays level);
* Dask: a local cluster of 2 worker processes (one thread each), map/merge of row-group units,
  timed on a running cluster and also including the cluster's start and stop;
* a naive per-row Python loop over the same rows (pyarrow batches -> Python lists -> one
  dictionary update per row and metric), computing the same counts;
* the bootstrap (B = 10,000, paired, every interval of every condition) from the accumulators;

checks that the three ways give identical point estimates (and the Dask JSON equals the single
process's byte for byte) and prints a table with ratios.

Usage: python benchmarks/streaming.py [--rows 10000000] [--B 10000] [--skip-naive] [--dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

DATASETS = {"bfcl": 200, "toolsandbox": 200, "tau3": 164}
MODELS = ("model-a", "model-b", "model-c")
METHODS = ("react", "prompt-planning", "plan-cond-react", "dual-loop")
LABELS = ("schema", "dependency", "precondition", "state_consistency", "information")
MAX_T = 20
ROW_GROUP = 1 << 20


def cells() -> int:
    return sum(DATASETS.values()) * len(MODELS) * len(METHODS)


def write_table(path: Path, trials: int, seed: int = 2026) -> int:
    """Write the grid with ``trials`` trials per (condition, task); returns the row count.

    Uses the writer of ``prefixexec convert`` (adapters.parquet.write_tables), so the file is laid
    out as convert lays it out.
    """
    import pyarrow as pa

    from prefixexec.adapters.parquet import schema, write_tables

    rng = np.random.default_rng(seed)
    text = pa.string()

    def tables() -> Iterator[Any]:
        for dataset, n_tasks in DATASETS.items():
            task_names = pa.array([f"task{t:04d}" for t in range(n_tasks)], text)
            horizon = rng.integers(1, MAX_T + 1, n_tasks)  # one horizon per task
            for model in MODELS:
                for m, method in enumerate(METHODS):
                    n = n_tasks * trials
                    task = np.tile(np.arange(n_tasks, dtype=np.int32), trials)
                    trial = np.repeat(np.arange(trials, dtype=np.int64), n_tasks)
                    T = horizon[task].astype(np.int64)
                    executable = rng.random(n) < 0.35 + 0.15 * m
                    fed = np.where(executable, T + 1, (rng.random(n) * T).astype(np.int64) + 1)
                    label_code = rng.integers(-1, len(LABELS), n).astype(np.int32)
                    no_label = executable | (label_code < 0)
                    success = rng.random(n) < np.where(executable, 0.8, 0.5)

                    def constant(value: str, n: int = n) -> Any:
                        return pa.DictionaryArray.from_arrays(
                            pa.array(np.zeros(n, np.int32)), pa.array([value], text)
                        )

                    yield pa.Table.from_arrays(
                        [
                            constant(dataset),
                            constant(model),
                            constant(method),
                            pa.DictionaryArray.from_arrays(pa.array(task), task_names),
                            pa.array(trial),
                            pa.array(T),
                            pa.array(fed),
                            pa.DictionaryArray.from_arrays(
                                pa.array(np.maximum(label_code, 0), mask=no_label),
                                pa.array(list(LABELS), text),
                            ),
                            pa.array(success),
                        ],
                        schema=schema(),
                    )

    return write_tables(tables(), str(path), ROW_GROUP)


# ---------------------------------------------------------------------------------------------
# Single process, in a fresh interpreter (peak memory of that process alone)

SINGLE = r"""
import json, resource, sys, time
from prefixexec.adapters import AdapterOptions
from prefixexec.engine import accumulate_input
import pyarrow, pyarrow.parquet, numpy

def high_water_kib():
    # VmHWM: peak resident memory of this process's address space. (ru_maxrss would not do: on
    # Linux it keeps the high-water mark of the parent process that forked this one.)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])

baseline = high_water_kib()
path = sys.argv[1]
usage = resource.getrusage(resource.RUSAGE_SELF)
start = time.perf_counter()
accs = accumulate_input("parquet", [path], AdapterOptions())
metrics = {str(k): str(a.metrics()) for k, a in accs.items}
elapsed = time.perf_counter() - start
after = resource.getrusage(resource.RUSAGE_SELF)
cpu = (after.ru_utime - usage.ru_utime) + (after.ru_stime - usage.ru_stime)
print(json.dumps({"seconds": elapsed, "cpu": cpu, "peak_kib": high_water_kib(), "baseline_kib": baseline,
                  "arrow_peak_kib": pyarrow.default_memory_pool().max_memory() // 1024, "rows": accs.N}))
"""


def single_process(path: Path, repeat: int) -> dict[str, Any]:
    """The fastest of ``repeat`` runs, each in a fresh interpreter; peak memory over all runs."""
    runs = []
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, "-c", SINGLE, str(path)], check=True, capture_output=True, text=True
        )
        runs.append(json.loads(out.stdout))
    best: dict[str, Any] = min(runs, key=lambda r: r["seconds"])
    best["peak_kib"] = max(r["peak_kib"] for r in runs)
    best["cpu"] = min(r["cpu"] for r in runs)
    return best


# ---------------------------------------------------------------------------------------------
# The naive per-row loop


def naive(path: Path) -> tuple[dict[Any, dict[str, Fraction | int | None]], float, float]:
    """Per-row Python: read batches, turn columns into lists, update dictionaries row by row.

    Returns the point estimates, wall seconds and CPU seconds.
    """
    import pyarrow.parquet as pq

    start, cpu_start = time.perf_counter(), time.process_time()
    counts: dict[Any, dict[str, Any]] = defaultdict(
        lambda: {
            "N": 0,
            "exec": 0,
            "succ": 0,
            "rec": 0,
            "fed": 0,
            "auc": defaultdict(int),
            "surv": defaultdict(int),
        }
    )
    for batch in pq.ParquetFile(path).iter_batches(batch_size=1 << 16):
        cols = batch.to_pydict()
        for d, mo, me, T, fed, y in zip(
            cols["dataset"],
            cols["model"],
            cols["method"],
            cols["T"],
            cols["fed"],
            cols["success"],
            strict=True,
        ):
            c = counts[(d, mo, me)]
            c["N"] += 1
            c["fed"] += fed
            c["auc"][T] += fed - 1
            c["surv"][fed] += 1
            if fed == T + 1:
                c["exec"] += 1
            elif y:
                c["rec"] += 1
            if y:
                c["succ"] += 1
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    out: dict[Any, dict[str, Fraction | int | None]] = {}
    for key, c in counts.items():
        N = c["N"]
        eligible = N - c["exec"]
        out[key] = {
            "N": N,
            "TER": Fraction(c["exec"], N),
            "AUC_PEC": sum((Fraction(s, t) for t, s in c["auc"].items()), Fraction(0)) / N,
            "mean_FED": Fraction(c["fed"], N),
            "success": Fraction(c["succ"], N),
            "RR": None if eligible == 0 else Fraction(c["rec"], eligible),
            "PEC1": Fraction(N - c["surv"][1], N),
        }
    return out, wall, cpu


# ---------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--B", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3, help="single-process runs (fastest reported)")
    parser.add_argument("--skip-naive", action="store_true")
    parser.add_argument("--dir", help="where to write the tables (default: a temporary directory)")
    args = parser.parse_args()

    from distributed import Client, LocalCluster

    from prefixexec.adapters import AdapterOptions
    from prefixexec.cli import score_document
    from prefixexec.engine import accumulate_dask, accumulate_input
    from prefixexec.inference import evaluate_accumulators
    from prefixexec.kernel.bootstrap import BootstrapSettings
    from prefixexec.scoring import dumps
    from prefixexec.signature import Signature

    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        trials = max(1, round(args.rows / cells()))
        big, small = Path(tmp) / "big.parquet", Path(tmp) / "small.parquet"
        t0 = time.perf_counter()
        n_big = write_table(big, trials)
        n_small = write_table(small, max(1, trials // 10))
        print(
            f"data: {n_big:,} rows ({trials} trials x {cells():,} (condition, task) cells, 36 conditions) "
            f"and {n_small:,} rows of the same cells; written in {time.perf_counter() - t0:.1f} s "
            f"({big.stat().st_size / 2**20:.0f} MiB)",
            flush=True,
        )

        single = single_process(big, args.repeat)
        single_small = single_process(small, args.repeat)
        assert single["rows"] == n_big and single_small["rows"] == n_small
        # Memory only: twice the rows again, to see the plateau (then the file is removed).
        double = Path(tmp) / "double.parquet"
        n_double = write_table(double, 2 * trials)
        single_double = single_process(double, 1)
        double.unlink()

        # The same scoring in this process, for the comparisons below.
        accs = accumulate_input("parquet", [str(big)], AdapterOptions())
        t0, c0 = time.perf_counter(), time.process_time()
        results = evaluate_accumulators(accs, BootstrapSettings(B=args.B, seed=0))
        boot, boot_cpu = time.perf_counter() - t0, time.process_time() - c0
        signature = Signature(adapter="parquet", bootstrap=args.B, seed=0, level=0.95, paired=True)
        doc_single = dumps(score_document(results, signature))

        t0 = time.perf_counter()
        dask_accs = accumulate_dask("parquet", [str(big)], AdapterOptions(), workers=args.workers)
        dask_cold = time.perf_counter() - t0
        with (
            LocalCluster(
                n_workers=args.workers, threads_per_worker=1, dashboard_address=":0", silence_logs=40
            ) as c,
            Client(c) as client,
        ):
            client.run(lambda: __import__("prefixexec.engine"))  # workers import the package once
            warm = []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                dask_warm_accs = accumulate_dask(
                    "parquet", [str(big)], AdapterOptions(), scheduler=c.scheduler_address
                )
                warm.append(time.perf_counter() - t0)
            dask_warm = min(warm)
        assert dask_accs == accs and dask_warm_accs == accs
        settings = BootstrapSettings(B=args.B, seed=0)
        doc_dask = dumps(score_document(evaluate_accumulators(dask_accs, settings), signature))
        assert doc_dask == doc_single, "dask JSON differs from the single-process JSON"

        naive_wall = naive_cpu = None
        if not args.skip_naive:
            expected, naive_wall, naive_cpu = naive(big)
            for key, acc in accs.items:
                m = acc.metrics()
                got = {
                    "N": m.N,
                    "TER": m.TER,
                    "AUC_PEC": m.AUC_PEC,
                    "mean_FED": m.mean_FED,
                    "success": m.success,
                    "RR": m.RR,
                    "PEC1": m.PEC[0],
                }
                assert got == expected[(key.dataset, key.model, key.method)], key
    load_after = os.getloadavg()

    rate = n_big / single["seconds"]

    def row(name: str, wall: float, cpu: float | None) -> None:
        cpu_text = "" if cpu is None else f"{cpu:8.2f} {n_big / cpu:14,.0f}"
        print(f"{name:44s} {wall:8.2f} {n_big / wall:14,.0f} {(n_big / wall) / rate:9.3f}  {cpu_text}")

    print()
    print(f"{'':44s} {'wall s':>8s} {'rows/s':>14s} {'vs single':>9s}  {'CPU s':>8s} {'rows/CPU-s':>14s}")
    row("single process: stream, accumulate, metrics", single["seconds"], single["cpu"])
    row(f"dask, {args.workers} workers, running cluster", dask_warm, None)
    row(f"dask, {args.workers} workers, incl. cluster start/stop", dask_cold, None)
    if naive_wall is not None:
        row("naive per-row Python loop", naive_wall, naive_cpu)
    name = f"bootstrap, B = {args.B}, all intervals, 36 cond."
    print(f"{name:44s} {boot:8.2f} {'':14s} {'':9s}  {boot_cpu:8.2f}")
    print()
    mib = 1024
    print("peak resident memory of the single process (VmHWM of a fresh interpreter), MiB:")
    print(f"  after the imports alone: {single['baseline_kib'] / mib:7.0f}")
    for n, run in ((n_small, single_small), (n_big, single), (n_double, single_double)):
        print(
            f"  {n:>12,} rows:     {run['peak_kib'] / mib:7.0f}   "
            f"(above the imports: {(run['peak_kib'] - run['baseline_kib']) / mib:.0f}; "
            f"Arrow's pool peak: {run['arrow_peak_kib'] / mib:.0f})"
        )
    ratio = single["peak_kib"] / single_small["peak_kib"]
    print(f"  {n_big / n_small:.0f}x the rows -> {ratio:.2f}x the peak memory", end="; ")
    print(f"{n_double / n_big:.0f}x again -> {single_double['peak_kib'] / single['peak_kib']:.2f}x")
    print()
    checks = "dask accumulators == single-process ones; dask JSON == single-process JSON (bytes)"
    if naive_wall is not None:
        checks += "; naive loop's point estimates == the accumulators'"
    print(f"checks passed: {checks}")
    print(
        f"machine: {os.cpu_count()} cores; load average (1 min) {load_before[0]:.1f} before, "
        f"{load_after[0]:.1f} after; fastest of {args.repeat} runs for the single process and warm dask"
    )


if __name__ == "__main__":
    main()
