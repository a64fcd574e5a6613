"""What a report shows, computed once and rendered by every writer (spec: spec/report.md).

:func:`build_report` turns scored conditions (:class:`~prefixexec.inference.ConditionResult`)
and the rollouts they came from into a :class:`Report`: blocks of one dataset x model, one row
per method, with the costs the records carry. :func:`main_table`, :func:`checkpoint_table` and
:func:`label_table` shape a block into a :class:`Table` of :class:`Cell` values (printed text,
interval, bold flag) that the Markdown, LaTeX, CSV and HTML writers all share, so the four
formats cannot disagree. Point estimates stay exact (``Fraction``); floats appear only in
intervals and printed text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from types import MappingProxyType

import attrs

from prefixexec.adapters.harness import HarnessLog
from prefixexec.inference import ConditionResult
from prefixexec.kernel import LABEL_KEYS, ConditionKey, ConditionMetrics, Rollout
from prefixexec.numbers import half_up, interval

#: Decimals of every printed ratio (as in the paper's Table 2).
DIGITS = 2
#: What the tables print for an undefined value (CONV-UNDEFINED).
NA = "n/a"
#: The cost fields a record may carry (REC-FORMAT ``cost``), with their column titles.
COST_FIELDS: tuple[tuple[str, str], ...] = (("tokens", "mean tokens"), ("latency_s", "mean latency (s)"))
#: Default PEC checkpoints (the paper's Table G.1 reports early depths).
DEFAULT_CHECKPOINTS: tuple[int, ...] = (1, 2, 4, 8)
#: Figure widths (REP-FIG-SIZE): one column of a two-column paper, or the page's text width.
FIGURE_SIZES: tuple[str, ...] = ("single", "double")
#: What a figure panel holds (REP-PANEL): a dataset (its models in one axis) or a dataset x model.
PANELS: tuple[str, ...] = ("dataset", "model")

Interval = tuple[float, float] | None


def _checkpoints(value: Sequence[int]) -> tuple[int, ...]:
    return tuple(sorted(set(value)))


@attrs.frozen(slots=True)
class ReportOptions:
    """Choices that change what the report shows (not the numbers).

    ``note`` is printed at the top of every readable output (the demo uses it to say that its
    agents are simulated); ``max_depth`` caps the depth axis of the PEC figure; ``eligible``
    adds the dashed PEC_elig(k) lines.
    """

    checkpoints: tuple[int, ...] = attrs.field(default=DEFAULT_CHECKPOINTS, converter=_checkpoints)
    max_depth: int | None = attrs.field(default=None)
    eligible: bool = False
    title: str = "prefixexec report"
    note: str | None = None
    #: Interval bands in the curve figures (``--no-bands`` turns them off).
    bands: bool = True
    #: The labels figure shows shares of RR-Eligible instead of counts (``--label-shares``).
    label_shares: bool = False
    #: ``table.tex`` fits one column of a two-column paper (``--tex-compact``).
    tex_compact: bool = False
    #: One figure panel per ``dataset`` (default) or per dataset x ``model`` (``--panel``, REP-PANEL).
    panel: str = attrs.field(default="dataset", validator=attrs.validators.in_(PANELS))
    #: Figure width, ``single`` or ``double`` column (``--figure-size``, REP-FIG-SIZE).
    figure_size: str = attrs.field(default="double", validator=attrs.validators.in_(FIGURE_SIZES))

    @checkpoints.validator
    def _check_checkpoints(self, attribute: attrs.Attribute[tuple[int, ...]], value: tuple[int, ...]) -> None:
        if not value or any(k < 1 for k in value):
            raise ValueError(f"'checkpoints' must be depths >= 1: {value}")

    @max_depth.validator
    def _check_max_depth(self, attribute: attrs.Attribute[int | None], value: int | None) -> None:
        if value is not None and value < 1:
            raise ValueError(f"'max_depth' must be >= 1: {value}")


@attrs.frozen(slots=True)
class Cost:
    """The mean of one cost field over the rollouts of a condition that carry it.

    ``n`` rollouts carry the field; ``mean`` is exact (each value is read as the exact rational
    of its double, so the mean does not depend on summation order).
    """

    n: int
    mean: Fraction


@attrs.frozen(slots=True)
class Row:
    """One condition of the report: its scores and its costs (field -> Cost or None)."""

    result: ConditionResult
    costs: Mapping[str, Cost | None]

    @property
    def key(self) -> ConditionKey:
        return self.result.key

    @property
    def metrics(self) -> ConditionMetrics:
        return self.result.metrics


@attrs.frozen(slots=True)
class Block:
    """The conditions of one dataset x model, one row per method (sorted by method)."""

    dataset: str
    model: str
    rows: tuple[Row, ...]

    @property
    def name(self) -> str:
        return f"{self.dataset} / {self.model}"


def _rollout_tuple(value: Sequence[Rollout]) -> tuple[Rollout, ...]:
    return tuple(value)


@attrs.frozen(slots=True)
class Report:
    """Everything the writers need: blocks, signature, options and which columns exist."""

    signature: str
    options: ReportOptions
    blocks: tuple[Block, ...]
    #: Intervals were computed (``--bootstrap`` > 0).
    intervals: bool
    #: The cost fields that at least one rollout carries (REP-COST), in COST_FIELDS order.
    cost_fields: tuple[str, ...]
    #: B, seed and level of the intervals (for captions); None when intervals are off.
    bootstrap: tuple[int, int, float] | None = None
    #: The rollouts, in input order: the evidence of the drill-down (OUT-ROLLOUTS, REP-DRILL).
    rollouts: tuple[Rollout, ...] = attrs.field(default=(), converter=_rollout_tuple, eq=False, repr=False)
    #: The harness errors read (HARNESS-REPORT); ``None`` for an adapter that records none.
    harness: HarnessLog | None = attrs.field(default=None, eq=False, repr=False)

    def harness_lines(self) -> list[str]:
        """The harness errors per condition, one line each (as under ``score``'s table)."""
        if self.harness is None:
            return []
        from prefixexec.adapters.harness import footer_lines

        return footer_lines(self.harness, {row.result.key: row.result.metrics.N for row in self.rows})

    @property
    def rows(self) -> tuple[Row, ...]:
        return tuple(r for b in self.blocks for r in b.rows)


def condition_costs(rollouts: Sequence[Rollout]) -> dict[ConditionKey, dict[str, Cost | None]]:
    """Per condition, the exact mean of each cost field over the rollouts that carry it."""
    sums: dict[ConditionKey, dict[str, list[Fraction]]] = {}
    for r in rollouts:
        fields = sums.setdefault(r.condition, {name: [] for name, _ in COST_FIELDS})
        cost = r.meta.get("cost")
        if isinstance(cost, Mapping):
            for name, _ in COST_FIELDS:
                value = cost.get(name)
                if isinstance(value, int | float) and not isinstance(value, bool):
                    fields[name].append(Fraction(value))
    return {
        key: {
            name: (Cost(len(values), sum(values, Fraction(0)) / len(values)) if values else None)
            for name, values in fields.items()
        }
        for key, fields in sums.items()
    }


def build_report(
    rollouts: Sequence[Rollout],
    results: Sequence[ConditionResult],
    signature: str,
    options: ReportOptions,
    bootstrap: tuple[int, int, float] | None = None,
    harness: HarnessLog | None = None,
) -> Report:
    """Arrange scored conditions into dataset x model blocks (sorted), with their costs."""
    costs = condition_costs(rollouts)
    grouped: dict[tuple[str, str], list[Row]] = {}
    empty: dict[str, Cost | None] = {name: None for name, _ in COST_FIELDS}
    for result in sorted(results, key=lambda r: r.key):
        k = result.key
        grouped.setdefault((k.dataset, k.model), []).append(
            Row(result, MappingProxyType(costs.get(k, empty)))
        )
    blocks = tuple(Block(d, m, tuple(rows)) for (d, m), rows in grouped.items())
    present = tuple(
        name
        for name, _ in COST_FIELDS
        if any(row.costs.get(name) is not None for b in blocks for row in b.rows)
    )
    return Report(
        signature=signature,
        options=options,
        blocks=blocks,
        intervals=all(r.intervals is not None for r in results) and bool(results),
        cost_fields=present,
        bootstrap=bootstrap,
        rollouts=tuple(rollouts),
        harness=harness,
    )


# ----------------------------------------------------------------------------------- cells


def _fixed(value: float | Fraction, digits: int) -> str:
    return half_up(value, digits)


def fmt(value: Fraction | float | int | None, digits: int = DIGITS) -> str:
    """A ratio printed to ``digits`` decimals (``n/a`` when undefined); ints print as ints."""
    if value is None:
        return NA
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return _fixed(value, digits)


def fmt_interval(pair: Interval, digits: int = DIGITS) -> str:
    """``[0.63, 0.76]``, or the empty string when there is no interval."""
    return interval(pair, digits)


def percent(part: int, whole: int) -> str:
    """``93.2%`` (one decimal), ``n/a`` when ``whole`` is 0."""
    return NA if whole == 0 else f"{100 * part / whole:.1f}%"


@attrs.frozen(slots=True)
class Cell:
    """One table entry: the exact value, its printed text, its interval and whether it is bold."""

    value: Fraction | int | None
    text: str
    interval: Interval = None
    bold: bool = False
    #: Extra text after the value and interval (e.g. the coverage of a cost column).
    suffix: str = ""


@attrs.frozen(slots=True)
class Column:
    """A table column: machine name (CSV), title (readable tables), and whether it is bolded."""

    key: str
    title: str
    bolded: bool


@attrs.frozen(slots=True)
class Table:
    """One block of a table: a title, the columns and one row of cells per method."""

    title: str
    dataset: str
    model: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[str, tuple[Cell, ...]], ...]


def best_flags(texts: Sequence[str]) -> list[bool]:
    """REP-BOLD: which printed values are the column's largest at the printed precision.

    Ties at the printed precision are all bold; ``n/a`` is never bold; a column with fewer than
    two rows has nothing to compare and no bold.
    """
    if len(texts) < 2:
        return [False] * len(texts)
    defined = [Fraction(t) for t in texts if t != NA]
    if not defined:
        return [False] * len(texts)
    top = max(defined)
    return [t != NA and Fraction(t) == top for t in texts]


def _bolded(
    columns: Sequence[Column], rows: Sequence[tuple[str, list[Cell]]]
) -> tuple[tuple[str, tuple[Cell, ...]], ...]:
    out = [(method, list(cells)) for method, cells in rows]
    for j, column in enumerate(columns):
        if not column.bolded:
            continue
        flags = best_flags([cells[j].text for _, cells in out])
        for (_, cells), flag in zip(out, flags, strict=True):
            cells[j] = attrs.evolve(cells[j], bold=flag)
    return tuple((method, tuple(cells)) for method, cells in out)


def _ratio_cell(value: Fraction | None, interval: Interval) -> Cell:
    return Cell(value, fmt(value), interval if value is not None else None)


#: The main table's columns (the key is the metric's name in ConditionMetrics and the CSV).
MAIN_COLUMNS: tuple[Column, ...] = (
    Column("N", "N", False),
    Column("TER", "TER", True),
    Column("mean_FED", "mean FED", True),
    Column("AUC_PEC", "AUC-PEC", True),
    Column("RR_eligible", "RR-Eligible", False),
    Column("RR", "RR", True),
    Column("success", "success", True),
)


def _cost_cell(cost: Cost | None, N: int, name: str) -> Cell:
    if cost is None:
        return Cell(None, NA)
    digits = 0 if name == "tokens" else DIGITS
    suffix = "" if cost.n == N else f"({cost.n}/{N})"
    return Cell(cost.mean, fmt(cost.mean, digits), suffix=suffix)


def main_table(block: Block, report: Report) -> Table:
    """REP-TABLE: TER, mean FED, AUC-PEC, RR-Eligible, RR, success with intervals (RR: Wilson)."""
    columns = (
        *MAIN_COLUMNS,
        *(Column(name, title, False) for name, title in COST_FIELDS if name in report.cost_fields),
    )
    rows: list[tuple[str, list[Cell]]] = []
    for row in block.rows:
        m, ivs = row.metrics, row.result.intervals
        scal: Mapping[str, Interval] = ivs.scalars if ivs is not None else {}
        cells = [
            Cell(m.N, str(m.N)),
            _ratio_cell(m.TER, scal.get("TER")),
            _ratio_cell(m.mean_FED, scal.get("mean_FED")),
            _ratio_cell(m.AUC_PEC, scal.get("AUC_PEC")),
            Cell(m.RR_eligible, str(m.RR_eligible)),
            _ratio_cell(m.RR, ivs.RR_wilson if ivs is not None else None),
            _ratio_cell(m.success, scal.get("success")),
        ]
        cells += [_cost_cell(row.costs.get(name), m.N, name) for name in report.cost_fields]
        rows.append((row.key.method, cells))
    return Table(block.name, block.dataset, block.model, columns, _bolded(columns, rows))


def pec_at(m: ConditionMetrics, k: int) -> Fraction:
    """PEC(k), 0 beyond the condition's longest horizon (INV-PEC-ZERO)."""
    return m.PEC[k - 1] if k <= len(m.PEC) else Fraction(0)


def pec_interval(row: Row, k: int) -> Interval:
    """The bootstrap interval of PEC(k); every replicate is 0 beyond the longest horizon."""
    ivs = row.result.intervals
    if ivs is None:
        return None
    return ivs.PEC[k - 1] if k <= len(ivs.PEC) else (0.0, 0.0)


def checkpoint_table(block: Block, report: Report) -> Table:
    """REP-CHECKPOINTS: PEC(k) at the chosen depths, with intervals, bold per column."""
    columns = tuple(Column(f"PEC@{k}", f"PEC@{k}", True) for k in report.options.checkpoints)
    rows = [
        (
            row.key.method,
            [_ratio_cell(pec_at(row.metrics, k), pec_interval(row, k)) for k in report.options.checkpoints],
        )
        for row in block.rows
    ]
    return Table(block.name, block.dataset, block.model, columns, _bolded(columns, rows))


#: Readable titles of the label keys (LABEL_KEYS order).
LABEL_TITLES: Mapping[str, str] = {
    "schema": "schema",
    "dependency": "dependency",
    "precondition": "precondition",
    "state_consistency": "state consistency",
    "information": "information",
    "unlabelled": "unlabelled",
}


def label_table(block: Block) -> Table:
    """REP-LABELS: first-failure label counts and their shares of RR-Eligible."""
    columns = (
        Column("RR_eligible", "RR-Eligible", False),
        *(Column(key, LABEL_TITLES[key], False) for key in LABEL_KEYS),
    )
    rows: list[tuple[str, list[Cell]]] = []
    for row in block.rows:
        m = row.metrics
        counts = m.label_counts
        cells = [Cell(m.RR_eligible, str(m.RR_eligible))]
        for key in LABEL_KEYS:
            cells.append(
                Cell(counts[key], str(counts[key]), suffix=f"({percent(counts[key], m.RR_eligible)})")
            )
        rows.append((row.key.method, cells))
    return Table(block.name, block.dataset, block.model, columns, _bolded(columns, rows))


@attrs.frozen(slots=True)
class DecompositionRow:
    """Eq. (12) for one condition, with the exact check of the identity.

    ``combined`` is ``q s + (1 - q) r`` where a term whose weight is 0 is dropped (s is
    undefined only when q = 0, r only when q = 1), so the identity is checked at every q.
    """

    method: str
    N: int
    fully_executable: int
    q: Fraction
    s: Fraction | None
    r: Fraction | None
    success: Fraction
    combined: Fraction
    successes: int
    uninterrupted: int
    recovered: int
    rr_eligible: int

    @property
    def holds(self) -> bool:
        return self.combined == self.success

    @property
    def after_failure(self) -> Fraction | None:
        """Share of the successes that came after a first failure (``None`` without successes)."""
        return None if self.successes == 0 else Fraction(self.recovered, self.successes)


def decomposition_row(row: Row) -> DecompositionRow:
    """REP-DECOMP: q = TER, s, r = RR and success = q s + (1 - q) r, from the kernel's counts."""
    m = row.metrics
    d = m.decomposition
    qs = Fraction(0) if d.s is None else d.q * d.s
    rest = Fraction(0) if d.r is None else (1 - d.q) * d.r
    return DecompositionRow(
        method=row.key.method,
        N=m.N,
        fully_executable=d.fully_executable,
        q=d.q,
        s=d.s,
        r=d.r,
        success=m.success,
        combined=qs + rest,
        successes=d.uninterrupted + d.recovered,
        uninterrupted=d.uninterrupted,
        recovered=d.recovered,
        rr_eligible=d.rr_eligible,
    )
