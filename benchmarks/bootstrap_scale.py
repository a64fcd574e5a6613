"""Benchmark: the blocked bootstrap at scale, locally and on Dask, against a numpy floor (#27).

Every measurement runs in a child process of its own (one at a time: never two large jobs
together), which reports its peak resident memory (``ru_maxrss``; for Dask also its workers',
read after the local cluster is closed) and its wall and CPU time. One run prints:

* ``kernel``: 1,000,000 tasks x 10,000 resamples, one condition (one rollout per task, seeded
  synthetic outcomes, horizons 1..8): prefixexec's ``bootstrap_intervals`` (every interval of
  the condition) against the floor, a minimal numpy kernel doing the same blocked draws and sums
  (``integers`` per block from one generator, a ``bincount`` per resample, one float32 product
  with the condition's distinct per-task columns), no ratios, no intervals. Targets: peak RSS
  under 2 GB, time within 1.3x of the floor.
* ``dask``: the same bootstrap on a local Dask cluster of 1 and of 2 workers, the speed-up, and
  whether the intervals are identical to the local ones.
* ``table``: tasks 10^3 .. 10^6 (x 10,000 resamples), local and Dask (2 workers): time and peak
  memory (the 10^6 row reuses the runs above).
* ``path``: the whole command line on 10,000,000 outcome records (100,000 tasks x 100 trials,
  one JSONL file): ``prefixexec score`` with the default bootstrap against ``--bootstrap 0``.

Usage: python benchmarks/bootstrap_scale.py [--tasks 1000000] [--B 10000] [--parts kernel,dask,table,path]
       [--quick] (10^5 tasks, B = 2,000, 10^6 records: a check of the script in a minute)
The machine is named in the first lines (CPU model, cores, memory) and the machine's load is
printed before and after: on a shared machine the wall times carry the others' load, the CPU
times less so.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve()


# ---------------------------------------------------------------------------------------------
# Children


def _cohort_sums(n_tasks: int, seed: int = 2027) -> Any:
    from prefixexec.kernel import Cohort
    from prefixexec.kernel.bootstrap import task_sums

    rng = np.random.default_rng(seed)
    T = rng.integers(1, 9, n_tasks)
    fed = np.minimum(rng.integers(1, 11, n_tasks), T + 1)
    Y = rng.random(n_tasks) < 0.55
    width = len(str(n_tasks))
    tasks = [f"t{i:0{width}d}" for i in range(n_tasks)]
    cohort = Cohort(T=T, fed=fed, Y=Y, label_code=np.where(fed == T + 1, -1, 0), task=tasks)
    return {"c": tasks}, (lambda key, ids: task_sums(cohort, ids))


def _usage(start: float, cpu: float) -> dict[str, Any]:
    import resource

    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "wall_s": time.perf_counter() - start,
        "cpu_s": time.process_time() - cpu,
        "peak_rss_mb": _high_water() / 2**20,
        "children_peak_rss_mb": kids.ru_maxrss / 1024,
    }


def _high_water() -> int:
    """This process's peak resident memory in bytes: VmHWM (Linux), else ru_maxrss."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def child_ours(n_tasks: int, B: int, workers: int) -> dict[str, Any]:
    """prefixexec's blocked bootstrap of one condition: locally (workers 0) or on Dask. The
    per-task sums and their distinct columns (``designs``, the same input the floor gets) are
    made first and timed apart (``setup_s``)."""
    from prefixexec.kernel.bootstrap import BootstrapSettings, design_intervals, designs, plan

    ids, sums = _cohort_sums(n_tasks)
    settings = BootstrapSettings(B=B, seed=0)
    started = time.perf_counter()
    found_designs = designs(ids, sums)
    setup = time.perf_counter() - started
    if workers == 0:
        start, cpu = time.perf_counter(), time.process_time()
        plans = [plan(d, B) for d in found_designs]
        found = design_intervals(found_designs, plans, settings)
        out = _usage(start, cpu)
    else:
        import logging

        from distributed import Client, LocalCluster

        from prefixexec.scale import dask_block, dask_runner

        with (
            LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=":0",
                silence_logs=logging.ERROR,
            ) as cluster,
            Client(cluster) as client,
        ):
            client.wait_for_workers(workers)
            start, cpu = time.perf_counter(), time.process_time()
            block = dask_block(client, n_tasks, B)
            plans = [plan(d, B, block) for d in found_designs]
            found = design_intervals(found_designs, plans, settings, runner=dask_runner(client))
            wall = time.perf_counter() - start
        out = _usage(start, cpu)
        out["wall_s"] = wall  # the cluster's shutdown is not the bootstrap's time
        out["block"] = block
    out["setup_s"] = setup
    out["intervals"] = repr(found["c"])
    return out


def child_floor(n_tasks: int, B: int) -> dict[str, Any]:
    """The floor: the same blocked draws and the same sums, by the shortest numpy code."""
    from prefixexec.kernel.bootstrap import default_block, designs

    ids, sums = _cohort_sums(n_tasks)
    (design,) = designs(ids, sums)
    X = np.column_stack(design.columns).astype(np.float32)  # the condition's distinct columns
    block = default_block(n_tasks, B)
    start, cpu = time.perf_counter(), time.process_time()
    rng = np.random.default_rng(0)
    Z = np.empty((X.shape[1], B), dtype=np.float64)
    for first in range(0, B, block):
        rows = min(block, B - first)
        index = rng.integers(0, n_tasks, size=(rows, n_tasks))
        W = np.empty((rows, n_tasks), dtype=np.float32)
        for r in range(rows):
            W[r] = np.bincount(index[r], minlength=n_tasks)
        Z[:, first : first + rows] = (W @ X).T
    out = _usage(start, cpu)
    out["checksum"] = float(Z.sum())
    return out


def child_cli(argv: list[str]) -> dict[str, Any]:
    """``prefixexec ARGV`` in this process, output to a file."""
    from prefixexec.cli import main

    start, cpu = time.perf_counter(), time.process_time()
    code = main(argv)
    out = _usage(start, cpu)
    out["status"] = code
    return out


def run_child(*args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(HERE), "--child", json.dumps(args)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"child {args} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


# ---------------------------------------------------------------------------------------------
# The parent


def machine() -> str:
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        memory = f", {kb / 2**20:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    import numpy

    return (
        f"{model}, {os.cpu_count()} cores{memory}; Python {platform.python_version()}, "
        f"numpy {numpy.__version__}, {platform.system()} {platform.release()}"
    )


def load() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def write_records(path: Path, tasks: int, trials: int) -> None:
    """tasks x trials outcome records of one condition (seeded), written in chunks."""
    rng = np.random.default_rng(7)
    width = len(str(tasks))
    with path.open("w", encoding="utf-8") as f:
        for first in range(0, tasks, 1000):
            lines = []
            for j in range(first, min(first + 1000, tasks)):
                T = rng.integers(1, 9, trials)
                fed = np.minimum(rng.integers(1, 11, trials), T + 1)
                Y = rng.random(trials) < 0.55
                for trial in range(trials):
                    t, e = int(T[trial]), int(fed[trial])
                    label = "" if e == t + 1 else ', "label": "schema"'
                    lines.append(
                        f'{{"dataset": "d", "model": "m", "method": "x", "task_id": "t{j:0{width}d}", '
                        f'"trial": {trial}, "success": {"true" if Y[trial] else "false"}, '
                        f'"outcome": {{"T": {t}, "fed": {e}{label}}}}}\n'
                    )
            f.write("".join(lines))


def fmt(r: dict[str, Any], memory: str = "peak_rss_mb") -> str:
    return f"{r['wall_s']:8.1f} s wall {r['cpu_s']:8.1f} s CPU {r[memory]:8.0f} MB"


def part_kernel(tasks: int, B: int) -> dict[str, Any]:
    print(f"\n== kernel: {tasks:,} tasks x {B:,} resamples, one condition")
    floor = run_child("floor", str(tasks), str(B))
    ours = run_child("ours", str(tasks), str(B), "0")
    print(f"floor (blocked draws and sums, numpy)   {fmt(floor)}")
    print(f"prefixexec bootstrap_intervals (local)  {fmt(ours)}")
    print(
        f"ratio prefixexec / floor: {ours['wall_s'] / floor['wall_s']:.2f} wall, "
        f"{ours['cpu_s'] / floor['cpu_s']:.2f} CPU (target <= 1.3); peak RSS {ours['peak_rss_mb']:.0f} MB "
        f"(target < 2000; the sums of the input, made before, {ours['setup_s']:.0f} s, included)"
    )
    return ours


def part_dask(tasks: int, B: int, ours: dict[str, Any] | None) -> dict[int, dict[str, Any]]:
    print(f"\n== dask: {tasks:,} tasks x {B:,} resamples on a local cluster (load now {load()})")
    local = ours if ours is not None else run_child("ours", str(tasks), str(B), "0")
    dask = {w: run_child("ours", str(tasks), str(B), str(w)) for w in (1, 2)}
    print(f"local                       {fmt(local)}")
    for w, r in dask.items():
        same = "identical" if r["intervals"] == local["intervals"] else "DIFFERENT"
        print(
            f"{w} worker(s), block {r['block']:>5}:  {r['wall_s']:8.1f} s wall, "
            f"driver {r['peak_rss_mb']:.0f} MB, "
            f"largest worker {r['children_peak_rss_mb']:.0f} MB; intervals {same} to local"
        )
    print(f"speed-up 2 workers / 1 worker: {dask[1]['wall_s'] / dask[2]['wall_s']:.2f}x")
    dask[0] = local
    return dask


def part_table(tasks: int, B: int, ours: dict[str, Any] | None, dask2: dict[str, Any] | None) -> None:
    print(f"\n== table: tasks x {B:,} resamples, one condition (load now {load()})")
    print("| tasks | local time | local peak RSS | Dask (2 workers) time | Dask driver / worker peak RSS |")
    print("|---:|---:|---:|---:|---:|")
    for n in [10**k for k in range(3, 7) if 10**k < tasks] + [tasks]:
        local = ours if n == tasks and ours is not None else run_child("ours", str(n), str(B), "0")
        remote = dask2 if n == tasks and dask2 is not None else run_child("ours", str(n), str(B), "2")
        print(
            f"| {n:,} | {local['wall_s']:.1f} s | {local['peak_rss_mb']:.0f} MB | "
            f"{remote['wall_s']:.1f} s | "
            f"{remote['peak_rss_mb']:.0f} / {remote['children_peak_rss_mb']:.0f} MB |"
        )


def part_path(n_tasks: int, trials: int) -> None:
    print(
        f"\n== path: prefixexec score of {n_tasks * trials:,} records ({n_tasks:,} tasks x {trials} trials)"
    )
    with tempfile.TemporaryDirectory(prefix="prefixexec-bench-") as tmp:
        path = Path(tmp) / "records.jsonl"
        started = time.perf_counter()
        write_records(path, n_tasks, trials)
        size = path.stat().st_size
        print(f"input: {size / 1e9:.2f} GB written in {time.perf_counter() - started:.0f} s (load {load()})")
        off = run_child("cli", "score", str(path), "--bootstrap", "0", "--output", str(Path(tmp) / "off.txt"))
        on = run_child("cli", "score", str(path), "--output", str(Path(tmp) / "on.txt"))
        print(f"--bootstrap 0              {fmt(off)}")
        print(f"default (10,000 resamples) {fmt(on)}")
        print(
            f"ratio with / without intervals: {on['wall_s'] / off['wall_s']:.2f} wall, "
            f"{on['cpu_s'] / off['cpu_s']:.2f} CPU"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tasks", type=int, default=1_000_000)
    parser.add_argument("--B", type=int, default=10_000)
    parser.add_argument(
        "--parts", default="kernel,dask,table,path", help="which parts to run, in this order (default all)"
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)  # a JSON list: what a child runs
    args = parser.parse_args()
    if args.child:
        kind, *rest = json.loads(args.child)
        if kind == "ours":
            result = child_ours(int(rest[0]), int(rest[1]), int(rest[2]))
        elif kind == "floor":
            result = child_floor(int(rest[0]), int(rest[1]))
        else:
            result = child_cli(rest)
        print(json.dumps(result))
        return
    tasks, B = (100_000, 2_000) if args.quick else (args.tasks, args.B)
    parts = args.parts.split(",")
    print(f"machine: {machine()}")
    print(f"load average at start: {load()}")
    ours: dict[str, Any] | None = None
    dask: dict[int, dict[str, Any]] = {}
    for part in parts:
        if part == "kernel":
            ours = part_kernel(tasks, B)
        elif part == "dask":
            dask = part_dask(tasks, B, ours)
        elif part == "table":
            part_table(tasks, B, ours, dask.get(2))
        elif part == "path":
            part_path(*((10_000, 100) if args.quick else (100_000, 100)))
    print(f"\nload average at end: {load()}")


if __name__ == "__main__":
    main()
