"""Every command as a Python function, with the command's options and its ``--json`` result
(spec: API-COMMANDS, API-RESULT, API-DISPLAY).

``prefixexec.compare(source, baseline="react", bootstrap=500)`` runs what
``prefixexec compare FILE... --baseline react --bootstrap 500 --json`` runs: the keywords are
the command's long options (``--error-pattern`` is ``error_pattern``), checked by the command's
own parser (its types, choices and bounds), and the :class:`Result` holds the ``--json``
document, byte for byte in :meth:`Result.to_json`, with the exit status the command would end
with (``status``: 1 for differences found, 2 for nothing checked). Bad input raises
:class:`prefixexec.InputError` (a ``ValueError``); an unknown or mistyped keyword a ``TypeError``
or ``ValueError`` naming it. ``source`` is what :func:`prefixexec.score` takes: paths, record
dicts, or a pandas or polars DataFrame of outcomes.

A new command gets its function by one line, ``def name(...): return call("name", ...)``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

import attrs

from prefixexec.adapters.errors import ArgumentError as ArgumentError  # re-exported: prefixexec.ArgumentError

#: Options every function sets itself: the document is always JSON, nothing goes to stderr.
FIXED = ("json", "quiet", "help")


def _command_parser(command: str) -> argparse.ArgumentParser:
    from prefixexec.cli import build_parser

    top = build_parser(command)
    sub = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    parser: argparse.ArgumentParser = sub.choices[command]
    return parser


def _keyword(action: argparse.Action) -> str | None:
    """The keyword of an option: its long name without dashes (``--error-pattern``: ``error_pattern``)."""
    longs = [o for o in action.option_strings if o.startswith("--")]
    return longs[0][2:].replace("-", "_") if longs else None


def command_options(command: str) -> dict[str, str]:
    """The keyword options of ``command``'s function, with their help text (API-COMMANDS)."""
    found = {}
    for action in _command_parser(command)._actions:
        keyword = _keyword(action)
        if keyword is not None and keyword not in FIXED:
            found[keyword] = action.help or ""
    return found


def _converted(action: argparse.Action, keyword: str, value: object) -> object:
    """One option value checked and converted as the command line's parser does it: what the
    command line takes as text the function takes as text or as the number it spells
    (``explain(path, task=20)`` is ``--task 20``)."""
    if action.type is None:
        if isinstance(value, int | float) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str | os.PathLike):
            raise ArgumentError(keyword, f"{keyword!r} must be a string, got {type(value).__name__}")
        result: object = os.fspath(value)
    else:
        if isinstance(value, bool) or value is None:
            raise ArgumentError(keyword, f"{keyword!r} must be given as a number or text, got {value!r}")
        text = ",".join(str(v) for v in value) if isinstance(value, list | tuple) else str(value)
        try:
            result = action.type(text)  # type: ignore[operator]  # argparse's type is any callable
        except (argparse.ArgumentTypeError, ValueError, TypeError) as exc:
            raise ValueError(f"{keyword!r}: {exc}") from None
    if action.choices is not None and result not in action.choices:
        choices = ", ".join(repr(c) for c in action.choices)
        raise ValueError(f"{keyword!r} must be one of {choices}: {value!r}")
    return result


#: A command's arguments by ``dest``, as its parser would give them (the command line makes its
#: typed options of them: :func:`prefixexec.cli.run_values`, API-PIPELINE).
Values = dict[str, Any]


def _set(args: Values, action: argparse.Action, keyword: str, value: object) -> None:
    if action.nargs == 0:  # a flag
        if not isinstance(value, bool):
            raise ArgumentError(keyword, f"{keyword!r} is a flag: True or False, got {value!r}")
        args[action.dest] = action.const if value else action.default
    elif isinstance(action, argparse._AppendAction):
        items = list(value) if isinstance(value, list | tuple) else [value]
        converted = [_converted(action, keyword, v) for v in items]
        if isinstance(action, argparse._ExtendAction):  # each value a list, joined as the parser does
            converted = [item for v in converted for item in cast(list[object], v)]
        args[action.dest] = converted
    else:
        args[action.dest] = _converted(action, keyword, value)


def values(
    command: str, positional: Mapping[str, object], given: Mapping[str, object], function: str
) -> Values:
    """The arguments of ``command`` from its positional values and keyword options, with the
    parser's defaults for the rest; an unknown or missing option is a ``TypeError``."""
    parser = _command_parser(command)
    args: Values = {}
    by_keyword: dict[str, argparse.Action] = {}
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        default = action.default
        args[action.dest] = list(default) if isinstance(default, list) else default
        keyword = _keyword(action)
        if keyword is not None and keyword not in FIXED:
            by_keyword[keyword] = action
    args.update(positional)
    args.update(parser._defaults)
    unknown = sorted(set(given) - set(by_keyword))
    if unknown:
        known = ", ".join(sorted(by_keyword))
        raise TypeError(f"{function}() got unknown option(s) {', '.join(unknown)}; its options: {known}")
    for keyword, value in given.items():
        if value is not None:
            _set(args, by_keyword[keyword], keyword, value)
    for keyword, action in by_keyword.items():
        if action.required and args[action.dest] is None:
            raise TypeError(f"{function}() needs the option {keyword}")
    return args


def _source(args: Values, source: object) -> None:
    """``source`` as the command's input files, or as rollouts read here (API-SOURCES)."""
    from prefixexec.api import _frame_records, _is_frame, from_records, records_of

    records: Sequence[Mapping[str, Any]] | None = None
    if _is_frame(source):
        records, shown = _frame_records(source), "<DataFrame>"
    elif isinstance(source, str | os.PathLike):
        args["files"] = [os.fspath(source)]
        return
    elif isinstance(source, Iterable):
        items: list[Any] = list(source)
        if items and all(isinstance(i, Mapping) for i in items):
            records, shown = records_of(items), "<records>"
        elif all(isinstance(i, str | os.PathLike) for i in items):
            args["files"] = [os.fspath(i) for i in items]
            return
    if records is None:
        raise ArgumentError(
            "source", "'source' must be paths, record dicts, or a pandas/polars DataFrame of outcomes"
        )
    if args.get("adapter", "auto") not in ("auto", "records"):
        raise TypeError("record dicts and data frames are read as records: no other adapter applies")
    args["_rollouts"] = from_records(records)
    args["adapter"] = "records"
    args["files"] = [shown]


def _document(command: str, text: str) -> Any:
    if command == "explain":  # --json prints one object per line
        return [json.loads(line) for line in text.split("\n") if line.strip()]  # HOSTILE-LINES
    return json.loads(text)


def run(command: str, args: Values) -> Result:
    """Run a command on prepared arguments, reading its ``--json`` output (API-RESULT): the
    command line makes its typed options and runs it (:func:`prefixexec.cli.run_values`)."""
    from prefixexec.adapters.limits import EXIT_SIGINT, EXIT_SIGTERM
    from prefixexec.cli import run_values

    buffer = io.StringIO()
    status = run_values(command, {**args, "json": True, "quiet": True}, output=buffer)
    if status in (EXIT_SIGINT, EXIT_SIGTERM):
        raise KeyboardInterrupt
    text = buffer.getvalue()
    return Result(command, _document(command, text), status, text)


def arguments(
    name: str,
    source: object = None,
    positional: Mapping[str, object] | None = None,
    /,
    **given: object,
) -> Values:
    """The arguments of command ``name`` with ``source`` as its input and ``given`` as its options."""
    args = values(name, positional or {}, given, name.replace("-", "_"))
    if source is not None:
        _source(args, source)
    return args


def call(
    name: str, source: object = None, positional: Mapping[str, object] | None = None, /, **given: object
) -> Result:
    """Run command ``name`` with ``source`` as its input files and ``given`` as its options."""
    return run(name, arguments(name, source, positional, **given))


# ---------------------------------------------------------------------------------------------
# Results (API-RESULT, API-DISPLAY)


def _list_of_objects(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, Mapping) for v in value)


@attrs.frozen(slots=True)
class Result:
    """A command's result: its ``--json`` document, its exit status, and tables of it.

    ``result["key"]`` reads the document; :meth:`tables` names its tables (lists of objects),
    :meth:`rows`, :meth:`to_pandas` and :meth:`to_polars` give one as rows or a data frame; a
    notebook shows the first table (``_repr_html_``).
    """

    command: str
    document: Any = attrs.field(repr=False, eq=False)
    status: int
    text: str = attrs.field(repr=False)

    @property
    def ok(self) -> bool:
        """The command would exit with status 0 (no difference found, the audit passed, ...)."""
        return self.status == 0

    def to_json(self) -> str:
        """The command's ``--json`` output, byte for byte."""
        return self.text

    def __getitem__(self, key: str) -> Any:
        return self.document[key]

    def tables(self) -> tuple[str, ...]:
        """The names of the document's tables (the first is the default)."""
        doc = self.document
        if self.command == "explain":
            return ("rollouts",)
        if self.command == "sample":
            return ("tasks", "strata")
        if self.command == "leaderboard" and isinstance(doc, Mapping) and "datasets" in doc:
            return ("systems", "kendall", "flips", "datasets")  # LB-API: one row per system first
        if self.command == "crosscheck" and isinstance(doc, Mapping) and "conditions" in doc:
            return ("conditions", "values")  # a results table; a claims file's document has "claims"
        if isinstance(doc, Mapping):
            found = tuple(k for k, v in doc.items() if _list_of_objects(v) and v)
            return found or ("document",)
        return ("document",)

    def rows(self, table: str | None = None) -> list[dict[str, Any]]:
        """One table of the document as flat rows (nested objects spread over ``key.inner``)."""
        from prefixexec.notebook import flatten, uniform

        name = table or self.tables()[0]
        if name not in self.tables():
            raise ValueError(f"'table' must be one of {', '.join(self.tables())}: {name!r}")
        doc = self.document
        if self.command == "explain":
            found: list[Mapping[str, Any]] = doc
        elif self.command == "sample" and name == "tasks":
            found = [{"task_id": t} for t in doc["tasks"]]
        elif self.command == "sample":
            found = [{"stratum": k, **v} for k, v in doc["strata"].items()]
        elif self.command == "leaderboard" and name == "systems":
            from prefixexec.ranking.tables import system_rows

            found = []
            found.extend(system_rows(doc))
        elif self.command == "leaderboard" and name in ("kendall", "flips"):
            found = [{"dataset": ds["dataset"], **item} for ds in doc["datasets"] for item in ds[name]]
        elif self.command == "crosscheck" and "conditions" in doc and name == "values":
            keys = ("dataset", "model", "method")
            found = [{**{k: c[k] for k in keys}, **v} for c in doc["conditions"] for v in c["values"]]
        elif self.command == "crosscheck" and "conditions" in doc:
            found = [{k: v for k, v in c.items() if k != "values"} for c in doc["conditions"]]
        elif name == "document":
            found = [doc] if isinstance(doc, Mapping) else []
        else:
            found = doc[name]
        return uniform([flatten(r) for r in found])

    def to_pandas(self, table: str | None = None) -> Any:
        """:meth:`rows` as a pandas DataFrame (the ``[pandas]`` extra)."""
        from prefixexec.extras import require

        require("pandas", "Result.to_pandas()")
        import importlib

        return importlib.import_module("pandas").DataFrame(self.rows(table))

    def to_polars(self, table: str | None = None) -> Any:
        """:meth:`rows` as a polars DataFrame (the ``[polars]`` extra)."""
        from prefixexec.extras import require

        require("polars", "Result.to_polars()")
        import importlib

        return importlib.import_module("polars").DataFrame(self.rows(table), infer_schema_length=None)

    def _repr_html_(self) -> str:
        from html import escape

        from prefixexec.notebook import html_table

        head = f"<p><b>prefixexec {escape(self.command)}</b>: exit status {self.status}</p>"
        if self.command == "leaderboard" and "systems" in self.tables():
            from prefixexec.ranking.html import leaderboard_section

            # The report page's leaderboard tables: the cells the command prints (API-CONSISTENT).
            return head + "".join(leaderboard_section(self.document, None))
        doc = self.document
        if self.command == "compare" and isinstance(doc, Mapping) and "comparisons" in doc:
            from prefixexec.notebook import compare_html

            return head + compare_html(doc)  # the cells the command prints (API-CONSISTENT)
        return head + html_table(self.rows(), title=self.tables()[0])

    def __repr__(self) -> str:
        from prefixexec.numbers import count

        tables = ", ".join(f"{t}: {count(len(self.rows(t)), 'row')}" for t in self.tables())
        return f"Result({self.command!r}, status={self.status}, {tables})"


# ---------------------------------------------------------------------------------------------
# The functions (API-COMMANDS): one per command, its options as keywords


def compare(source: object, *, baseline: str, **options: object) -> Result:
    """``prefixexec compare FILE... --baseline KEY=VALUE``: paired differences against a baseline."""
    return call("compare", source, baseline=baseline, **options)


def leaderboard(source: object, **options: object) -> Result:
    """``prefixexec leaderboard PATH...``: the systems ranked by success and by each prefix metric,
    with rank intervals, Kendall's tau-b and the pairs whose order differs (LB-API; the result's
    document is LB-JSON, table ``datasets``). ``source`` may be submission folders, a folder of
    them or BFCL's ``result/`` folder (LB-FOLDER): the document then also holds ``claims``, every
    claim of every submission checked (LB-CLAIMS)."""
    return call("leaderboard", source, **options)


def explain(source: object, **options: object) -> Result:
    """``prefixexec explain FILE...``: each rollout's actions and verdicts (table ``rollouts``)."""
    return call("explain", source, **options)


def crosscheck(theirs: str | os.PathLike[str], source: object = (), **options: object) -> Result:
    """``prefixexec crosscheck THEIRS FILE...``: another tool's metrics next to ours, or a claims
    file against its trajectories; with ``theirs`` a submission folder or a folder of them and no
    ``source``, every submission's claims against its own trajectories (CLAIM-MANY)."""
    return call("crosscheck", source, {"theirs": os.fspath(theirs)}, **options)


def audit(adapter: str, files: Sequence[str | os.PathLike[str]] = (), **options: object) -> Result:
    """``prefixexec audit --adapter A [FILE...]``: gold trajectories and mutants (status 0, 1 or 2)."""
    return call("audit", None, {"files": [os.fspath(f) for f in files]}, adapter=adapter, **options)


def audit_table(table: str | os.PathLike[str], **options: object) -> Result:
    """``prefixexec audit-table TABLE.csv``: could integer counts produce the table's rounded numbers?"""
    return call("audit-table", None, {"table": os.fspath(table)}, **options)


def conformance(command: str, **options: object) -> Result:
    """``prefixexec conformance --command CMD``: another implementation on the conformance vectors."""
    return call("conformance", None, command=command, **options)


def convert(source: object, output: str | os.PathLike[str], **options: object) -> Result:
    """``prefixexec convert FILE... --output PATH``: the outcome table (.parquet, .csv or .jsonl)."""
    return call("convert", source, output=os.fspath(output), **options)


def sample(source: object = None, **options: object) -> Result:
    """``prefixexec sample``: the paper's stratified task sample, from ``source`` (task lists or
    result files) or ``benchmark="bfcl"`` or ``tasks=FILE`` (tables ``tasks`` and ``strata``)."""
    if source is None:
        return call("sample", None, {"files": []}, **options)
    return call("sample", source, **options)


# ---------------------------------------------------------------------------------------------
# Reports: tables, figures and the page, in memory (API-REPORT)


@attrs.frozen(slots=True)
class ReportResult:
    """What ``prefixexec report`` writes, in memory: ``files`` (name -> bytes, REP-FILES), the
    ``summary.json`` document (:meth:`to_json`, :attr:`summary`), matplotlib figures
    (:meth:`figure`), and ``folder`` when it was written."""

    model: Any = attrs.field(repr=False, eq=False)
    files: Mapping[str, bytes] = attrs.field(repr=False, eq=False)
    folder: str | None

    def to_json(self) -> str:
        """``summary.json``, byte for byte (REP-SUMMARY)."""
        return self.files["summary.json"].decode("utf-8")

    @property
    def summary(self) -> Any:
        return json.loads(self.to_json())

    def figure(self, name: str = "pec") -> Any:
        """A new :class:`matplotlib.figure.Figure`: ``pec``, ``pec_elig`` or ``labels`` (the
        report's figures; the ``[report]`` extra). ``fig.savefig(...)`` writes it in any format."""
        from prefixexec.report import figures

        makers = {"pec": figures.pec_figure, "pec_elig": figures.elig_figure, "labels": figures.labels_figure}
        if name not in makers:
            raise ValueError(f"'name' must be one of {', '.join(makers)}: {name!r}")
        from prefixexec.notebook import displayed

        return displayed(makers[name](self.model))

    def tables(self) -> tuple[str, ...]:
        """The names of the tables: ``conditions`` (summary.json's)."""
        return ("conditions",)

    def rows(self, table: str = "conditions") -> list[dict[str, Any]]:
        """``summary.json``'s conditions (flat rows; nested values as JSON text)."""
        from prefixexec.notebook import flatten

        if table != "conditions":
            raise ValueError(f"'table' must be 'conditions': {table!r}")
        return [flatten(c) for c in self.summary["conditions"]]

    def to_polars(self, table: str = "conditions") -> Any:
        from prefixexec.extras import require

        require("polars", "Report.to_polars()")
        import importlib

        return importlib.import_module("polars").DataFrame(self.rows(table), infer_schema_length=None)

    def to_pandas(self, table: str = "conditions") -> Any:
        from prefixexec.extras import require

        require("pandas", "Report.to_pandas()")
        import importlib

        return importlib.import_module("pandas").DataFrame(self.rows(table))

    def _repr_html_(self) -> str:
        """The report's own page (``report.html``, self-contained) in a frame (API-DISPLAY)."""
        from html import escape

        page = self.files["report.html"].decode("utf-8")
        return (
            f'<iframe title="prefixexec report" srcdoc="{escape(page, quote=True)}" '
            'style="width: 100%; height: 40em; border: 1px solid #ddd;"></iframe>'
        )

    def __repr__(self) -> str:
        where = f"written to {self.folder}" if self.folder else "in memory"
        from prefixexec.numbers import count

        shown = f"{count(len(self.model.rows), 'condition')}, {count(len(self.files), 'file')}"
        return f"ReportResult({shown}, {where})"


def _report(name: str, args: Values, out: str | None) -> ReportResult:
    """Run ``report`` or ``demo``'s rendering in memory (the command module's ``render`` and
    ``steps`` on its typed options), writing the folder when ``out`` is given."""
    from prefixexec.adapters.limits import EXIT_SIGINT, EXIT_SIGTERM
    from prefixexec.cli import _command_module, run_values
    from prefixexec.report.progress import Progress

    command: Any = _command_module(name)
    built: list[tuple[Any, dict[str, bytes]]] = []

    def handler(options: Any) -> int:
        progress = Progress(command.steps(), enabled=False, label=f"prefixexec {name}")
        built.append(command.render(options, progress))
        if out is not None:
            command.write(options, out, *built[0])
        elif name == "report":  # --rollouts is written without a folder too (the demo reads no input)
            from prefixexec.pipeline import write_rollout_rows

            write_rollout_rows(options.arguments.rollouts_path, built[0][0].rollouts)
        return 0

    if run_values(name, {**args, "quiet": True, "out": out}, handler) in (EXIT_SIGINT, EXIT_SIGTERM):
        raise KeyboardInterrupt
    model, files = built[0]
    return ReportResult(model, files, out)


def report(source: object, *, out: str | os.PathLike[str] | None = None, **options: object) -> ReportResult:
    """``prefixexec report FILE... --out DIR``: the report in memory, written to ``out`` when
    given; its options (``checkpoints``, ``panel``, ``figure_size``, ...) as keywords."""
    args = arguments("report", source, None, out="-", **options)
    return _report("report", args, None if out is None else os.fspath(out))


def demo(*, out: str | os.PathLike[str] | None = None, **options: object) -> ReportResult:
    """``prefixexec demo --out DIR``: BFCL gold and simulated agents (needs bfcl-eval)."""
    args = arguments("demo", None, None, out="-", **options)
    return _report("demo", args, None if out is None else os.fspath(out))
