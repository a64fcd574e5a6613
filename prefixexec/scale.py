"""The bootstrap at scale: memory available, progress on a terminal, resample blocks on Dask.

Spec: BOOT-MEMORY, BOOT-PROGRESS, DASK-BOOTSTRAP (spec/streaming.md).

* :func:`available_memory`: what a bootstrap may plan with (BOOT-MEMORY): the memory the system
  reports available, or less under an address-space limit.
* progress: the bootstrap reports ``progress(done, total)`` blocks to the command's
  :class:`prefixexec.ttyprogress.Work` line (blocks done of blocks, the time left; silent when piped).
* :func:`dask_runner`: the kernel's group of replicates computed block by block on Dask workers.
  A worker starts its block's rows in the generator's stream without drawing the rows before it
  (BOOT-STREAM): the rejected outputs before each block are counted on the workers first, then
  each block is drawn from its own positioned generator. The values are those of the local
  engine, so the intervals are byte for byte the same.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from prefixexec.kernel.bootstrap import (
    BootstrapSettings,
    FloatArray,
    GroupWork,
    ProgressFn,
    Runner,
    default_block,
    local_runner,
    positioned_generator,
    rejections,
)

if TYPE_CHECKING:
    from distributed import Client

    from prefixexec.kernel.accumulator import AccumulatorSet

    from .options import EngineOptions, InputOptions

#: Dask tasks per worker the resamples are split into at least (when blocks are not set).
TASKS_PER_WORKER = 4


def available_memory() -> int | None:
    """Bytes the bootstrap may plan with: ``MemAvailable`` of /proc/meminfo (Linux), or the
    free pages the system reports, lowered to the address-space limit (``ulimit -v``) when one
    is set; ``None`` when neither is known."""
    found: int | None = None
    try:
        with open("/proc/meminfo", "rb") as f:
            for line in f.read(1 << 16).decode("ascii", "replace").splitlines():
                if line.startswith("MemAvailable:"):
                    found = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        found = None
    if found is None:
        try:
            import os

            found = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (AttributeError, OSError, ValueError):
            found = None
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            found = soft if found is None else min(found, soft)
    except (ImportError, OSError, ValueError):
        pass
    return found


# ---------------------------------------------------------------------------------------------
# The options of a command


@contextlib.contextmanager
def engine_session(engine: EngineOptions, source: InputOptions) -> Iterator[Client | None]:
    """The Dask client of ``--engine dask`` for the whole command (input and bootstrap), else None."""
    if engine.engine != "dask" or source.select or source.rollouts_path is not None:
        yield None
        return
    from prefixexec.adapters.records import STDIN

    from .engine import STREAMING, dask_session, work_units

    files = list(source.files)
    if source.adapter not in STREAMING or STDIN in files:
        work_units(source.adapter, files)  # its one-line error, before a cluster is started
    with dask_session(engine.scheduler, engine.workers or None) as client:
        yield client


def scaled(
    engine: EngineOptions,
    resamples: int,
    accumulators: AccumulatorSet,
    client: Client | None,
    progress: ProgressFn | None,
) -> dict[str, Any]:
    """The blocked bootstrap's options of a command (BOOT-BLOCK, BOOT-MEMORY, BOOT-PROGRESS,
    DASK-BOOTSTRAP): intervals only, ``--bootstrap-block``, the memory available, the blocks done
    reported to ``progress(done, total)``, and on Dask the blocks computed by the workers."""
    options: dict[str, Any] = {
        "keep_replicates": False,
        "block": engine.bootstrap_block,
        "memory_limit": available_memory(),
        "progress": progress,
    }
    if client is not None and resamples:
        options["runner"] = dask_runner(client)
        if options["block"] is None:
            tasks = max(
                (len(set().union(*(acc.tasks for _, acc in group))) for group in _datasets(accumulators)),
                default=1,
            )
            options["block"] = dask_block(client, tasks, resamples)
    return options


def _datasets(accumulators: AccumulatorSet) -> list[list[tuple[Any, Any]]]:
    groups: dict[str, list[tuple[Any, Any]]] = {}
    for key, acc in accumulators.items:
        groups.setdefault(key.dataset, []).append((key, acc))
    return list(groups.values())


# ---------------------------------------------------------------------------------------------
# Dask (DASK-BOOTSTRAP)


def block_rejections(n_tasks: int, seed: int, start: int, stop: int) -> int:
    """On a worker: outputs the generator rejects while drawing resample rows ``start:stop``."""
    return rejections(n_tasks, seed, start * n_tasks, stop * n_tasks)


def block_replicates(work: GroupWork, seed: int, start: int, rows: int, rejected: int) -> FloatArray:
    """On a worker: the group's replicates of resample rows ``start:start + rows``, drawn from a
    generator positioned at row ``start`` (``rejected``: outputs rejected before it)."""
    rng = positioned_generator(work.n_tasks, seed, start * work.n_tasks, rejected)
    return work.replicates(rng, rows, rows)


def dask_block(client: Client, n_tasks: int, B: int) -> int:
    """The default block for ``--engine dask``: :func:`default_block`, smaller when needed so
    that there are at least :data:`TASKS_PER_WORKER` blocks per worker."""
    workers = max(1, len(client.scheduler_info().get("workers", {})))
    return max(1, min(default_block(n_tasks, B), -(-B // (TASKS_PER_WORKER * workers))))


def dask_runner(client: Client) -> Runner:
    """A kernel :data:`Runner` computing each block of a group on the workers of ``client``.

    The rejection counts of a draw (one per block, summed into each block's start) are computed
    once and reused by every group of the same draw.
    """
    from distributed import as_completed

    starts_cache: dict[tuple[int, int, int, int], list[int]] = {}

    def run(work: GroupWork, settings: BootstrapSettings, block: int, tick: Callable[[], None]) -> FloatArray:
        n, B, seed = work.n_tasks, settings.B, settings.seed
        if n > 2**32:  # the stream cannot be entered there (BOOT-STREAM): draw here
            return local_runner(work, settings, block, tick)
        starts = list(range(0, B, block))
        key = (n, seed, B, block)
        if key not in starts_cache:
            counts = client.gather(  # type: ignore[no-untyped-call]  # distributed lacks annotations
                [client.submit(block_rejections, n, seed, s, min(s + block, B), pure=False) for s in starts]
            )
            sums = np.concatenate([[0], np.cumsum(np.asarray(counts, dtype=np.int64))[:-1]])
            starts_cache[key] = [int(x) for x in sums]
        before = starts_cache[key]
        # A key of its own (hash=False): a scatter of the same data under its hashed key while the
        # scheduler still forgets the previous run's copy can leave the tasks waiting for it forever
        # (dask/distributed#8576); released, not cancelled, once every block is in.
        [shared] = client.scatter([work], broadcast=True, hash=False)  # type: ignore[no-untyped-call]  # distributed lacks annotations
        futures = {
            client.submit(block_replicates, shared, seed, s, min(block, B - s), before[i], pure=False): s
            for i, s in enumerate(starts)
        }
        out = np.empty((work.rows, B), dtype=np.float64)
        # Each block's result fetched here, not by as_completed(with_results=True): a fetch that fails
        # there is only logged on the client's loop and the block never arrives (a wait without end);
        # here it raises.
        for future in as_completed(futures):  # type: ignore[no-untyped-call]  # distributed lacks annotations
            s = futures[future]
            values = future.result()
            out[:, s : s + values.shape[1]] = values
            tick()
        shared.release()
        return out

    return run
