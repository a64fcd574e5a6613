"""Outcome tables in Parquet, read in batches with pyarrow (spec: PARQUET-FORMAT, PARQUET-CONVERT).

One row per rollout, columns ``dataset``, ``model``, ``method``, ``task_id`` (strings, plain or
dictionary-encoded; ``task_id`` may also be an integer column), ``trial``, ``T``, ``fed`` (integer
columns), ``label`` (string, null when there is none) and ``success`` (boolean). Other columns
are ignored. Rows are numbered from 0 within a file, as pyarrow and pandas number them; a fault
is reported as ``FILE: row N: what is wrong``.

:func:`iter_batches` turns a file (or some of its row groups) into :class:`Batch` es of kernel
columns without building a Python object per row; :func:`read` is the list-of-rollouts adapter
of the registry; :func:`write` writes batches (``prefixexec convert``).

pyarrow is imported when a function needs it, so that the other adapters do not pay for it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np
import numpy.typing as npt

from prefixexec.kernel import ConditionKey, Outcome, Rollout
from prefixexec.kernel.accumulator import NO_LABEL, RolloutArrays
from prefixexec.kernel.actions import LABEL_ORDER, parse_label

from .errors import InputError
from .inputs import check_input_file, compressed_as, open_binary, reading
from .records import repeated_key_message
from .text import one_line

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq

IntArray = npt.NDArray[np.int64]

#: The columns of an outcome table, in the order convert writes them.
COLUMNS = ("dataset", "model", "method", "task_id", "trial", "T", "fed", "label", "success")
_STRINGS = ("dataset", "model", "method", "task_id", "label")
_INTEGERS = ("trial", "T", "fed")
#: Rows per batch when reading (a batch's memory is about 100 bytes a row).
BATCH_ROWS = 1 << 18
#: Rows per row group when writing (the unit of work of ``score --engine dask``).
ROW_GROUP_ROWS = 1 << 20
#: pyarrow.parquet.ParquetWriter options of :func:`write`: LZ4 with dictionary pages decodes
#: about twice as fast as the default Snappy and gives the smallest files here.
WRITE_OPTIONS: dict[str, object] = {"compression": "lz4"}


@attrs.frozen(slots=True)
class Batch:
    """Consecutive rows of one input file as kernel columns.

    ``rollouts`` holds the rows before the first fault this reader found in the batch (all rows
    when ``error`` is ``None``); ``error`` is that fault, to be raised once the rows before it
    have been checked for earlier faults (kernel checks, repeated keys).
    """

    path: str
    path_index: int
    first_row: int
    rollouts: RolloutArrays
    error: InputError | None = attrs.field(default=None, eq=False)
    #: ``line`` names a row: Parquet rows are ``FILE: row N``; JSONL readers pass their own.
    wheres: Sequence[str] | None = attrs.field(default=None, eq=False)

    def where(self, row: int) -> str:
        """The place of batch row ``row`` for an error message."""
        if self.wheres is not None:
            return self.wheres[row]
        return f"{self.path}: row {self.first_row + row}"


class _LazyCompute:
    """``pyarrow.compute``, imported on first use (it takes a noticeable time to import)."""

    def __getattr__(self, name: str) -> Any:
        import pyarrow.compute

        return getattr(pyarrow.compute, name)


def _pyarrow() -> tuple[Any, Any, Any]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    return pa, _LazyCompute(), pq


def open_file(path: str) -> pq.ParquetFile:
    """Open a Parquet file for reading, with InputError for a missing or malformed file."""
    pa, _, pq = _pyarrow()
    if path == "-":
        raise InputError("-", "the parquet adapter reads files, not standard input")
    if os.path.isdir(path):
        raise InputError(path, "is a directory, expected a Parquet file")
    check_input_file(path)  # no device, FIFO or pseudo-file (HOSTILE-*): pyarrow opens the path
    source: Any = path
    if os.path.exists(path):
        with reading(path, "a Parquet file"), open_binary(path, "a Parquet file") as handle:
            if compressed_as(handle) is not None:  # .parquet.gz or .zst: read into memory (INPUT-COMPRESSED)
                source = pa.BufferReader(handle.read())
    try:
        check_schema(path, pq.read_schema(source))
        # String columns come back dictionary-encoded: no Python object per row.
        return pq.ParquetFile(source, read_dictionary=list(_STRINGS))
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except PermissionError:
        raise InputError(path, "permission denied") from None
    except (pa.ArrowException, OSError) as exc:
        raise InputError(path, f"not a readable Parquet file ({one_line(str(exc))})") from None


def check_schema(path: str, schema: pa.Schema) -> None:
    """Every column of PARQUET-FORMAT is there, with a type it may have."""
    pa, _, _ = _pyarrow()
    names = set(schema.names)
    missing = [c for c in COLUMNS if c not in names]
    if missing:
        raise InputError(
            path, f"missing column(s) {', '.join(missing)} (an outcome table has {', '.join(COLUMNS)})"
        )
    types = pa.types
    for name in COLUMNS:
        t = schema.field(name).type
        value = t.value_type if types.is_dictionary(t) else t
        text = types.is_string(value) or types.is_large_string(value)
        if name in _STRINGS:
            ok = text or (name == "task_id" and types.is_integer(value))
            expected = "string" + (" or integer" if name == "task_id" else "")
        elif name in _INTEGERS:
            ok = types.is_integer(t)
            expected = "integer"
        else:
            ok = types.is_boolean(t)
            expected = "boolean"
        if not ok:
            raise InputError(path, f"column {name!r} must be {expected}, got {t}")


def _first_true(mask: npt.NDArray[np.bool_]) -> int | None:
    return int(np.argmax(mask)) if mask.any() else None


class _Faults:
    """The earliest fault of a batch over several checks (the first check wins a tie)."""

    def __init__(self) -> None:
        self.row: int | None = None
        self.what = ""

    def add(self, row: int | None, what: str) -> None:
        if row is not None and (self.row is None or row < self.row):
            self.row, self.what = row, what


def _null_row(array: pa.Array) -> int | None:
    if array.null_count == 0:
        return None
    return _first_true(~_bits(array.buffers()[0], array.offset, len(array)))


IndexArray = npt.NDArray[np.integer[Any]]


def _readonly(array: npt.NDArray[Any]) -> npt.NDArray[Any]:
    array.flags.writeable = False
    return array


def _codes(array: pa.Array) -> tuple[list[str | None], IndexArray, npt.NDArray[np.bool_] | None]:
    """(distinct values, per-row index, null mask or None) of a string, dictionary or integer column.

    The index keeps the width of the dictionary's indices (no copy when there is no null). Null
    rows get index 0 and are marked in the mask (a null dictionary value counts as null).
    """
    pa, pc, _ = _pyarrow()
    if not pa.types.is_dictionary(array.type):
        if pa.types.is_integer(array.type):
            array = pc.cast(array, pa.string())
        array = array.dictionary_encode()
    values = array.dictionary
    if pa.types.is_integer(values.type):
        values = pc.cast(values, pa.string())
    names: list[str | None] = values.to_pylist()
    index, valid = _raw_indices(array.indices)
    nulls = None
    if valid is not None:
        nulls = ~valid
        index = _readonly(np.where(valid, index, 0))
    if None in names:
        null_value = np.array([name is None for name in names], dtype=np.bool_)[index]
        nulls = null_value if nulls is None else nulls | null_value
    return names, index, nulls


def _integers(array: pa.Array) -> tuple[IntArray, int | None]:
    """An integer column as int64 (nulls read as anything), and the first row whose value does
    not fit (uint64 only)."""
    values = _numpy(array)
    if values.dtype == np.uint64:
        too_big = values > np.uint64(np.iinfo(np.int64).max)
        if too_big.any():
            return _readonly(np.where(too_big, 0, values).astype(np.int64)), _first_true(too_big)
    if values.dtype != np.int64:
        return _readonly(values.astype(np.int64)), None
    return values, None


def _labels(array: pa.Array) -> tuple[IndexArray, int | None, str]:
    """Kernel label codes (int8, -1 for null), the first row with an unknown label and what is wrong."""
    pa, _, _ = _pyarrow()
    if not pa.types.is_dictionary(array.type):
        array = array.dictionary_encode()
    names: list[str | None] = array.dictionary.to_pylist()
    lookup: list[int | None] = []
    problems: dict[int, str] = {}
    for i, name in enumerate(names):
        if name is None:
            lookup.append(None)
            continue
        try:
            lookup.append(parse_label(name).rank)
        except ValueError as exc:
            lookup.append(-2)
            problems[i] = f"column 'label': {exc}"
    table = np.array([NO_LABEL if code is None else code for code in lookup], dtype=np.int8)
    index, valid = _raw_indices(array.indices)
    out = table.take(index, mode="clip") if len(names) else np.full(index.shape[0], NO_LABEL, np.int8)
    if valid is not None:
        out = np.where(valid, out, np.int8(NO_LABEL))
    out = _readonly(out)
    if not problems:
        return out, None, ""
    bad = out == -2
    row = int(np.argmax(bad))
    return _readonly(np.where(bad, np.int8(NO_LABEL), out)), row, problems[int(index[row])]


def _bits(buffer: pa.Buffer, offset: int, n: int) -> npt.NDArray[np.bool_]:
    bits = np.unpackbits(np.frombuffer(buffer, dtype=np.uint8), bitorder="little")
    out: npt.NDArray[np.bool_] = bits[offset : offset + n].view(np.bool_)
    return _readonly(out)


def _numpy(array: pa.Array) -> npt.NDArray[Any]:
    """An integer or boolean Arrow array's values as a read-only numpy view of its buffer (bits
    unpacked for booleans); the slots of nulls hold arbitrary values.

    Reads the buffers directly: ``Array.to_numpy`` imports pandas when it is installed.
    """
    pa, _, _ = _pyarrow()
    n, offset = len(array), array.offset
    t = array.type
    if n == 0:
        return _readonly(np.zeros(0, dtype=np.bool_ if pa.types.is_boolean(t) else np.int64))
    data = array.buffers()[1]
    if pa.types.is_boolean(t):
        return _bits(data, offset, n)
    kind = "i" if pa.types.is_signed_integer(t) else "u"
    return np.frombuffer(data, dtype=np.dtype(f"{kind}{t.bit_width // 8}"), count=offset + n)[offset:]


def _raw_indices(indices: pa.Array) -> tuple[IndexArray, npt.NDArray[np.bool_] | None]:
    """The integer values of an Arrow array without converting nulls (their slots hold anything),
    and its validity mask (None without nulls)."""
    values = _numpy(indices)
    if indices.null_count == 0:
        return values, None
    return values, _bits(indices.buffers()[0], indices.offset, len(indices))


def batch_columns(path: str, path_index: int, first_row: int, table: pa.RecordBatch) -> Batch:
    """Check a record batch (types are checked by :func:`check_schema`) and turn it into a Batch."""
    faults = _Faults()
    n = table.num_rows
    strings: dict[str, tuple[list[str], IndexArray]] = {}
    for name in ("dataset", "model", "method", "task_id"):
        names, index, nulls = _codes(table.column(name))
        if nulls is not None:
            faults.add(_first_true(nulls), (f"column {name!r} is null"))
        strings[name] = ([x or "" for x in names], index)
    ints: dict[str, IntArray] = {}
    for name in _INTEGERS:
        column = table.column(name)
        faults.add(_null_row(column), (f"column {name!r} is null"))
        ints[name], bad = _integers(column)
        faults.add(bad, (f"column {name!r} does not fit a 64-bit integer"))
    label, bad_label, problem = _labels(table.column("label"))
    faults.add(bad_label, (problem))
    success_column = table.column("success")
    faults.add(_null_row(success_column), ("column 'success' is null"))
    success = _numpy(success_column)
    conditions, condition = _condition_codes(strings["dataset"], strings["model"], strings["method"])
    tasks, task = strings["task_id"]
    stop = n if faults.row is None else faults.row
    rollouts = RolloutArrays(
        conditions,
        condition[:stop],
        tasks,
        task[:stop],
        ints["trial"][:stop],
        ints["T"][:stop],
        ints["fed"][:stop],
        success[:stop],
        label[:stop],
    )
    error = None if faults.row is None else InputError(f"{path}: row {first_row + faults.row}", faults.what)
    return Batch(path, path_index, first_row, rollouts, error)


def _condition_codes(
    dataset: tuple[list[str], IndexArray],
    model: tuple[list[str], IndexArray],
    method: tuple[list[str], IndexArray],
) -> tuple[list[ConditionKey], IndexArray]:
    """One index per distinct (dataset, model, method) present in the rows."""
    (dn, di), (mn, mi), (en, ei) = dataset, model, method
    n = di.shape[0]
    if len(dn) == len(mn) == len(en) == 1:  # one condition: no per-row work
        return [ConditionKey(dn[0], mn[0], en[0])], _readonly(np.zeros(n, dtype=np.int8))
    size = len(dn) * len(mn) * len(en)
    if size <= 1 << 12:  # every combination is a condition (absent ones get no accumulator)
        combined = (di.astype(np.int32) * len(mn) + mi) * len(en) + ei
        keys = [ConditionKey(d, m, e) for d in dn for m in mn for e in en]
        return keys, _readonly(combined)
    combined = (di.astype(np.int64) * len(mn) + mi) * len(en) + ei
    if n == 0:
        return [], combined
    if size <= max(n, 1 << 16):
        present = np.flatnonzero(np.bincount(combined, minlength=size))
        remap = np.full(size, -1, dtype=np.int64)
        remap[present] = np.arange(present.shape[0])
        index = remap[combined]
    else:
        present, inverse = np.unique(combined, return_inverse=True)
        index = inverse.reshape(-1).astype(np.int64)
    keys = []
    for code in present.tolist():
        rest, e = divmod(code, len(en))
        d, m = divmod(rest, len(mn))
        keys.append(ConditionKey(dn[d], mn[m], en[e]))
    return keys, _readonly(index)


def iter_batches(
    path: str,
    path_index: int = 0,
    row_groups: Sequence[int] | None = None,
    first_row: int = 0,
    batch_rows: int | None = None,
) -> Iterator[Batch]:
    """The batches of one file, or of some of its row groups (``first_row``: the first one's row).

    ``batch_rows`` defaults to :data:`BATCH_ROWS`.
    """
    pa, _, _ = _pyarrow()
    batch_rows = BATCH_ROWS if batch_rows is None else batch_rows
    handle = open_file(path)
    row = first_row
    try:
        for record_batch in handle.iter_batches(
            batch_size=batch_rows, row_groups=row_groups, columns=COLUMNS
        ):
            batch = batch_columns(path, path_index, row, record_batch)
            row += record_batch.num_rows
            yield batch
            if batch.error is not None:
                return
    except (pa.ArrowException, OSError) as exc:
        what = f"cannot read the Parquet data ({one_line(str(exc))})"
        raise InputError(f"{path}: row {row}", what) from None


@attrs.frozen(slots=True)
class Unit:
    """A piece of work for a worker: some row groups of one file."""

    path: str
    path_index: int
    row_groups: tuple[int, ...]
    first_row: int
    rows: int


def units(paths: Sequence[str], target_rows: int | None = None) -> list[Unit]:
    """Split files into units of whole row groups of about ``target_rows`` rows each
    (default :data:`ROW_GROUP_ROWS`)."""
    target_rows = ROW_GROUP_ROWS if target_rows is None else target_rows
    out: list[Unit] = []
    for index, path in enumerate(paths):
        meta = open_file(path).metadata
        group: list[int] = []
        start = row = rows = 0
        for g in range(meta.num_row_groups):
            if not group:
                start, rows = row, 0
            group.append(g)
            n = meta.row_group(g).num_rows
            rows += n
            row += n
            if rows >= target_rows:
                out.append(Unit(path, index, tuple(group), start, rows))
                group = []
        if group:
            out.append(Unit(path, index, tuple(group), start, rows))
    return out


def locate(paths: Sequence[str], key: tuple[str, str, str, str, int], before: tuple[int, int]) -> str | None:
    """Where ``key`` = (dataset, model, method, task_id, trial) first occurs before ``before``.

    ``before`` is (file index, row): the search stops there.
    """
    dataset, model, method, task_id, trial = key
    wanted = ConditionKey(dataset, model, method)
    for index, path in enumerate(paths[: before[0] + 1]):
        for batch in iter_batches(path, index):
            r = batch.rollouts
            cond = [i for i, c in enumerate(r.conditions) if c == wanted]
            tasks = [i for i, t in enumerate(r.tasks) if t == task_id]
            hit = np.isin(r.condition, cond) & np.isin(r.task, tasks) & (r.trial == trial)
            rows = np.flatnonzero(hit)
            for row in rows.tolist():
                if (index, batch.first_row + row) >= before:
                    return None
                return batch.where(row)
            if index == before[0] and batch.first_row + len(r) >= before[1]:
                return None
    return None


def read(paths: Sequence[str], options: object = None) -> list[Rollout]:
    """The registry adapter: every row as a kernel rollout (holds the whole input in memory).

    Checks PARQUET-FORMAT and that (dataset, model, method, task_id, trial) is unique.
    """
    seen: dict[tuple[str, str, str, str, int], str] = {}
    rollouts: list[Rollout] = []
    for index, path in enumerate(paths):
        for batch in iter_batches(path, index):
            r = batch.rollouts
            for row in range(len(r)):
                condition, task, trial = r.key(row)
                where = batch.where(row)
                key = (condition.dataset, condition.model, condition.method, task, trial)
                if key in seen:
                    raise InputError(where, repeated_key_message(key, seen[key]))
                seen[key] = where
                if trial < 0:
                    raise InputError(where, f"'trial' must be >= 0: {trial}")
                code = int(r.label[row])
                try:
                    outcome = Outcome(
                        T=int(r.T[row]),
                        fed=int(r.fed[row]),
                        label=None if code == NO_LABEL else LABEL_ORDER[code],
                    )
                except ValueError as exc:
                    raise InputError(where, str(exc)) from None
                rollouts.append(Rollout(condition, task, trial, outcome, bool(r.Y[row])))
            if batch.error is not None:
                raise batch.error
    if not rollouts:
        raise InputError(", ".join(paths) or "<no input>", "no records found")
    return rollouts


def schema() -> pa.Schema:
    """The schema :func:`write` uses: dictionary-encoded strings, int64 integers."""
    pa, _, _ = _pyarrow()
    text = pa.dictionary(pa.int32(), pa.string())
    return pa.schema(
        [
            ("dataset", text),
            ("model", text),
            ("method", text),
            ("task_id", text),
            ("trial", pa.int64()),
            ("T", pa.int64()),
            ("fed", pa.int64()),
            ("label", text),
            ("success", pa.bool_()),
        ]
    )


def to_table(batch: RolloutArrays) -> pa.Table:
    """A batch of rollouts as an Arrow table of :func:`schema`."""
    pa, _, _ = _pyarrow()
    text = pa.string()

    def dictionary(index: IndexArray, values: Sequence[str]) -> Any:
        return pa.DictionaryArray.from_arrays(pa.array(index, pa.int32()), pa.array(list(values), text))

    conds = batch.conditions
    label_names = [label.value for label in LABEL_ORDER]
    no_label = batch.label == NO_LABEL
    label = pa.DictionaryArray.from_arrays(
        pa.array(np.where(no_label, 0, batch.label).astype(np.int32), pa.int32(), mask=no_label),
        pa.array(label_names, text),
    )
    return pa.Table.from_arrays(
        [
            dictionary(batch.condition, [c.dataset for c in conds]),
            dictionary(batch.condition, [c.model for c in conds]),
            dictionary(batch.condition, [c.method for c in conds]),
            dictionary(batch.task, batch.tasks),
            pa.array(batch.trial, pa.int64()),
            pa.array(batch.T, pa.int64()),
            pa.array(batch.fed, pa.int64()),
            label,
            pa.array(batch.Y, pa.bool_()),
        ],
        schema=schema(),
    )


def write(batches: Iterable[RolloutArrays], path: str, row_group_rows: int = ROW_GROUP_ROWS) -> int:
    """Write batches of rollouts to ``path``; returns the number of rows (see :func:`write_tables`)."""
    return write_tables((to_table(batch) for batch in batches if len(batch)), path, row_group_rows)


def write_tables(tables: Iterable[pa.Table], path: str, row_group_rows: int = ROW_GROUP_ROWS) -> int:
    """Write Arrow tables of :func:`schema` to ``path`` as one file; returns the number of rows.

    Written atomically (:func:`~prefixexec.adapters.files.atomic_path`): nothing is left at
    ``path`` when an input raises. Row groups hold ``row_group_rows`` rows (the last may
    hold fewer); each row group's string columns get one dictionary (``unify_dictionaries``), so
    that readers decode them as dictionary pages, about twice as fast.
    """
    from pathlib import Path

    from .files import atomic_path, output_directory

    pa, _, pq = _pyarrow()
    output_directory(path)
    rows = 0
    pending: list[Any] = []
    pending_rows = 0
    with atomic_path(Path(path), suffix=".parquet") as tmp:
        with pq.ParquetWriter(tmp, schema(), **WRITE_OPTIONS) as writer:

            def flush(table: Any) -> None:
                writer.write_table(table.unify_dictionaries().combine_chunks(), row_group_size=row_group_rows)

            for table in tables:
                pending.append(table)
                pending_rows += table.num_rows
                rows += table.num_rows
                while pending_rows >= row_group_rows:
                    whole = pa.concat_tables(pending)
                    flush(whole.slice(0, row_group_rows))
                    rest = whole.slice(row_group_rows)
                    pending, pending_rows = [rest], rest.num_rows
            if pending_rows:
                flush(pa.concat_tables(pending))
    return rows


__all__ = [
    "BATCH_ROWS",
    "COLUMNS",
    "ROW_GROUP_ROWS",
    "WRITE_OPTIONS",
    "Batch",
    "Unit",
    "batch_columns",
    "check_schema",
    "iter_batches",
    "locate",
    "open_file",
    "read",
    "schema",
    "to_table",
    "units",
    "write",
    "write_tables",
]
