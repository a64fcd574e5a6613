"""``prefixexec audit --adapter bfcl``: gold trajectories and their mutants (spec: BFCL-AUDIT, BFCL-MUTANTS).

The audit replays the benchmark's own ground truth with the adapter's semantics and success
rule, prints every place where the benchmark's data breaks its own rules as a finding, then
applies mutation operators to every gold trajectory and counts how often replay rejects each
mutant where and as expected. With ``--cross-check`` it also runs BFCL's own executor and
checker on the same trusted inputs (gold and gold mutants) in a subprocess and compares.
Given result files, it also reads them and lists what they hold: entries, inference errors,
steps, decodable calls, and the undecodable steps BFCL's own loop drops, checked against
BFCL's ``inference_log`` where the file carries it (BFCL-DROPPED).
"""

from __future__ import annotations

import ast
import random
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import attrs

from prefixexec.kernel import Label

from ..errors import InputError
from . import backend
from .execute import bind
from .parse import parse_call_string
from .reader import FileSummary, read_results
from .semantics import BfclTask, Evaluation, evaluate, information_fault, run_from_strings, task

if TYPE_CHECKING:
    from .. import AdapterOptions
    from .reference import CrossCheck

#: Functions whose calls establish state that later calls rely on (operator ``remove-state``).
STATE_ESTABLISHING: frozenset[str] = frozenset(
    {
        "cd",
        "mkdir",
        "touch",
        "authenticate_twitter",
        "authenticate_travel",
        "message_login",
        "ticket_login",
        "trading_login",
        "register_credit_card",
        "lockDoors",
        "pressBrakePedal",
        "startEngine",
    }
)

#: Function -> arguments that name an existing file, ticket, booking, card, tweet, order, ...
REFERENCE_ARGUMENTS: dict[str, tuple[str, ...]] = {
    "cat": ("file_name",),
    "cd": ("folder",),
    "cp": ("source",),
    "diff": ("file_name1", "file_name2"),
    "echo": ("file_name",),
    "find": ("path",),
    "grep": ("file_name",),
    "mv": ("source",),
    "rm": ("file_name",),
    "rmdir": ("dir_name",),
    "sort": ("file_name",),
    "tail": ("file_name",),
    "wc": ("file_name",),
    "get_ticket": ("ticket_id",),
    "close_ticket": ("ticket_id",),
    "resolve_ticket": ("ticket_id",),
    "edit_ticket": ("ticket_id",),
    "comment": ("tweet_id",),
    "get_tweet": ("tweet_id",),
    "get_tweet_comments": ("tweet_id",),
    "mention": ("tweet_id",),
    "retweet": ("tweet_id",),
    "send_message": ("receiver_id",),
    "delete_message": ("receiver_id",),
    "get_user_id": ("user",),
    "cancel_order": ("order_id",),
    "get_order_details": ("order_id",),
    "get_stock_info": ("symbol",),
    "remove_stock_from_watchlist": ("symbol",),
    "place_order": ("symbol",),
    "cancel_booking": ("booking_id",),
    "contact_customer_support": ("booking_id",),
    "purchase_insurance": ("booking_id", "card_id"),
    "retrieve_invoice": ("booking_id",),
    "book_flight": ("card_id",),
    "get_credit_card_balance": ("card_id",),
}

#: A value of the wrong type for each doc type (operator ``wrong-type``).
WRONG_TYPE: dict[str, str | int] = {
    "string": 12345,
    "integer": "12345",
    "float": "1.5",
    "boolean": "true",
    "array": "not-a-list",
    "dict": "not-a-dict",
}

MISSING_STRING = "nonexistent_ref"
MISSING_INT = 999999


@attrs.frozen(slots=True)
class Mutant:
    """A gold trajectory with one mutation; ``position`` is the 1-based flat index it targets."""

    task_id: str
    operator: str
    turns: tuple[tuple[str, ...], ...]
    position: int
    call: str


@attrs.frozen(slots=True)
class Operator:
    """A mutation operator and what replay must do with its mutants."""

    name: str
    description: str
    #: The label expected at the mutated call; ``None``: any label at or after the position.
    expected: Label | None
    make: Callable[[BfclTask, tuple[tuple[str, ...], ...], int], list[Mutant]]


# --- helpers on call strings -------------------------------------------------------------------


def _flat(turns: Sequence[Sequence[str]]) -> Iterator[tuple[int, int, int, str]]:
    """(flat 1-based position, turn, index in turn, call) for every call."""
    position = 0
    for t, turn in enumerate(turns):
        for i, call in enumerate(turn):
            position += 1
            yield position, t, i, call


def _name(call: str) -> str | None:
    func = _node(call).func
    return func.id if isinstance(func, ast.Name) else None


def _flat_before(turns: Sequence[Sequence[str]], limit: int) -> Iterator[tuple[int, int, int, str]]:
    """:func:`_flat`, for the positions before ``limit`` only."""
    for item in _flat(turns):
        if item[0] >= limit:
            return
        yield item


def _node(call: str) -> ast.Call:
    node = ast.parse(call, mode="eval").body
    if not isinstance(node, ast.Call):
        raise ValueError(f"not a call: {call}")
    return node


def _replace(
    turns: tuple[tuple[str, ...], ...], t: int, i: int, new: str | None
) -> tuple[tuple[str, ...], ...]:
    out = [list(turn) for turn in turns]
    if new is None:
        del out[t][i]
    else:
        out[t][i] = new
    return tuple(tuple(turn) for turn in out)


def _insert_at_end(
    turns: tuple[tuple[str, ...], ...], t: int, call: str
) -> tuple[tuple[tuple[str, ...], ...], int]:
    out = [list(turn) for turn in turns]
    out[t].append(call)
    position = sum(len(turn) for turn in out[: t + 1])
    return tuple(tuple(turn) for turn in out), position


def _param_names(name: str) -> tuple[str, ...]:
    info = backend.catalogue().methods.get(name)
    return info.params if info is not None else ()


def _argument_nodes(node: ast.Call) -> list[tuple[str, ast.expr, int | None]]:
    """(parameter, value node, positional index or None) for each supplied argument."""
    params = _param_names(node.func.id) if isinstance(node.func, ast.Name) else ()
    found: list[tuple[str, ast.expr, int | None]] = [
        (params[j] if j < len(params) else f"#{j}", arg, j) for j, arg in enumerate(node.args)
    ]
    found += [(k.arg, k.value, None) for k in node.keywords if k.arg is not None]
    return found


def _with_value(node: ast.Call, param: str, index: int | None, value: str | int) -> str:
    new = ast.Call(func=node.func, args=list(node.args), keywords=list(node.keywords))
    constant = ast.Constant(value=value)
    if index is not None:
        new.args[index] = constant
    else:
        new.keywords = [
            ast.keyword(arg=k.arg, value=constant if k.arg == param else k.value) for k in node.keywords
        ]
    return ast.unparse(ast.fix_missing_locations(new))


# --- operators (BFCL-MUTANTS) --------------------------------------------------------------------


def _rename(bt: BfclTask, turns: tuple[tuple[str, ...], ...], limit: int) -> list[Mutant]:
    found = []
    for p, t, i, call in _flat_before(turns, limit):
        node = _node(call)
        if not isinstance(node.func, ast.Name):
            continue
        new = ast.unparse(
            ast.Call(func=ast.Name(id=node.func.id + "_nonexistent"), args=node.args, keywords=node.keywords)
        )
        found.append(Mutant(bt.id, "rename", _replace(turns, t, i, new), p, new))
    return found


def _drop_required(bt: BfclTask, turns: tuple[tuple[str, ...], ...], limit: int) -> list[Mutant]:
    found = []
    for p, t, i, call in _flat_before(turns, limit):
        node = _node(call)
        info = backend.catalogue().methods.get(node.func.id) if isinstance(node.func, ast.Name) else None
        if info is None:
            continue
        supplied = [a for a in _argument_nodes(node) if a[0] in info.required]
        if not supplied:
            continue
        param, _, index = supplied[-1]
        if index is not None and index != len(node.args) - 1:
            continue
        new_node = ast.Call(
            func=node.func,
            args=node.args[:-1] if index is not None else node.args,
            keywords=[k for k in node.keywords if k.arg != param] if index is None else node.keywords,
        )
        new = ast.unparse(new_node)
        found.append(Mutant(bt.id, "drop-required", _replace(turns, t, i, new), p, new))
    return found


def _wrong_type(bt: BfclTask, turns: tuple[tuple[str, ...], ...], limit: int) -> list[Mutant]:
    found = []
    for p, t, i, call in _flat_before(turns, limit):
        node = _node(call)
        info = backend.catalogue().methods.get(node.func.id) if isinstance(node.func, ast.Name) else None
        if info is None:
            continue
        for param, _, index in _argument_nodes(node):
            kind = info.schema.get(param, {}).get("type")
            if isinstance(kind, str) and kind in WRONG_TYPE:
                new = _with_value(node, param, index, WRONG_TYPE[kind])
                found.append(Mutant(bt.id, "wrong-type", _replace(turns, t, i, new), p, new))
                break
    return found


def _early_held_out(bt: BfclTask, turns: tuple[tuple[str, ...], ...], limit: int) -> list[Mutant]:
    found = []
    for name, k in sorted(bt.entry.missed.items()):
        if k < 1:
            continue
        calls = [c for _, t, _, c in _flat(turns) if t >= k and _name(c) == name]
        if not calls:
            continue
        mutated, position = _insert_at_end(turns, k - 1, calls[0])
        if position <= limit:
            found.append(Mutant(bt.id, "early-held-out", mutated, position, calls[0]))
    return found


def _bad_reference(bt: BfclTask, turns: tuple[tuple[str, ...], ...], limit: int) -> list[Mutant]:
    found = []
    for p, t, i, call in _flat_before(turns, limit):
        node = _node(call)
        if not isinstance(node.func, ast.Name) or node.func.id not in REFERENCE_ARGUMENTS:
            continue
        for param, value_node, index in _argument_nodes(node):
            if param not in REFERENCE_ARGUMENTS[node.func.id] or not isinstance(value_node, ast.Constant):
                continue
            original = value_node.value
            missing: str | int = (
                MISSING_INT
                if isinstance(original, int) and not isinstance(original, bool)
                else MISSING_STRING
            )
            new = _with_value(node, param, index, missing)
            found.append(Mutant(bt.id, "bad-reference", _replace(turns, t, i, new), p, new))
            break
    return found


def _needs_withheld(bt: BfclTask, call: str, turn: int, results: Sequence[str] = ()) -> bool:
    """Whether ``call``, made in ``turn`` after calls that returned ``results``, acts without the
    parameter the turn withholds (a value an earlier result holds is grounded: BFCL-MISS-PARAM)."""
    parsed = parse_call_string(call)
    info = backend.catalogue().methods.get(parsed.name)
    bound = bind(info, parsed.args, parsed.kwargs) if info is not None else None
    return isinstance(bound, dict) and information_fault(bt, parsed.name, bound, turn, results) is not None


def _withheld_call(bt: BfclTask, turns: tuple[tuple[str, ...], ...], limit: int) -> list[Mutant]:
    found = []
    for k in sorted(bt.withheld):
        prefix = evaluate(run_from_strings(bt, turns[: k + 1]), success=False)
        results = [r.result for r in prefix.records if r.accepted]
        calls = [c for c in turns[k + 1] if _needs_withheld(bt, c, k, results)]
        if not calls:
            continue
        mutated, position = _insert_at_end(turns, k, calls[0])
        if position <= limit:
            found.append(Mutant(bt.id, "withheld-call", mutated, position, calls[0]))
    return found


def _remove_state(bt: BfclTask, turns: tuple[tuple[str, ...], ...], limit: int) -> list[Mutant]:
    found = []
    for p, t, i, call in _flat_before(turns, limit):
        if _name(call) in STATE_ESTABLISHING:
            found.append(Mutant(bt.id, "remove-state", _replace(turns, t, i, None), p, call))
    return found


OPERATORS: tuple[Operator, ...] = (
    Operator("rename", "rename the function to a non-existent one", Label.SCHEMA, _rename),
    Operator("drop-required", "drop a required argument", Label.SCHEMA, _drop_required),
    Operator("wrong-type", "give an argument a value of the wrong type", Label.SCHEMA, _wrong_type),
    Operator(
        "early-held-out",
        "call a held-out function before its turn (miss_func)",
        Label.SCHEMA,
        _early_held_out,
    ),
    Operator(
        "bad-reference", "point an id argument at one that does not exist", Label.DEPENDENCY, _bad_reference
    ),
    Operator(
        "withheld-call",
        "make the withheld call in the turn that withholds it (miss_param)",
        Label.INFORMATION,
        _withheld_call,
    ),
    Operator("remove-state", "remove a state-establishing call (cd, login, ...)", None, _remove_state),
)


def mutants(bt: BfclTask, gold_fed: int, seed: int) -> list[Mutant]:
    """One mutant per operator for a gold trajectory, its position drawn with a seeded RNG.

    Only positions the gold replay accepts are mutated (the call at the position for
    replacements and removals, the prefix before it for insertions).
    """
    turns = bt.entry.gold
    chosen: list[Mutant] = []
    for operator in OPERATORS:
        candidates = operator.make(bt, turns, gold_fed)
        if candidates:
            rng = random.Random(f"{seed}|{bt.id}|{operator.name}")
            chosen.append(rng.choice(candidates))
    return chosen


# --- the report ----------------------------------------------------------------------------------


@attrs.frozen(slots=True)
class Finding:
    """A gold call the adapter rejects: the benchmark's data breaks its own rule."""

    task_id: str
    turn: int
    position: int
    call: str
    label: str
    rule: str


@attrs.frozen(slots=True)
class CategoryAudit:
    category: str
    tasks: int
    gold_calls: int
    executable: int
    successful: int
    findings: tuple[Finding, ...]
    failures: tuple[tuple[str, str], ...]

    @property
    def TER(self) -> Fraction:
        return Fraction(self.executable, self.tasks)

    @property
    def success(self) -> Fraction:
        return Fraction(self.successful, self.tasks)


@attrs.frozen(slots=True)
class OperatorAudit:
    name: str
    description: str
    expected: str
    made: int
    as_expected: int
    misses: tuple[str, ...]
    #: remove-state only: mutants that stayed fully executable.
    executable: tuple[str, ...] = ()

    @property
    def required(self) -> bool:
        """Whether this operator must reach 100% (every operator with an expected label)."""
        return self.expected != "any label at or after the removed position"

    @property
    def rate(self) -> Fraction | None:
        return None if self.made == 0 else Fraction(self.as_expected, self.made)


@attrs.frozen(slots=True)
class BfclAuditReport:
    """What ``audit --adapter bfcl`` checked, found and did not check."""

    version: str | None
    seed: int
    categories: tuple[CategoryAudit, ...]
    operators: tuple[OperatorAudit, ...]
    unclassified: tuple[tuple[str, int], ...]
    cross_check: CrossCheck | None
    checked: tuple[str, ...]
    not_checked: tuple[str, ...]
    #: Result files given to the audit, as the reader counted them (BFCL-DROPPED).
    files: tuple[FileSummary, ...] = ()

    @property
    def passed(self) -> bool:
        """Gold success is 1 everywhere, the labelled operators reach 100%, the cross-check agrees,
        and the dropped steps of every result file that carries BFCL's log agree with it."""
        return (
            all(c.successful == c.tasks for c in self.categories)
            and all(o.as_expected == o.made for o in self.operators if o.required)
            and (self.cross_check is None or self.cross_check.agrees)
            and all(f.log_agrees is not False for f in self.files)
        )

    def render(self) -> str:
        return render(self)

    def to_json(self) -> dict[str, Any]:
        return {
            "adapter": "bfcl",
            "bfcl_eval": self.version,
            "seed": self.seed,
            "passed": self.passed,
            "categories": [
                {
                    "category": c.category,
                    "tasks": c.tasks,
                    "gold_calls": c.gold_calls,
                    "TER": str(c.TER),
                    "success": str(c.success),
                    "findings": [attrs.asdict(f) for f in c.findings],
                    "failures": [list(f) for f in c.failures],
                }
                for c in self.categories
            ],
            "operators": [
                {
                    "operator": o.name,
                    "description": o.description,
                    "expected": o.expected,
                    "made": o.made,
                    "as_expected": o.as_expected,
                    "misses": list(o.misses),
                    "stayed_executable": list(o.executable),
                }
                for o in self.operators
            ],
            "unclassified": [list(u) for u in self.unclassified],
            "cross_check": None if self.cross_check is None else self.cross_check.to_json(),
            "checked": list(self.checked),
            "not_checked": list(self.not_checked),
            **({"result_files": [f.to_json() for f in self.files]} if self.files else {}),
        }


def _pct(part: int, whole: int) -> str:
    return "n/a" if whole == 0 else f"{part}/{whole} ({100 * part / whole:.1f}%)"


def render(report: BfclAuditReport) -> str:
    lines = [
        f"BFCL multi-turn audit (bfcl-eval {report.version}, adapter bfcl, mutant seed {report.seed})",
        "",
    ]
    lines.append("Gold trajectories, replayed with the adapter (TER) and BFCL's success rule (success)")
    rows: list[tuple[str, int, int, int, int]] = [
        (c.category, c.tasks, c.gold_calls, c.executable, c.successful) for c in report.categories
    ]
    if len(rows) > 1:
        rows.append(
            (
                "all",
                sum(r[1] for r in rows),
                sum(r[2] for r in rows),
                sum(r[3] for r in rows),
                sum(r[4] for r in rows),
            )
        )
    header = f"{'category':<24} {'tasks':>5} {'gold calls':>10}  {'TER':<17} success"
    lines += [header, "-" * (len(header) + 10)]
    for name, tasks, calls, executable, successful in rows:
        ter = f"{executable / tasks:.3f} ({executable}/{tasks})"
        lines.append(
            f"{name:<24} {tasks:>5} {calls:>10}  {ter:<17} {successful / tasks:.3f} ({successful}/{tasks})"
        )
    findings = [f for c in report.categories for f in c.findings]
    lines += ["", f"Findings: gold calls that break the benchmark's own rules ({len(findings)})"]
    for f in findings:
        lines.append(f"  {f.task_id}  turn {f.turn}  call {f.position}  {f.call}  [{f.label}] {f.rule}")
    failures = [(c.category, f) for c in report.categories for f in c.failures]
    if failures:
        lines += ["", f"Gold trajectories whose success check fails ({len(failures)})"]
        lines += [f"  {task_id}: {why}" for _, (task_id, why) in failures]
    lines += ["", "Mutants (one per gold trajectory and operator, at positions the gold replay accepts)"]
    header = f"{'operator':<15} {'expected':<44} {'made':>5}  as expected"
    lines += [header, "-" * (len(header) + 10)]
    for o in report.operators:
        if o.required:
            result = _pct(o.as_expected, o.made)
        else:
            result = f"{o.as_expected}/{o.made} rejected, {len(o.executable)} stayed executable"
        lines.append(f"{o.name:<15} {o.expected:<44} {o.made:>5}  {result}")
    for o in report.operators:
        if o.misses:
            lines += ["", f"{o.name}: mutants not rejected as expected ({len(o.misses)})"]
            lines += [f"  {m}" for m in o.misses]
        if o.executable:
            lines += ["", f"{o.name}: mutants that stayed executable ({len(o.executable)})"]
            lines += [f"  {m}" for m in o.executable]
    lines += ["", f"Unclassified execution errors, left unlabelled ({len(report.unclassified)})"]
    lines += [f"  {count} x {message}" for message, count in report.unclassified]
    if report.cross_check is not None:
        lines += ["", *report.cross_check.render_lines()]
    if report.files:
        lines += ["", *_file_lines(report.files)]
    lines += ["", "Checked:"]
    lines += [f"  - {c}" for c in report.checked]
    lines += ["Not checked:"]
    lines += [f"  - {c}" for c in report.not_checked]
    lines += ["", f"Result: {'PASS' if report.passed else 'FAIL'}"]
    return "\n".join(lines) + "\n"


def _file_lines(files: Sequence[FileSummary]) -> list[str]:
    lines = [
        "Result files (BFCL-DROPPED): undecodable steps stay schema failures here; "
        "BFCL's own loop drops them and ends the turn"
    ]
    for f in files:
        if f.log_agrees is None:
            log = "no inference_log in the file"
        else:
            verdict = "agrees" if f.log_agrees else "DIFFERS"
            log = (
                f"BFCL's inference_log ({f.logged_entries} entries) records {f.logged_decode_errors} "
                f"'Error decoding the model response', steps BFCL's decoder raises on here "
                f"{f.undecodable_in_logged} ({f.dropped_in_logged} dropped call steps): {verdict}"
            )
        lines += [
            f"  {f.path}",
            f"    decoder {f.decoder} (BFCL-HANDLERS: {f.decoder_why}); text steps BFCL's decoder would "
            f"eval as Python, not decoded here (BFCL-DIFF): {f.evaluated_steps}",
            f"    entries {f.entries}, inference errors {f.inference_errors}, steps {f.steps}, "
            f"call steps {f.call_steps}, calls {f.calls}, decodable calls {f.decodable_calls}",
            f"    steps BFCL's loop drops (undecodable: invalid JSON, arguments not an object, ...): "
            f"{f.dropped_steps} ({f.dropped_calls} calls)",
            f"    text replies in function-calling steps (BFCL's loop skips them): {f.text_steps}; "
            f"steps mixing text with calls (BFCL drops them, their calls are actions here): "
            f"{f.mixed_steps} ({f.mixed_calls} calls)",
            f"    turns written as one string (BFCL's loop decodes none of it; decoded here as one "
            f"step): {f.string_turns} ({f.string_turn_calls} calls)",
            f"    text steps holding JSON tool calls read as replies by this decoder (a local model's "
            f"handler decodes them with its own: give --bfcl-decoder): {f.json_call_texts}",
            f"    steps with a function name that is not an identifier (e.g. chat-template tokens), "
            f"executed by BFCL as errors: {f.bad_name_steps}",
            f"    {log}",
        ]
    return lines


def _expected_text(operator: Operator) -> str:
    if operator.expected is None:
        return "any label at or after the removed position"
    return f"{operator.expected.value} at the mutated call"


def _check(operator: Operator, mutant: Mutant, evaluation: Evaluation) -> bool:
    outcome = evaluation.outcome
    if operator.expected is None:
        return outcome.fed >= mutant.position and not outcome.fully_executable
    return outcome.fed == mutant.position and outcome.label is operator.expected


def run_audit(options: AdapterOptions, paths: Sequence[str] = ()) -> BfclAuditReport:
    """Replay every gold trajectory and its mutants (optionally one category); count result files."""
    files = read_results(paths, options).files if paths else ()
    if options.category is not None:
        try:
            categories: tuple[str, ...] = (backend.normalise_category(options.category),)
        except ValueError as exc:
            raise InputError("--category", str(exc)) from None
    else:
        categories = backend.CATEGORIES
    seed_value = options.extra.get("seed", 0)
    seed = seed_value if isinstance(seed_value, int) else 0
    progress = options.extra.get("progress")  # PROGRESS-COUNT: called with (tasks done, tasks)
    total = sum(len(backend.entries(c)) for c in categories)
    done = 0
    unclassified: Counter[str] = Counter()
    category_audits: list[CategoryAudit] = []
    per_operator: dict[str, list[tuple[Mutant, Evaluation]]] = {o.name: [] for o in OPERATORS}
    all_mutants: list[Mutant] = []
    for category in categories:
        findings: list[Finding] = []
        failures: list[tuple[str, str]] = []
        executable = successful = calls = 0
        for task_id, entry in backend.entries(category).items():
            bt = task(task_id)
            evaluation = evaluate(run_from_strings(bt, entry.gold), execute_all=True)
            calls += entry.gold_calls
            executable += evaluation.outcome.fully_executable
            successful += bool(evaluation.success)
            if evaluation.success is False:
                failures.append((task_id, evaluation.failure or ""))
            for record in evaluation.records:
                if record.unclassified and record.reason is not None:
                    unclassified[record.reason.split("unclassified error: ", 1)[-1]] += 1
                if not record.accepted:
                    findings.append(
                        Finding(
                            task_id,
                            record.turn + 1,  # BFCL-TURNS: turns count from 1
                            record.position,
                            record.call,
                            record.labels[0].value if record.labels else "unlabelled",
                            record.message or "",
                        )
                    )
            for mutant in mutants(bt, evaluation.outcome.fed, seed):
                mutant_evaluation = evaluate(run_from_strings(bt, mutant.turns), success=False)
                per_operator[mutant.operator].append((mutant, mutant_evaluation))
                all_mutants.append(mutant)
                for record in mutant_evaluation.records:
                    if record.unclassified and record.reason is not None:
                        unclassified[record.reason.split("unclassified error: ", 1)[-1]] += 1
            done += 1
            if callable(progress):
                progress(done, total)
        category_audits.append(
            CategoryAudit(
                category,
                len(backend.entries(category)),
                calls,
                executable,
                successful,
                tuple(findings),
                tuple(failures),
            )
        )
    operator_audits = []
    for operator in OPERATORS:
        results = per_operator[operator.name]
        ok = [(m, e) for m, e in results if _check(operator, m, e)]
        misses = tuple(
            f"{m.task_id} call {m.position} {m.call}: got fed={e.outcome.fed} "
            f"label={e.outcome.label.value if e.outcome.label else None} ({e.outcome.reason})"
            for m, e in results
            if not _check(operator, m, e) and not (operator.expected is None and e.outcome.fully_executable)
        )
        stayed = tuple(
            f"{m.task_id} removed call {m.position} {m.call}"
            for m, e in results
            if operator.expected is None and e.outcome.fully_executable
        )
        operator_audits.append(
            OperatorAudit(
                operator.name,
                operator.description,
                _expected_text(operator),
                len(results),
                len(ok),
                misses,
                stayed,
            )
        )
    cross: CrossCheck | None = None
    if options.extra.get("cross_check"):
        from .reference import cross_check

        variants = [
            (tid, backend.entries(c)[tid].gold, "gold") for c in categories for tid in backend.entries(c)
        ]
        variants += [(m.task_id, m.turns, f"{m.operator}@{m.position}") for m in all_mutants]
        cross = cross_check(variants)
    checked = (
        f"gold trajectories of {sum(c.tasks for c in category_audits)} tasks in {', '.join(categories)}: "
        "prefix replay (TER) and BFCL's success rule (success)",
        f"{len(OPERATORS)} mutation operators, {len(all_mutants)} mutants: "
        "position and label of the first rejection",
        "execution errors are labelled by message family; unmatched messages are listed above",
        *(
            (
                f"cross-check with BFCL's own executor and checker on {cross.variants} "
                "trusted variants (subprocess)",
            )
            if cross is not None
            else ()
        ),
        *(
            (
                f"{len(files)} result file(s): entries, inference errors, steps and decodable calls counted; "
                "steps BFCL's loop drops compared with its inference_log where the file has one",
            )
            if files
            else ()
        ),
    )
    not_checked = (
        *(
            ()
            if files
            else ("model outputs (give result files, or use `prefixexec score --adapter bfcl`)",)
        ),
        "BFCL-MISS-PARAM where the next turn's user message mentions none of its ground-truth "
        f"argument values: {_undetermined_withholding_turns(categories)} withholding turns "
        "(no information label there)",
        "BFCL's irrelevance check for turns whose ground truth is empty (not part of BFCL's success rule)",
        "the entries' `excluded_function` field (BFCL does not use it when running the benchmark)",
        *(
            ()
            if cross is not None
            else ("agreement with BFCL's own executor and checker (add --cross-check)",)
        ),
    )
    return BfclAuditReport(
        version=backend.installed_version(),
        seed=seed,
        categories=tuple(category_audits),
        operators=tuple(operator_audits),
        unclassified=tuple(sorted(unclassified.items())),
        cross_check=cross,
        checked=checked,
        not_checked=not_checked,
        files=files,
    )


def _undetermined_withholding_turns(categories: Sequence[str]) -> int:
    """Withholding turns (empty gold, non-empty next gold) with no withheld parameter found."""
    count = 0
    for category in categories:
        if category != "multi_turn_miss_param":
            continue
        for task_id, entry in backend.entries(category).items():
            withheld = task(task_id).withheld
            gold = entry.gold
            count += sum(
                1 for k in range(len(gold) - 1) if not gold[k] and gold[k + 1] and k not in withheld
            )
    return count


def audit(paths: Sequence[str], options: AdapterOptions) -> BfclAuditReport:
    """``audit --adapter bfcl [FILE...]``: gold trajectories, mutants and result files (BFCL-AUDIT)."""
    return run_audit(options, paths)


__all__ = [
    "OPERATORS",
    "REFERENCE_ARGUMENTS",
    "STATE_ESTABLISHING",
    "BfclAuditReport",
    "CategoryAudit",
    "Finding",
    "Mutant",
    "Operator",
    "OperatorAudit",
    "audit",
    "mutants",
    "render",
    "run_audit",
]
