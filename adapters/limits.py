"""Documented bounds on input (spec/hostile.md, HOSTILE-*): what a small hostile file cannot make
``prefixexec`` spend, and the checks every adapter's rollouts pass at the boundary.

Each constant names the spec ID that documents it. A value beyond a bound is bad input: an
:class:`InputError` naming the place and the bound, exit status 2, no output.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator, Sequence
from typing import IO, TYPE_CHECKING

import attrs

from .errors import InputError

if TYPE_CHECKING:
    from prefixexec.kernel import ConditionKey, Rollout
    from prefixexec.kernel.accumulator import AccumulatorSet, RolloutArrays

#: HOSTILE-HORIZON: the largest horizon T of a rollout (curves are stored and printed densely,
#: one value per depth 1..T, so the cost of a condition follows its longest horizon).
MAX_HORIZON = 100_000
#: HOSTILE-CELLS: the most cells (tasks x longest horizon) of one condition's per-task histograms,
#: and of the per-batch arrays the kernel builds: 32 MiB per int64 array. Memory then
#: stays bounded whatever T and the number of tasks are; an input that needs more is refused.
MAX_CELLS = 1 << 22
#: HOSTILE-TRIAL: the largest trial index (trials are 64-bit integers inside the kernel, which
#: adds to them; 2**62 - 1 leaves room).
MAX_TRIAL = 2**62 - 1
#: HOSTILE-TASK-ID: the range of an integer task id (it is keyed as its decimal string).
MIN_INT_ID = -(2**63)
MAX_INT_ID = 2**63 - 1
#: HOSTILE-LINE: the longest line of a JSONL file read by default (``--max-line-bytes`` raises it).
MAX_LINE_BYTES = 64 << 20
#: HOSTILE-ZIP: the largest decompressed member of an inspect ``.eval`` archive, and the largest
#: ratio of decompressed to compressed size for members above ``RATIO_FLOOR`` bytes (sizes are
#: checked as declared, and decompression never reads past the declared size).
MAX_MEMBER_BYTES = 256 << 20
MAX_RATIO = 1000
RATIO_FLOOR = 1 << 20
#: HOSTILE-DEPTH: JSON nested deeper than the parser holds (Python's recursion limit, about
#: 1,000 levels of arrays and objects) is refused with this message.
DEEP = "nested too deeply"


#: HOSTILE-STDIN: the largest JSON document read whole from standard input (a tau-bench results
#: file piped in), in characters; a file is finite and read as it is.
MAX_STDIN_DOCUMENT = 1 << 30


def read_stdin_document(stream: IO[str]) -> str:
    """All of standard input, refused beyond :data:`MAX_STDIN_DOCUMENT` characters (HOSTILE-STDIN:
    an endless pipe ends with an error instead of filling memory)."""
    check_stdin()
    text = stream.read(MAX_STDIN_DOCUMENT + 1)
    if len(text) > MAX_STDIN_DOCUMENT:
        raise InputError("<stdin>", f"longer than {MAX_STDIN_DOCUMENT} characters (HOSTILE-STDIN)")
    return text


#: The line limit in force (HOSTILE-LINE): ``--max-line-bytes`` sets it for one command.
max_line_bytes = MAX_LINE_BYTES


class LineTooLong(ValueError):
    """A line longer than :data:`max_line_bytes` (the fast path hands the file to the line reader)."""


def bounded_lines(stream: IO[str], name: str) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of a text stream; InputError for a line longer than the limit
    (HOSTILE-LINE: at most ``max_line_bytes`` characters are read before the line is refused, and
    a line of fewer characters is measured in UTF-8 bytes)."""
    limit = max_line_bytes
    number = 0
    while True:
        line = stream.readline(limit + 1)
        if not line:
            return
        number += 1
        if len(line) > limit // 4 and len(line.encode("utf-8", "surrogatepass")) > limit:
            raise too_long(f"{name}:{number}", limit)
        yield number, line


#: Notices of the running command, written only when it succeeds (HOSTILE-NOTICE); ``None``
#: outside a command (the Python API): notices are written at once.
_deferred: list[str] | None = None


def notice(line: str) -> None:
    """A reader's warning or notice, ``prefixexec: ...``, on stderr as one escaped line
    (HOSTILE-CONTROL). During a command it is held back and written after the command succeeded:
    a run that fails prints its error line and nothing else (HOSTILE-NOTICE)."""
    import sys

    from .text import printable

    text = printable(line) + "\n"
    if _deferred is None:
        sys.stderr.write(text)
    else:
        _deferred.append(text)


def check_stdin() -> None:
    """Refuse standard input from a device that never ends (HOSTILE-DEVICE): ``< /dev/zero``, or
    from a pseudo-file (HOSTILE-PSEUDO): ``< /proc/kmsg``. A terminal, a pipe or a regular file
    is read."""
    import sys

    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a file descriptor (a test's StringIO)
    info = os.fstat(fd)
    mode = info.st_mode
    if (stat.S_ISCHR(mode) and not os.isatty(fd)) or stat.S_ISBLK(mode):
        raise InputError("<stdin>", "is a device, not a stream that ends (HOSTILE-DEVICE)")
    if stat.S_ISREG(mode):
        from .inputs import fault

        problem = fault("<stdin>", info)
        if problem is not None:
            raise InputError("<stdin>", problem)


def too_long(where: str, limit: int) -> InputError:
    """The error for a line longer than ``limit`` bytes (HOSTILE-LINE)."""
    return InputError(where, f"line longer than {limit} bytes (HOSTILE-LINE; raise it with --max-line-bytes)")


def too_deep(where: str) -> InputError:
    """The error for JSON nested too deeply (HOSTILE-DEPTH)."""
    return InputError(where, f"JSON {DEEP}")


def bad_name(value: str) -> str | None:
    """What is wrong with a name (dataset, model, method, task id), or None (HOSTILE-TEXT)."""
    if not value:
        return "must be a non-empty string"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"holds a lone surrogate {value[exc.start]!r} at character {exc.start} (not Unicode text)"
    return None


def _all_good(names: list[str]) -> bool:
    """Whether every name is non-empty Unicode text (one encode for all of them)."""
    if not all(names):
        return False
    try:
        "".join(names).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def outcome_fault(T: int, trial: int) -> str | None:
    """What is wrong with a horizon and a trial index, or None (HOSTILE-HORIZON, HOSTILE-TRIAL)."""
    if T > MAX_HORIZON:
        return f"'T' = {T} exceeds the horizon limit {MAX_HORIZON} (HOSTILE-HORIZON)"
    if trial > MAX_TRIAL:
        return f"'trial' = {trial} exceeds the limit {MAX_TRIAL} = 2**62 - 1 (HOSTILE-TRIAL)"
    return None


def check_rollouts(rollouts: Sequence[Rollout], where: Sequence[str] | None = None) -> None:
    """Raise InputError for the first rollout beyond a bound or with a bad name (HOSTILE-ROLLOUT):
    every adapter's rollouts pass the same checks as records."""
    for index, rollout in enumerate(rollouts):
        c = rollout.condition
        place = where[index] if where is not None else _describe(rollout)
        for field, value in (("dataset", c.dataset), ("model", c.model), ("method", c.method)):
            fault = bad_name(value)
            if fault is not None:
                raise InputError(place, f"'{field}' {fault}")
        fault = bad_name(rollout.task_id)
        if fault is not None:
            raise InputError(place, f"'task_id' {fault}")
        fault = outcome_fault(rollout.outcome.T, rollout.trial)
        if fault is not None:
            raise InputError(place, fault)


def escape_text(text: str) -> str:
    """``text`` with lone surrogates written as ``\\udXXX`` (HOSTILE-TEXT: free text is kept, in
    a form every output can hold)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def escaped_reasons(rollouts: list[Rollout]) -> list[Rollout]:
    """``rollouts`` with lone surrogates in their failure reasons escaped (HOSTILE-TEXT)."""
    import attrs

    out = rollouts
    for index, rollout in enumerate(rollouts):
        reason = rollout.outcome.reason
        if reason is not None and escape_text(reason) is not reason:
            if out is rollouts:
                out = list(rollouts)
            outcome = attrs.evolve(rollout.outcome, reason=escape_text(reason))
            out[index] = attrs.evolve(rollout, outcome=outcome)
    return out


def cells_fault(state: AccumulatorSet, part: AccumulatorSet) -> tuple[ConditionKey, int, int] | None:
    """The first condition whose accumulator, ``state``'s merged with ``part``'s, would hold more
    than :data:`MAX_CELLS` cells (tasks x horizon), with its task count and horizon (HOSTILE-CELLS).
    The union of task sets is formed only when the sum of both sizes exceeds the bound."""
    mine = state.as_dict()
    for key, acc in part.items:
        other = mine.get(key)
        K = acc.K if other is None else max(acc.K, other.K)
        n = len(acc.tasks) + (0 if other is None else len(other.tasks))
        if n * (K + 1) <= MAX_CELLS:
            continue
        if other is not None:
            n = len(set(acc.tasks) | set(other.tasks))
        if n * (K + 1) > MAX_CELLS:
            return key, n, K
    return None


def cells_message(key: ConditionKey, n: int, K: int) -> str:
    return (
        f"condition {key.dataset} / {key.model} / {key.method} would hold {n} tasks x horizon {K} = "
        f"{n * K} cells of per-task histograms, over the limit {MAX_CELLS} (HOSTILE-CELLS)"
    )


def check_cells(rollouts: Sequence[Rollout], where: Sequence[str] | None = None) -> None:
    """HOSTILE-CELLS for a list of rollouts: no condition's tasks x longest horizon over the bound."""
    tasks: dict[ConditionKey, set[str]] = {}
    longest: dict[ConditionKey, tuple[int, int]] = {}
    for index, rollout in enumerate(rollouts):
        c = rollout.condition
        tasks.setdefault(c, set()).add(rollout.task_id)
        if rollout.outcome.T > longest.get(c, (0, 0))[0]:
            longest[c] = (rollout.outcome.T, index)
    for c, names in tasks.items():
        K, index = longest[c]
        if len(names) * (K + 1) > MAX_CELLS:
            place = where[index] if where is not None else _describe(rollouts[index])
            raise InputError(place, cells_message(c, len(names), K))


def _describe(rollout: Rollout) -> str:
    source = rollout.meta.get("source")
    if isinstance(source, str) and source:
        return source  # FILE:LINE or the record, where the adapter read it
    c = rollout.condition
    return f"{c.dataset!a} / {c.model!a} / {c.method!a}, task {rollout.task_id!a}, trial {rollout.trial}"


def first_array_fault(batch: RolloutArrays) -> tuple[int, str] | None:
    """The first row of a batch of columns beyond a bound or with a bad name, and what is wrong
    (HOSTILE-ROLLOUT; Parquet input and other column batches)."""
    import numpy as np

    n = len(batch)
    if n == 0:
        return None
    fields = ("dataset", "model", "method")
    names_ok = _all_good([*batch.tasks, *(getattr(c, f) for c in batch.conditions for f in fields)])
    if names_ok and int(batch.T.max()) <= MAX_HORIZON and int(batch.trial.max()) <= MAX_TRIAL:
        return None
    bad = (batch.T > MAX_HORIZON) | (batch.trial > MAX_TRIAL)
    if not names_ok:
        bad_conditions = [
            i for i, c in enumerate(batch.conditions) if any(bad_name(getattr(c, f)) for f in fields)
        ]
        if bad_conditions:
            bad |= np.isin(batch.condition, bad_conditions)
        bad_tasks = [i for i, t in enumerate(batch.tasks) if bad_name(t)]
        if bad_tasks:
            bad |= np.isin(batch.task, bad_tasks)
    if not bad.any():
        return None
    row = int(np.argmax(bad))
    condition = batch.conditions[int(batch.condition[row])]
    for f in fields:
        fault = bad_name(getattr(condition, f))
        if fault is not None:
            return row, f"'{f}' {fault}"
    fault = bad_name(batch.tasks[int(batch.task[row])])
    if fault is not None:
        return row, f"'task_id' {fault}"
    what = outcome_fault(int(batch.T[row]), int(batch.trial[row]))
    assert what is not None  # the row is out of bounds
    return row, what


# ---------------------------------------------------------------------------------------------
# Input files


def check_input_file(path: str) -> None:
    """Refuse an input path that cannot be read to its end without blocking: a symlink loop, a
    device, a named pipe, a pseudo-file (:func:`adapters.inputs.check_input_file`; HOSTILE-LOOP,
    HOSTILE-DEVICE, HOSTILE-FIFO, HOSTILE-PSEUDO)."""
    from .inputs import check_input_file as check

    check(path)


# ---------------------------------------------------------------------------------------------
# The command line's guard


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that writers clean up (HOSTILE-SIGNAL)."""


EXIT_SIGINT = 130
EXIT_SIGTERM = 143


def _terminate(signum: int, frame: object) -> None:
    raise Terminated


@attrs.frozen(slots=True)
class Guarding:
    """What :func:`guarded` needs of a command's arguments, made at the command line's boundary
    (``prefixexec.cli.guarding_of``; spec API-PIPELINE: the ``Namespace`` stays there): the
    files it reads (HOSTILE-OPTION-FILE: no output may replace them), its outputs by option
    (HOSTILE-OUTPUT-EARLY, checked before any input is read), the report folder, the line
    bound (HOSTILE-LINES) and whether notices are silenced (PROGRESS-QUIET)."""

    inputs: tuple[str, ...] = ()
    outputs: tuple[tuple[str, str | None], ...] = ()
    folder: str | None = None
    max_line_bytes: int | None = None
    quiet: bool = False


def guarded(handler: Callable[[], int], guarding: Guarding) -> int:
    """Run a command's handler so that no input gives a traceback (HOSTILE-*):

    outputs are checked before any input is read (HOSTILE-OUTPUT-EARLY), SIGINT and SIGTERM end
    the run with status 130 and 143 after the writers removed their temporary files
    (HOSTILE-SIGNAL), and a fault the readers did not name (nesting too deep for the parser,
    a file system error, text that cannot be encoded) becomes an InputError.
    """
    import signal
    import sys

    from .files import check_distinct, check_outputs, set_inputs

    global max_line_bytes
    max_line_bytes = guarding.max_line_bytes or MAX_LINE_BYTES
    set_inputs(list(guarding.inputs))
    outputs = guarding.outputs
    check_outputs([path for _, path in outputs], guarding.folder)
    check_distinct([(option, path) for option, path in outputs if path is not None])
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")  # HOSTILE-TEXT: lone surrogates in free text
    previous = None
    try:
        previous = signal.signal(signal.SIGTERM, _terminate)
    except ValueError:  # not the main thread
        previous = None
    global _deferred
    outer, _deferred = _deferred, []  # a command may run another in this process (conformance)
    try:
        status = handler()
        held, _deferred = _deferred or [], outer
        if not guarding.quiet:  # PROGRESS-QUIET: --quiet silences every notice
            sys.stderr.write("".join(held))
        return status
    except KeyboardInterrupt:
        sys.stderr.write("prefixexec: interrupted\n")
        return EXIT_SIGINT
    except Terminated:
        sys.stderr.write("prefixexec: terminated\n")
        return EXIT_SIGTERM
    except RecursionError:
        raise too_deep("input") from None
    except UnicodeEncodeError as exc:
        raise InputError("output", f"text holds a character that cannot be written: {exc.reason}") from None
    except MemoryError:
        raise InputError("input", "too large to hold in memory") from None
    except BrokenPipeError:
        raise
    except OSError as exc:
        where = str(exc.filename) if exc.filename is not None else "input"
        raise InputError(where, f"cannot read or write: {exc.strerror or exc}") from None
    finally:
        _deferred = outer
        set_inputs([])
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
