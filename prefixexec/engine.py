"""Streaming and sharded scoring: input files -> per-condition accumulators.

Spec: STREAM-SCORE, STREAM-MEMORY, DASK-ENGINE (spec/streaming.md).

* :func:`accumulate_input` reads in one process. The ``records`` and ``parquet`` adapters are
  streamed batch by batch into an :class:`AccumulatorSet` (memory grows with tasks and
  conditions, not with the number of rollouts); other adapters read their list of rollouts,
  which is then accumulated.
* :func:`accumulate_dask` maps files (``records``) or groups of Parquet row groups
  (``parquet``) to accumulators on a Dask cluster and merges them in a tree.

Both name the first fault of the input exactly as the list-reading adapters do: the first
invalid row, or the first row that repeats the key (dataset, model, method, task_id, trial),
with the place where that key was first seen (found again by re-reading the input on that
error path only, so that nothing per rollout has to be kept).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, NoReturn

import attrs
import numpy as np

from prefixexec.adapters import ADAPTERS, AdapterOptions, InputError, limits, parquet
from prefixexec.adapters.parquet import Batch, Unit
from prefixexec.adapters.records import STDIN, iter_file, record_chunks, repeated_key_message
from prefixexec.kernel import Rollout
from prefixexec.kernel.accumulator import (
    AccumulatorSet,
    DuplicateRollout,
    RolloutArrays,
    RowError,
    accumulate,
)

if TYPE_CHECKING:
    from distributed import Client

#: Rollouts per batch when streaming JSONL records.
RECORD_CHUNK = 1 << 16
#: Adapters that stream (and that ``--engine dask`` can shard).
STREAMING = ("records", "parquet")

Key = tuple[str, str, str, str, int]
Locator = Callable[[Key, Batch, int], str]


# ---------------------------------------------------------------------------------------------
# One process


def _key(batch: Batch, row: int) -> Key:
    condition, task, trial = batch.rollouts.key(row)
    return (condition.dataset, condition.model, condition.method, task, trial)


def _earlier_in_batch(batch: Batch, key: Key, row: int) -> int | None:
    r = batch.rollouts
    conds = [i for i, c in enumerate(r.conditions) if (c.dataset, c.model, c.method) == key[:3]]
    tasks = [i for i, t in enumerate(r.tasks) if t == key[3]]
    hit = np.isin(r.condition[:row], conds) & np.isin(r.task[:row], tasks) & (r.trial[:row] == key[4])
    return int(np.argmax(hit)) if hit.any() else None


def _raise_repeat(batch: Batch, row: int, locate: Locator) -> NoReturn:
    key = _key(batch, row)
    earlier = _earlier_in_batch(batch, key, row)
    first = batch.where(earlier) if earlier is not None else locate(key, batch, row)
    raise InputError(batch.where(row), repeated_key_message(key, first))


def add_batch(state: AccumulatorSet, batch: Batch, locate: Locator) -> AccumulatorSet:
    """``state`` merged with the batch's rollouts; InputError names the batch's first fault."""
    rollouts = batch.rollouts
    bounded = limits.first_array_fault(rollouts)  # HOSTILE-ROLLOUT: every adapter's rows
    if bounded is not None:
        first, what = bounded
        add_batch(state, attrs.evolve(batch, rollouts=rollouts.head(first), error=None), locate)
        raise InputError(batch.where(first), what)
    n = len(rollouts)
    if n > 1 and n * (int(rollouts.T.max()) + 1) > limits.MAX_CELLS:  # HOSTILE-CELLS: in row order
        state = add_batch(state, _rows(batch, 0, n // 2), locate)
        return add_batch(state, _rows(batch, n // 2, n), locate)
    try:
        part = accumulate(rollouts)
    except (RowError, DuplicateRollout) as exc:
        row = exc.row
        assert row is not None  # accumulate always names the row
        repeat = state.first_repeat(rollouts, row)
        if repeat is not None:
            _raise_repeat(batch, repeat, locate)
        if isinstance(exc, DuplicateRollout):
            _raise_repeat(batch, row, locate)
        raise InputError(batch.where(row), exc.what) from None
    too_big = limits.cells_fault(state, part)
    if too_big is not None:
        key = too_big[0]
        mask = np.isin(rollouts.condition, [i for i, c in enumerate(rollouts.conditions) if c == key])
        rows = np.flatnonzero(mask)
        raise InputError(batch.where(int(rows[np.argmax(rollouts.T[rows])])), limits.cells_message(*too_big))
    try:
        return state.merge(part)
    except DuplicateRollout:
        repeat = state.first_repeat(rollouts)
        assert repeat is not None  # the merge found one
        _raise_repeat(batch, repeat, locate)


def _rows(batch: Batch, start: int, stop: int) -> Batch:
    """Rows ``start:stop`` of a batch, named as in the whole batch."""
    r = batch.rollouts
    # Only the rows' own conditions and tasks: the kernel's arrays grow with the tables' sizes.
    used_tasks, task = np.unique(r.task[start:stop], return_inverse=True)
    used_conditions, condition = np.unique(r.condition[start:stop], return_inverse=True)
    part = RolloutArrays(
        [r.conditions[i] for i in used_conditions],
        condition.reshape(-1),
        [r.tasks[i] for i in used_tasks],
        task.reshape(-1),
        r.trial[start:stop],
        r.T[start:stop],
        r.fed[start:stop],
        r.Y[start:stop],
        r.label[start:stop],
    )
    wheres = None if batch.wheres is None else batch.wheres[start:stop]
    return attrs.evolve(batch, rollouts=part, first_row=batch.first_row + start, wheres=wheres)


def stream(
    batches: Iterable[Batch], locate: Locator, on_rows: Callable[[int], None] | None = None
) -> AccumulatorSet:
    """Accumulate batches in order (STREAM-SCORE); raises the first fault as InputError.
    ``on_rows`` is told the rollouts of each batch (PROGRESS-COUNT)."""
    state = AccumulatorSet.empty()
    for batch in batches:
        state = add_batch(state, batch, locate)
        if on_rows is not None:
            on_rows(len(batch.rollouts))
        if batch.error is not None:
            raise batch.error
    return state


def record_batches(paths: Sequence[str], chunk: int | None = None) -> Iterator[Batch]:
    """JSONL records in batches of ``chunk`` rollouts (default :data:`RECORD_CHUNK`; a batch
    never spans two files), decoded by the records reader's fast path (``record_chunks``)."""
    chunk = RECORD_CHUNK if chunk is None else chunk
    for index, path in enumerate(paths):
        for rollouts, wheres, error in record_chunks(path, chunk):
            yield Batch(path, index, 0, rollouts, error, wheres)
            if error is not None:
                return


def _records_locator(paths: Sequence[str]) -> Locator:
    def locate(key: Key, batch: Batch, row: int) -> str:
        stop = batch.where(row)
        for index, path in enumerate(paths[: batch.path_index + 1]):
            if path == STDIN:
                continue
            for where, rollout in iter_file(path):
                if index == batch.path_index and where == stop:
                    break
                c = rollout.condition
                if (c.dataset, c.model, c.method, rollout.task_id, rollout.trial) == key:
                    return where
        return "an earlier line of <stdin>"

    return locate


def _parquet_locator(paths: Sequence[str]) -> Locator:
    def locate(key: Key, batch: Batch, row: int) -> str:
        found = parquet.locate(paths, key, (batch.path_index, batch.first_row + row))
        return found if found is not None else "an earlier row"

    return locate


def _parquet_batches(paths: Sequence[str]) -> Iterator[Batch]:
    for index, path in enumerate(paths):
        yield from parquet.iter_batches(path, index)


def _describe(rollout: Rollout) -> str:
    c = rollout.condition
    return f"{c.dataset} / {c.model} / {c.method}, task {rollout.task_id!r}, trial {rollout.trial}"


def input_batches(
    adapter: str, paths: Sequence[str], options: AdapterOptions
) -> tuple[Iterable[Batch], Locator]:
    """The input as batches, and how to find where a repeated key was first seen."""
    for path in paths:
        if path != STDIN:
            limits.check_input_file(path)  # HOSTILE-DEVICE, HOSTILE-LOOP
    if adapter == "parquet":
        return _parquet_batches(paths), _parquet_locator(paths)
    if adapter == "records":
        return record_batches(paths), _records_locator(paths)
    rollouts = ADAPTERS[adapter].read(paths, options)
    batch = Batch(
        "input", 0, 0, RolloutArrays.from_rollouts(rollouts), None, [_describe(r) for r in rollouts]
    )
    return [batch], lambda key, b, row: "an earlier rollout"


def checked_batches(adapter: str, paths: Sequence[str], options: AdapterOptions) -> Iterator[RolloutArrays]:
    """The input's batches, each yielded once it is checked (PARQUET-CONVERT); raises on a fault.

    Checks everything :func:`accumulate_input` checks, keeping only the accumulators.
    """
    batches, locate = input_batches(adapter, paths, options)
    state = AccumulatorSet.empty()
    for batch in batches:
        state = add_batch(state, batch, locate)
        yield batch.rollouts
        if batch.error is not None:
            raise batch.error
    if state.N == 0:
        raise InputError(", ".join(paths) or "<no input>", "no records found")


def accumulate_input(
    adapter: str, paths: Sequence[str], options: AdapterOptions, on_rows: Callable[[int], None] | None = None
) -> AccumulatorSet:
    """Read ``paths`` with ``adapter`` into accumulators in this process (streaming where it can)."""
    state = stream(*input_batches(adapter, paths, options), on_rows)
    if state.N == 0:
        raise InputError(", ".join(paths) or "<no input>", "no records found")
    return state


# ---------------------------------------------------------------------------------------------
# Dask


@attrs.frozen(slots=True)
class Fault:
    """A unit's InputError, carried back from a worker as data (``unit``: its position)."""

    unit: int
    where: str
    what: str


Outcome = AccumulatorSet | Fault


def run_unit(adapter: str, position: int, unit: Unit) -> Outcome:
    """Accumulate one unit (on a worker); an input fault comes back as a :class:`Fault`."""
    try:
        if adapter == "parquet":
            batches: Iterable[Batch] = parquet.iter_batches(
                unit.path, unit.path_index, unit.row_groups, unit.first_row
            )
        else:
            batches = (attrs.evolve(b, path_index=unit.path_index) for b in record_batches([unit.path]))
        return stream(batches, lambda key, batch, row: "an earlier row")
    except InputError as exc:
        return Fault(position, exc.where, exc.what)


def merge_outcomes(a: Outcome, b: Outcome) -> Outcome:
    """Merge two partial results (on a worker); the earlier unit's fault wins."""
    if isinstance(a, Fault):
        return a
    if isinstance(b, Fault):
        return b
    too_big = limits.cells_fault(a, b)
    if too_big is not None:  # HOSTILE-CELLS
        return Fault(-1, "input", limits.cells_message(*too_big))
    try:
        return a.merge(b)
    except DuplicateRollout as exc:
        return Fault(-1, "input", str(exc))


def _client(scheduler: str | None, workers: int | None, directory: str) -> Client:
    import logging

    from distributed import Client, LocalCluster

    if scheduler is not None:
        try:
            return Client(scheduler, timeout="10s")  # type: ignore[no-untyped-call]  # distributed lacks annotations
        except (OSError, TimeoutError, ValueError) as exc:
            raise InputError("--scheduler", f"cannot connect to {scheduler!r}: {exc}") from None
    cluster = LocalCluster(  # type: ignore[no-untyped-call]  # distributed lacks annotations
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",  # a free port (None still binds 8787 for the HTTP routes)
        silence_logs=logging.ERROR,
        local_directory=directory,
    )
    return Client(cluster)  # type: ignore[no-untyped-call]  # distributed lacks annotations


def work_units(adapter: str, paths: Sequence[str]) -> list[Unit]:
    """What ``--engine dask`` distributes: row-group units of Parquet files, or whole JSONL files."""
    if adapter not in STREAMING:
        raise InputError(
            "--engine",
            f"dask reads --adapter records or parquet, not {adapter!r} "
            "(write such input to Parquet with 'prefixexec convert' first)",
        )
    if STDIN in paths:
        raise InputError(STDIN, "--engine dask reads files, not standard input")
    if adapter == "parquet":
        return parquet.units(paths)
    return [Unit(path, index, (), 0, 0) for index, path in enumerate(paths)]


def accumulate_dask(
    adapter: str,
    paths: Sequence[str],
    options: AdapterOptions,
    scheduler: str | None = None,
    workers: int | None = None,
    client: Client | None = None,
) -> AccumulatorSet:
    """Map the input's units to accumulators on a Dask cluster and merge them (DASK-ENGINE).

    ``scheduler`` is the address of a running scheduler (its workers must see ``paths``);
    without one a local cluster of ``workers`` processes is started and closed again. ``client``:
    a connected client to use instead (from :func:`dask_session`; left open). On a fault the
    input is read again in this process, to name the same first fault as
    :func:`accumulate_input`.
    """
    work = work_units(adapter, paths)
    if not work:
        raise InputError(", ".join(paths) or "<no input>", "no records found")
    if client is None:
        with dask_session(scheduler, workers) as own:
            result = _accumulate_units(own, adapter, work)
    else:
        result = _accumulate_units(client, adapter, work)
    if isinstance(result, Fault):
        accumulate_input(adapter, paths, options)  # raises the first fault, named as in one process
        raise InputError(result.where, result.what)
    if result.N == 0:
        raise InputError(", ".join(paths) or "<no input>", "no records found")
    return result


def _accumulate_units(client: Client, adapter: str, work: Sequence[Unit]) -> Outcome:
    level = client.map(functools.partial(run_unit, adapter), range(len(work)), work, pure=False)
    while len(level) > 1:
        merged = [
            client.submit(merge_outcomes, a, b, pure=False)
            for a, b in zip(level[::2], level[1::2], strict=False)
        ]
        level = merged + level[len(merged) * 2 :]
    result: Outcome = level[0].result()
    return result


@contextlib.contextmanager
def dask_session(scheduler: str | None = None, workers: int | None = None) -> Iterator[Client]:
    """A Dask client for the block: connected to ``scheduler``, or to a local cluster of
    ``workers`` processes (one thread each) started here and closed at the end (DASK-ENGINE)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="prefixexec-dask-") as directory:
        client = _client(scheduler, workers, directory)
        try:
            yield client
        finally:
            cluster = client.cluster
            client.close()  # type: ignore[no-untyped-call]  # distributed lacks annotations
            if scheduler is None and cluster is not None:
                cluster.close()
