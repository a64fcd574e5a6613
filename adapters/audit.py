"""The generic adapter audit (spec: spec/audit.md, AUDIT-PLAN, AUDIT-GOLD, AUDIT-MUTANTS, AUDIT-REPORT).

An adapter that has gold trajectories or replayable semantics declares an :class:`AuditPlan`:
its semantics, its gold (or why it has none), the trajectories its mutation operators start
from, its operators (each with what replay must do with its mutants) and any checks of its own.
:func:`run_audit` replays the gold (every gold trajectory must be fully executable; the others
are listed as findings), makes one mutant per trajectory and operator at a seeded choice among
the operator's candidates, replays it and counts how often replay judged it as the operator
says, and reports what was checked and what was not. Nothing here imports the command line.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any, Generic, Protocol, TypeVar

import attrs

from prefixexec.kernel import Label, Outcome, Semantics, replay
from prefixexec.kernel.actions import Action

from .numbers import exact_text

T = TypeVar("T")

#: Why the adapters without an audit have none (AUDIT-NOTHING).
UNAUDITED: Mapping[str, tuple[str, ...]] = {
    "parquet": (
        "everything: outcome tables carry outcomes already replayed elsewhere (T, fed, label) and no "
        "actions, so there is no trajectory to replay, no gold and no semantics to mutate",
    ),
}


class AuditReport(Protocol):
    """What an adapter's audit returns (BFCL's report and :class:`GenericAuditReport`)."""

    @property
    def passed(self) -> bool: ...

    def render(self) -> str: ...

    def to_json(self) -> dict[str, Any]: ...


# ---------------------------------------------------------------------------------------------
# What an adapter declares (AUDIT-PLAN)


@attrs.frozen(slots=True)
class Trajectory(Generic[T]):
    """One trajectory to replay: where it comes from, the adapter's task and the actions."""

    id: str
    task: T
    actions: tuple[Action, ...]


class Expect(enum.Enum):
    """What replay must do with an operator's mutants (AUDIT-MUTANTS)."""

    #: Rejected at the mutated position, with the operator's label as primary label.
    LABEL = "label"
    #: Rejected at the mutated position or later, any label.
    AT_OR_AFTER = "at-or-after"
    #: FED equals the depth the mutant states (``Mutant.expected_fed``), as EQ-1 predicts it.
    FED = "fed"


@attrs.frozen(slots=True)
class Mutant(Generic[T]):
    """A trajectory with one mutation; ``position`` is the 1-based action it targets."""

    task: T
    actions: tuple[Action, ...]
    position: int
    change: str
    #: Only for :attr:`Expect.FED` operators: the first-error depth the mutation must produce.
    expected_fed: int | None = None


@attrs.frozen(slots=True)
class Operator(Generic[T]):
    """A mutation operator: its candidates for one trajectory and what replay must do with them.

    ``make(task, actions, outcome)`` returns every mutant the operator can make of a trajectory
    whose replay gave ``outcome`` (empty: not applicable). :attr:`Expect.LABEL` and
    :attr:`Expect.AT_OR_AFTER` operators mutate only positions the replay accepted
    (``position < outcome.fed``).
    """

    name: str
    description: str
    expect: Expect
    make: Callable[[T, tuple[Action, ...], Outcome], Sequence[Mutant[T]]]
    label: Label | None = None

    def __attrs_post_init__(self) -> None:
        if (self.expect is Expect.LABEL) != (self.label is not None):
            raise ValueError(f"operator {self.name}: a label is given exactly when expect is LABEL")

    @property
    def expected(self) -> str:
        """The expectation in words."""
        if self.expect is Expect.LABEL:
            assert self.label is not None
            return f"{self.label.value} at the mutated call"
        if self.expect is Expect.AT_OR_AFTER:
            return "rejected at or after the mutated call"
        return "FED moves to the depth EQ-1 predicts"


@attrs.frozen(slots=True)
class Check:
    """An adapter's own check: over how many items it ran and what failed (one line each)."""

    name: str
    description: str
    checked: int
    failures: tuple[str, ...] = ()


@attrs.frozen(slots=True)
class AuditPlan(Generic[T]):
    """What an adapter declares for ``prefixexec audit`` (AUDIT-PLAN).

    ``gold`` (with ``gold_kind`` saying what it is) must replay fully executable; ``None`` means
    the adapter has no gold here and ``no_gold`` says why. ``bases`` are what the operators
    mutate (default: the gold). ``checked``/``not_checked`` add the adapter's own lines to the
    report's lists.
    """

    adapter: str
    source: str
    semantics: Semantics[T, Any]
    gold: tuple[Trajectory[T], ...] | None = None
    gold_kind: str = ""
    no_gold: str | None = None
    bases: tuple[Trajectory[T], ...] | None = None
    bases_kind: str = ""
    operators: tuple[Operator[T], ...] = ()
    checks: tuple[Check, ...] = ()
    checked: tuple[str, ...] = ()
    not_checked: tuple[str, ...] = ()

    def __attrs_post_init__(self) -> None:
        if (self.gold is None) == (self.no_gold is None):
            raise ValueError("give either gold trajectories or the reason there are none (no_gold)")


# ---------------------------------------------------------------------------------------------
# The report (AUDIT-REPORT)


class Status(enum.Enum):
    """The audit's result; the command's exit status is :attr:`exit_status` (AUDIT-CLI)."""

    PASS = "pass"
    FAIL = "fail"
    NOTHING_CHECKED = "nothing-checked"

    @property
    def exit_status(self) -> int:
        return {Status.PASS: 0, Status.FAIL: 1, Status.NOTHING_CHECKED: 2}[self]


@attrs.frozen(slots=True)
class GoldFinding:
    """A gold trajectory that is not fully executable: where, at which depth, why."""

    id: str
    fed: int
    T: int
    label: str
    reason: str


@attrs.frozen(slots=True)
class GoldAudit:
    kind: str
    trajectories: int
    actions: int
    executable: int
    findings: tuple[GoldFinding, ...]

    @property
    def rate(self) -> Fraction | None:
        return None if self.trajectories == 0 else Fraction(self.executable, self.trajectories)


@attrs.frozen(slots=True)
class OperatorAudit:
    """Per operator: mutants made, caught as expected, trajectories it did not apply to, misses."""

    name: str
    description: str
    expected: str
    made: int
    caught: int
    not_applicable: int
    misses: tuple[str, ...]

    @property
    def rate(self) -> Fraction | None:
        return None if self.made == 0 else Fraction(self.caught, self.made)


@attrs.frozen(slots=True)
class GenericAuditReport:
    """What an audit checked, found and did not check (AUDIT-REPORT)."""

    adapter: str
    source: str
    seed: int
    gold: GoldAudit | None
    no_gold: str | None
    bases_kind: str
    bases: int
    operators: tuple[OperatorAudit, ...]
    checks: tuple[Check, ...]
    checked: tuple[str, ...]
    not_checked: tuple[str, ...]

    @property
    def checked_anything(self) -> bool:
        return (
            (self.gold is not None and self.gold.trajectories > 0)
            or any(o.made > 0 for o in self.operators)
            or any(c.checked > 0 for c in self.checks)
        )

    @property
    def status(self) -> Status:
        if not self.checked_anything:
            return Status.NOTHING_CHECKED
        failed = (
            (self.gold is not None and self.gold.findings)
            or any(o.caught != o.made for o in self.operators)
            or any(c.failures for c in self.checks)
        )
        return Status.FAIL if failed else Status.PASS

    @property
    def passed(self) -> bool:
        return self.status is Status.PASS

    @property
    def exit_status(self) -> int:
        return self.status.exit_status

    def render(self) -> str:
        return render(self)

    def to_json(self) -> dict[str, Any]:
        gold = self.gold
        return {
            "adapter": self.adapter,
            "source": self.source,
            "seed": self.seed,
            "status": self.status.value,
            "passed": self.passed,
            "gold": None
            if gold is None
            else {
                "kind": gold.kind,
                "trajectories": gold.trajectories,
                "actions": gold.actions,
                "fully_executable": gold.executable,
                "rate": _exact(gold.rate),
                "findings": [attrs.asdict(f) for f in gold.findings],
            },
            "no_gold": self.no_gold,
            "bases": {"kind": self.bases_kind, "trajectories": self.bases},
            "operators": [
                {
                    "operator": o.name,
                    "description": o.description,
                    "expected": o.expected,
                    "made": o.made,
                    "caught": o.caught,
                    "rate": _exact(o.rate),
                    "not_applicable": o.not_applicable,
                    "misses": list(o.misses),
                }
                for o in self.operators
            ],
            "checks": [
                {
                    "check": c.name,
                    "description": c.description,
                    "checked": c.checked,
                    "failures": list(c.failures),
                }
                for c in self.checks
            ],
            "checked": list(self.checked),
            "not_checked": list(self.not_checked),
        }


def _exact(value: Fraction | None) -> str | None:
    return None if value is None else exact_text(value)  # HOSTILE-BIGINT: at any size


def _pct(part: int, whole: int) -> str:
    return "n/a" if whole == 0 else f"{part}/{whole} ({100 * part / whole:.1f}%)"


def render(report: GenericAuditReport) -> str:
    """The readable report: gold, mutants, the adapter's checks, checked / not checked, result."""
    lines = [f"Audit of adapter {report.adapter} (mutant seed {report.seed})", f"Input: {report.source}", ""]
    gold = report.gold
    if gold is None:
        lines.append(f"Gold: none ({report.no_gold})")
    else:
        lines.append(f"Gold: {gold.kind}")
        lines.append(
            f"  trajectories {gold.trajectories}, actions {gold.actions}, "
            f"fully executable {_pct(gold.executable, gold.trajectories)}"
        )
        lines.append(f"Findings: gold trajectories that are not fully executable ({len(gold.findings)})")
        lines += [f"  {f.id}: FED {f.fed} of T {f.T} [{f.label}] {f.reason}" for f in gold.findings]
    if report.operators:
        lines += [
            "",
            f"Mutants: one per trajectory and operator, at a seeded choice ({report.bases} trajectories)",
        ]
        header = f"{'operator':<20} {'expected':<38} {'made':>5} {'n/a':>5}  caught"
        lines += [header, "-" * (len(header) + 12)]
        for o in report.operators:
            lines.append(
                f"{o.name:<20} {o.expected:<38} {o.made:>5} {o.not_applicable:>5}  {_pct(o.caught, o.made)}"
            )
        for o in report.operators:
            if o.misses:
                lines += ["", f"{o.name}: mutants not judged as expected ({len(o.misses)})"]
                lines += [f"  {m}" for m in o.misses]
    if report.checks:
        lines += ["", "Checks of the adapter"]
        for c in report.checks:
            verdict = (
                f"{len(c.failures)} failed" if c.failures else ("ok" if c.checked else "nothing to check")
            )
            lines.append(f"  {c.name}: {c.description}")
            lines.append(f"    {c.checked} checked, {verdict}")
            lines += [f"    - {failure}" for failure in c.failures]
    lines += ["", "Checked:"]
    lines += [f"  - {c}" for c in report.checked] or ["  - nothing"]
    lines += ["Not checked:"]
    lines += [f"  - {c}" for c in report.not_checked] or ["  - nothing"]
    status = report.status
    result = {Status.PASS: "PASS", Status.FAIL: "FAIL", Status.NOTHING_CHECKED: "NOTHING CHECKED"}[status]
    lines += ["", f"Result: {result}"]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# Running a plan (AUDIT-GOLD, AUDIT-MUTANTS)


def seed_of(options: Any) -> int:
    """The mutant seed the command line passed in ``options.extra['seed']`` (default 0)."""
    value = options.extra.get("seed", 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _satisfied(operator: Operator[Any], mutant: Mutant[Any], outcome: Outcome) -> bool:
    if operator.expect is Expect.LABEL:
        return outcome.fed == mutant.position and outcome.label is operator.label
    if operator.expect is Expect.AT_OR_AFTER:
        return mutant.position <= outcome.fed <= outcome.T
    return outcome.fed == mutant.expected_fed


def _describe(outcome: Outcome) -> str:
    if outcome.fully_executable:
        return f"fully executable (FED {outcome.fed} = T + 1)"
    label = outcome.label.value if outcome.label is not None else "unlabelled"
    return f"FED {outcome.fed} [{label}] {outcome.reason or ''}".rstrip()


def choose(candidates: Sequence[Mutant[T]], seed: int, trajectory_id: str, operator: str) -> Mutant[T]:
    """The mutant drawn by ``random.Random("<seed>|<trajectory id>|<operator>")`` (AUDIT-MUTANTS)."""
    return random.Random(f"{seed}|{trajectory_id}|{operator}").choice(list(candidates))


def run_audit(plan: AuditPlan[T], seed: int = 0) -> GenericAuditReport:
    """Replay the plan's gold and mutants; the report lists what was and was not checked."""
    semantics = plan.semantics
    gold_audit: GoldAudit | None = None
    gold_outcomes: list[Outcome] = []
    checked: list[str] = []
    not_checked: list[str] = []
    if plan.gold is not None:
        findings: list[GoldFinding] = []
        executable = 0
        for trajectory in plan.gold:
            outcome = replay(semantics, trajectory.task, trajectory.actions)
            gold_outcomes.append(outcome)
            if outcome.fully_executable:
                executable += 1
            else:
                label = outcome.label.value if outcome.label is not None else "unlabelled"
                findings.append(
                    GoldFinding(trajectory.id, outcome.fed, outcome.T, label, outcome.reason or "")
                )
        gold_audit = GoldAudit(
            plan.gold_kind,
            len(plan.gold),
            sum(len(t.actions) for t in plan.gold),
            executable,
            tuple(findings),
        )
        if plan.gold:
            checked.append(
                f"gold replay: {len(plan.gold)} trajectories ({plan.gold_kind}), each must be fully "
                "executable"
            )
        else:
            not_checked.append(f"gold replay: the input holds no gold trajectory ({plan.gold_kind})")
    else:
        not_checked.append(f"gold replay: {plan.no_gold}")
    bases = plan.bases if plan.bases is not None else (plan.gold or ())
    bases_kind = plan.bases_kind or plan.gold_kind
    base_outcomes = (
        gold_outcomes if plan.bases is None else [replay(semantics, t.task, t.actions) for t in plan.bases]
    )
    results: dict[str, list[tuple[Mutant[T], Outcome, str]]] = {o.name: [] for o in plan.operators}
    not_applicable: dict[str, int] = {o.name: 0 for o in plan.operators}
    for trajectory, outcome in zip(bases, base_outcomes, strict=True):
        for operator in plan.operators:
            candidates = operator.make(trajectory.task, trajectory.actions, outcome)
            if not candidates:
                not_applicable[operator.name] += 1
                continue
            mutant = choose(candidates, seed, trajectory.id, operator.name)
            if operator.expect is not Expect.FED and not 1 <= mutant.position < outcome.fed:
                raise ValueError(
                    f"operator {operator.name} mutated position {mutant.position} of {trajectory.id}, "
                    f"outside the accepted prefix (FED {outcome.fed})"
                )
            results[operator.name].append(
                (mutant, replay(semantics, mutant.task, mutant.actions), trajectory.id)
            )
    operator_audits: list[OperatorAudit] = []
    for operator in plan.operators:
        made = results[operator.name]
        caught = [r for r in made if _satisfied(operator, r[0], r[1])]
        misses = tuple(
            f"{where} call {m.position} ({m.change}): got {_describe(o)}"
            + (f", expected FED {m.expected_fed}" if operator.expect is Expect.FED else "")
            for m, o, where in made
            if not _satisfied(operator, m, o)
        )
        operator_audits.append(
            OperatorAudit(
                operator.name,
                operator.description,
                operator.expected,
                len(made),
                len(caught),
                not_applicable[operator.name],
                misses,
            )
        )
    total = sum(o.made for o in operator_audits)
    if total:
        used = [o.name for o in operator_audits if o.made]
        checked.append(
            f"{len(used)} mutation operators ({', '.join(used)}): {total} mutants of {len(bases)} "
            f"trajectories ({bases_kind}), position and label of the first rejection"
        )
    idle = [o.name for o in operator_audits if o.made == 0]
    if idle:
        not_checked.append(f"operators that found nothing to mutate in this input: {', '.join(idle)}")
    for check in plan.checks:
        if check.checked:
            checked.append(f"{check.name}: {check.checked} checked (see above)")
        else:
            not_checked.append(f"{check.name}: nothing in this input to check")
    return GenericAuditReport(
        adapter=plan.adapter,
        source=plan.source,
        seed=seed,
        gold=gold_audit,
        no_gold=plan.no_gold,
        bases_kind=bases_kind,
        bases=len(bases),
        operators=tuple(operator_audits),
        checks=plan.checks,
        checked=(*checked, *plan.checked),
        not_checked=(*not_checked, *plan.not_checked),
    )


def nothing_checked(adapter: str, source: str, why: Sequence[str]) -> GenericAuditReport:
    """The report of an adapter with nothing to check: only what was not checked, and why."""
    return GenericAuditReport(
        adapter=adapter,
        source=source,
        seed=0,
        gold=None,
        no_gold="no audit declared",
        bases_kind="",
        bases=0,
        operators=(),
        checks=(),
        checked=(),
        not_checked=tuple(why),
    )


# ---------------------------------------------------------------------------------------------
# Helpers for adapters whose state is the position in a tuple of recorded calls


def accepted_prefixes(
    semantics: Semantics[T, Any], items: Sequence[tuple[str, T, tuple[Action, ...]]]
) -> tuple[tuple[Trajectory[T], ...], int]:
    """Every item's calls before its first rejection (``(trajectories, items with none)``)."""
    out: list[Trajectory[T]] = []
    empty = 0
    for where, task, actions in items:
        if not actions:
            continue
        fed = replay(semantics, task, actions).fed
        if fed == 1:
            empty += 1
            continue
        out.append(Trajectory(where, task, actions[: fed - 1]))
    return tuple(out), empty


def replace_at(items: Sequence[T], index: int, value: T) -> tuple[T, ...]:
    """A copy of ``items`` with ``items[index]`` replaced (nothing is mutated)."""
    out = list(items)
    out[index] = value
    return tuple(out)


#: A value of another JSON type for each JSON Schema type (operator ``wrong-type``).
WRONG_JSON_TYPE: Mapping[str, object] = {
    "string": 12345,
    "integer": "12345",
    "number": "1.5",
    "boolean": "true",
    "array": "not-an-array",
    "object": "not-an-object",
    "null": 0,
}


__all__ = [
    "UNAUDITED",
    "WRONG_JSON_TYPE",
    "AuditPlan",
    "AuditReport",
    "Check",
    "Expect",
    "GenericAuditReport",
    "GoldAudit",
    "GoldFinding",
    "Mutant",
    "Operator",
    "OperatorAudit",
    "Status",
    "Trajectory",
    "accepted_prefixes",
    "choose",
    "nothing_checked",
    "render",
    "replace_at",
    "run_audit",
    "seed_of",
]
