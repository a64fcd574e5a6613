"""The one library pipeline of every command and Python function: read -> score -> infer ->
render (spec: API-PIPELINE, API-CONSISTENT).

Each step takes typed options (:mod:`prefixexec.options`), never the command line's
``Namespace``. :func:`read` gives the accumulators (and the rollouts when they are kept),
:func:`score` the conditions' exact values and intervals with the harness errors read, and
:func:`render_score` the text or JSON that ``score`` prints; ``prefixexec.score`` calls the same
three, so the command and the function cannot give different numbers.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, TextIO

import attrs

from .options import AdapterArguments, CompareOptions, EngineOptions, InputOptions, ScoreOptions

if TYPE_CHECKING:
    from distributed import Client

    from prefixexec.adapters.harness import HarnessLog
    from prefixexec.inference import ConditionResult
    from prefixexec.kernel import Rollout
    from prefixexec.kernel.accumulator import AccumulatorSet
    from prefixexec.kernel.bootstrap import ProgressFn


#: The default engine: this process.
LOCAL = EngineOptions()


@contextlib.contextmanager
def hint_input(adapter: str, files: Sequence[str]) -> Iterator[None]:
    """DETECT-HINT for a command that found its adapter or its files itself (submission folders,
    LB-FOLDER, CLAIM-MANY): an input error raised inside names them for the command line's hint."""
    from prefixexec.adapters import InputError

    try:
        yield
    except InputError as exc:
        if exc.hint_input is None:
            exc.hint_input = (adapter, tuple(files))
        raise


def write_output(text: str, output: str | None, stream: TextIO) -> None:
    """A command's table or document: to ``output`` (written whole or not at all, its folder
    made), or to ``stream`` (standard output, or the Python API's buffer) when it is ``None``."""
    if output is None:
        stream.write(text)
        return
    from pathlib import Path

    from prefixexec.adapters.files import atomic_path, output_directory

    output_directory(output)
    with atomic_path(Path(output)) as tmp:
        Path(tmp).write_text(text, encoding="utf-8")


def read_rollouts(options: InputOptions) -> list[Rollout]:
    """Every rollout of the input (all validated before scoring), the ones ``select`` keeps
    (OUT-SELECT); the rollouts the Python API gave instead of files when it gave them."""
    from prefixexec.adapters import ADAPTERS

    if options.given is not None:
        read = list(options.given)
    else:
        read = ADAPTERS[options.adapter].read(list(options.files), options.adapter_options)
    if not options.select:
        return read
    from prefixexec.selection import parse, select

    return select(read, parse(list(options.select)))


def read_accumulators(
    options: InputOptions,
    engine: EngineOptions,
    client: Client | None = None,
    on_rows: Callable[[int], None] | None = None,
) -> AccumulatorSet:
    """Accumulate the input with the chosen engine (STREAM-SCORE, DASK-ENGINE); ``client``: the
    Dask client to use with ``--engine dask`` (default: one for this call); ``on_rows`` counts the
    rollouts read (PROGRESS-COUNT)."""
    from prefixexec.adapters import InputError

    from .engine import accumulate_dask, accumulate_input

    files = list(options.files)
    if engine.engine == "dask":
        return accumulate_dask(
            options.adapter, files, options.adapter_options, engine.scheduler, engine.workers or None, client
        )
    for flag, value in (("--scheduler", engine.scheduler), ("--workers", engine.workers)):
        if value is not None:
            raise InputError(flag, "only applies with --engine dask")
    return accumulate_input(options.adapter, files, options.adapter_options, on_rows)


def read(
    options: InputOptions,
    engine: EngineOptions = LOCAL,
    client: Client | None = None,
    on_rows: Callable[[int], None] | None = None,
) -> tuple[AccumulatorSet, list[Rollout] | None]:
    """The accumulators of the input, and its rollouts when ``select``, ``rollouts_path`` or
    ``emit_evaluations`` needs them (read and kept: the engine is this process); without
    them the input is streamed (:func:`read_accumulators`)."""
    if not options.keeps_rollouts:
        return read_accumulators(options, engine, client, on_rows), None
    from prefixexec.adapters import InputError
    from prefixexec.kernel.accumulator import AccumulatorSet

    if engine.engine == "dask":
        raise InputError(
            "--engine dask",
            "cannot be combined with --select, --rollouts or --emit-evaluations "
            "(they read every rollout here)",
        )
    if options.rollouts_path is not None:
        check_rollouts_path(options.rollouts_path)
    rollouts = read_rollouts(options)
    if on_rows is not None:
        on_rows(len(rollouts))
    return AccumulatorSet.from_rollouts(rollouts), rollouts


def check_rollouts_path(path: str) -> None:
    """``--rollouts PATH`` checked before any input is read: its format, and for ``.parquet``
    the ``[parquet]`` extra (API-EXTRAS: no output written before the error)."""
    from prefixexec.rollouts import check_path

    if check_path(path) == ".parquet":
        from prefixexec.extras import require

        require("pyarrow", "--rollouts *.parquet")


@attrs.frozen(slots=True)
class Scored:
    """What :func:`score` gives: every condition's exact values and intervals, the harness
    errors read (``None`` for an adapter that reads none, HARNESS-REPORT), the rollouts when
    they were kept, and the signature."""

    results: tuple[ConditionResult, ...]
    harness: HarnessLog | None
    rollouts: tuple[Rollout, ...] | None
    signature: str


def score(
    options: ScoreOptions,
    on_rows: Callable[[int], None] | None = None,
    on_phase: Callable[[str], None] | None = None,
    progress: ProgressFn | None = None,
) -> Scored:
    """read -> score -> infer: the conditions of the input with their intervals (OUT-JSON,
    OUT-CI), as ``score`` and ``prefixexec.score`` give them. ``on_rows``, ``on_phase`` and
    ``progress`` report progress (PROGRESS-COUNT, BOOT-PROGRESS)."""
    from prefixexec.adapters import harness

    from .inference import evaluate_accumulators
    from .scale import engine_session, scaled

    with engine_session(options.engine, options.input) as client:
        with harness.collecting() as log:  # HARNESS-REPORT: the harness errors the adapter reads
            accumulators, rollouts = read(options.input, options.engine, client, on_rows)
        if on_phase is not None:
            B = options.resamples
            on_phase(f"bootstrap ({B} resamples)" if B else "scoring")
        results = evaluate_accumulators(
            accumulators,
            options.bootstrap,
            paired=options.paired,
            **scaled(options.engine, options.resamples, accumulators, client, progress),
        )
    found = log if options.input.adapter in harness.ADAPTERS else None
    kept = None if rollouts is None else tuple(rollouts)
    return Scored(tuple(results), found, kept, str(options.signature))


def render_score(scored: Scored, as_json: bool) -> str:
    """``score``'s output: the ``--json`` document (OUT-JSON) or the table (OUT-TABLE), every
    number through :mod:`prefixexec.numbers` (API-CONSISTENT)."""
    from prefixexec.adapters import harness

    from .inference import score_document, table_intervals
    from .scoring import dumps, format_table

    if as_json:
        return dumps(score_document(scored.results, scored.signature, scored.harness))
    rows = [(r.key, r.metrics, table_intervals(r.intervals)) for r in scored.results]
    totals = {r.key: r.metrics.N for r in scored.results}
    notes: Sequence[str] = () if scored.harness is None else harness.footer_lines(scored.harness, totals)
    return format_table(rows, scored.signature, notes)


def write_rollout_rows(path: str | None, rollouts: Sequence[Rollout] | None) -> None:
    """Write ``--rollouts PATH`` when it was given (after the main output, OUT-ROLLOUTS-FILE)."""
    if path is not None and rollouts is not None:
        from prefixexec.rollouts import rows, write

        write(path, rows(rollouts))


def detect(arguments: AdapterArguments, quiet: bool, engine: str = "local") -> AdapterArguments:
    """``--adapter auto``: the arguments with the adapter detected from the input files, said on
    stderr unless ``quiet`` (DETECT-ONE, DETECT-NOTICE); rollouts the Python API gave need none."""
    if arguments.adapter != "auto" or arguments.given is not None:
        return arguments
    from prefixexec.adapters import InputError
    from prefixexec.adapters.detect import STDIN, resolve

    files = list(arguments.files)
    if engine == "dask" and STDIN in files:  # before stdin is read
        raise InputError(STDIN, "--engine dask reads files, not standard input")
    adapter, found = resolve(files)
    # Records, the format read before detection existed, is read without a word (DETECT-NOTICE).
    if adapter != "records" and not quiet:
        import sys

        from prefixexec.adapters.text import printable  # HOSTILE-CONTROL: the name is escaped

        for path, _ in found:
            notice = f"prefixexec: reading {printable(path)} as {adapter} (detected; --adapter to choose)\n"
            sys.stderr.write(notice)
    return attrs.evolve(arguments, adapter=adapter)


def compare(options: CompareOptions) -> tuple[list[Rollout] | None, str]:
    """read -> score -> infer -> render for ``compare`` (CMP-*): the paired differences against
    the baseline, as the table or the ``--json`` document, and the rollouts when they were kept
    (for ``--rollouts``)."""
    from .inference import compare_conditions, parse_baseline
    from .options import input_options, signature_of
    from .scale import available_memory
    from .scoring import dumps, format_comparisons
    from .ttyprogress import Work

    resampling = options.resampling
    with Work(options.quiet, "prefixexec compare") as work:  # PROGRESS-TTY, PROGRESS-COUNT: on a terminal
        work.phase("reading input", unit="rollouts")
        accumulators, rollouts = read(input_options(options.arguments), options.engine, None, work.advance)
        signed = signature_of(options.arguments, resampling.bootstrap, resampling.seed, resampling.level)
        key, value = parse_baseline(options.baseline)
        pairs = sum(1 for k in accumulators.as_dict() if getattr(k, key) != value)
        work.phase(f"paired bootstrap ({resampling.bootstrap} resamples)", pairs, "conditions")
        comparisons, skipped = compare_conditions(
            accumulators,
            resampling.settings,
            options.baseline,
            resampling.level,
            options.match,
            options.adjust,
            memory_limit=available_memory(),
            on_comparison=work.advance,
        )
    if options.json:
        document = {"signature": str(signed), "comparisons": comparisons, "skipped": skipped}
        return rollouts, dumps({**document, "adjust": options.adjust})
    return rollouts, format_comparisons(comparisons, skipped, str(signed))
