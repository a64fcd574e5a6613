"""Harness errors: rollouts the harness lost, kept apart from the agent's failures (spec: HARNESS-*).

A harness error is a rollout that ended because the evaluation harness failed, not because of
what the agent did: BFCL's ``Error during inference`` entries, tau-bench v1 runs whose ``info``
holds the exception that ended them (``traj: []``), tau2 simulations that terminated with
``infrastructure_error``, ToolSandbox scenarios that ToolSandbox aborted with an exception of its
own (not the ``KeyError`` of an unknown tool, TSB-ABORT), inspect samples with an ``error``, and
chat lines with a ``harness_error`` field (HARNESS-WHICH).

``--harness-errors failure|exclude`` says what becomes of them; without it each adapter follows
its benchmark's own metric code (HARNESS-DEFAULT). A counted one (``failure``) is a rollout that
failed: its recorded calls are replayed as usual and followed by the terminal
:class:`HarnessFault` action, rejected and unlabelled, whose reason starts ``harness error:``
(HARNESS-COUNT). An excluded one is no rollout at all. Either way each is reported
(HARNESS-REPORT): adapters hand them to :func:`report`, which names them on stderr and adds them to
the :class:`HarnessLog` of the command that reads the input (:func:`collecting`), from which the
table footer, the JSON and the report count them per condition.
"""

from __future__ import annotations

import contextlib
import contextvars
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs

from prefixexec.kernel import ConditionKey, Outcome, Rollout
from prefixexec.kernel.actions import Action, NoToolAction

from .errors import InputError
from .limits import notice

#: The values of ``--harness-errors``.
CHOICES = ("failure", "exclude")
#: What every counted harness error's reason starts with (HARNESS-COUNT).
REASON_PREFIX = "harness error: "
#: How much of a harness's message a reason keeps.
MESSAGE_CHARS = 300
#: The policy each benchmark's own metric code implies (HARNESS-DEFAULT), by input format.
DEFAULTS: Mapping[str, str] = {
    # bfcl_eval/eval_checker/eval_runner.py (_evaluate_single_multi_turn_entry): an entry whose
    # result is not a list is invalid, and accuracy divides by every entry.
    "bfcl": "failure",
    # tau_bench/run.py (display_metrics): a crashed run carries reward 0.0 into the average.
    "taubench-v1": "failure",
    # src/tau2/metrics/agent_metrics.py: simulations that ended with infrastructure_error are
    # dropped before any metric.
    "tau2": "exclude",
    # tool_sandbox/cli/utils.py (run_scenario, get_category_summary): an aborted scenario gets
    # similarity 0 and stays in every average.
    "toolsandbox": "failure",
    # inspect_ai/_eval/task/run.py: metrics are computed over the samples that returned scores;
    # a sample that errored without a score is left out (one scored despite its error stays in).
    "inspect": "exclude",
    # prefixexec's own transcript format: nothing is left out unless asked.
    "chat": "failure",
}
#: What the signature says for an adapter's default, when it is not one policy (HARNESS-SIGNATURE).
DEFAULT_WORD = "benchmark"
#: The adapters that read harness errors (``--harness-errors`` is an error with the others).
ADAPTERS = ("bfcl", "chat", "inspect", "taubench", "toolsandbox")
#: Each adapter's default as the signature writes it.
SIGNATURE_DEFAULTS: Mapping[str, str] = {
    "bfcl": DEFAULTS["bfcl"],
    "chat": DEFAULTS["chat"],
    "inspect": DEFAULT_WORD,
    "taubench": DEFAULT_WORD,
    "toolsandbox": DEFAULTS["toolsandbox"],
}


@attrs.frozen(slots=True)
class HarnessFault(NoToolAction):
    """The terminal action of a rollout the harness ended (HARNESS-COUNT): no action of the agent.

    It is a kind of the kernel's terminal no-tool action (the agent did nothing more), told apart
    by its type so that no output calls a lost trajectory "no tool call".
    """

    message: str = ""


@attrs.frozen(slots=True)
class HarnessError:
    """One harness error: where it was read, its rollout's key, what failed, and whether it counts."""

    where: str
    condition: ConditionKey
    task_id: str
    trial: int
    message: str
    counted: bool

    @property
    def reason(self) -> str:
        return REASON_PREFIX + self.message


@attrs.define
class HarnessLog:
    """The harness errors of one command's input, in reading order (HARNESS-REPORT)."""

    errors: list[HarnessError] = attrs.Factory(list)

    def by_condition(self) -> dict[ConditionKey, tuple[int, int]]:
        """Condition -> (counted, excluded) harness errors, in the order conditions first appear."""
        out: dict[ConditionKey, tuple[int, int]] = {}
        for error in self.errors:
            counted, excluded = out.get(error.condition, (0, 0))
            out[error.condition] = (counted + error.counted, excluded + (not error.counted))
        return out


_LOG: contextvars.ContextVar[HarnessLog | None] = contextvars.ContextVar("prefixexec_harness", default=None)


@contextlib.contextmanager
def collecting() -> Iterator[HarnessLog]:
    """Collect the harness errors the adapters report while the block runs."""
    log = HarnessLog()
    token = _LOG.set(log)
    try:
        yield log
    finally:
        _LOG.reset(token)


def policy(options: Any, fmt: str) -> str:
    """``failure`` or ``exclude`` for input format ``fmt`` under the command's options.

    ``options.harness_errors`` (``--harness-errors``) wins; BFCL also takes
    ``options.inference_errors`` (``--inference-errors``, its alias); otherwise the format's
    benchmark default (HARNESS-DEFAULT).
    """
    chosen = getattr(options, "harness_errors", None)
    if chosen is None and fmt == "bfcl":
        chosen = getattr(options, "inference_errors", None)
    if chosen is None:
        return DEFAULTS[fmt]
    if chosen not in CHOICES:
        raise InputError("--harness-errors", f"expected one of {', '.join(CHOICES)}, got {chosen!r}")
    return str(chosen)


def shorten(text: str, limit: int = MESSAGE_CHARS) -> str:
    """``text`` on one line of at most ``limit`` characters (runs of white space become one space)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<function>\S+)\s*$')
_LIBRARY = re.compile(r"[\\/](site-packages|dist-packages|lib[\\/]python\d[\d.]*)[\\/]", re.I)


def _tail(path: str, parts: int = 2) -> str:
    return "/".join(re.split(r"[\\/]", path)[-parts:])


def traceback_summary(text: str) -> str | None:
    """Where a Python traceback says the harness crashed: ``in <function> (<file>:<line>)`` of
    the innermost frame outside installed libraries, and ``during env.step`` when a frame's code
    calls an environment's ``step`` (HARNESS-WHERE); ``None`` when ``text`` has no frame."""
    frames: list[tuple[str, str, str, str]] = []
    lines = text.splitlines()
    for index, line in enumerate(lines):
        match = _FRAME.match(line)
        if match is not None:
            code = lines[index + 1].strip() if index + 1 < len(lines) else ""
            frames.append((match["file"], match["line"], match["function"], code))
    if not frames:
        return None
    own = [f for f in frames if not _LIBRARY.search(f[0])] or frames
    file, line, function, _ = own[-1]
    where = f"in {function} ({_tail(file)}:{line})"
    if any(re.search(r"\benv\w*\.step\(", code) for *_, code in frames):
        where = f"during env.step, {where}"
    return where


def fault_outcome(recorded: Outcome, message: str, calls: int) -> Outcome:
    """A counted harness error's outcome (HARNESS-COUNT) from the replay of its recorded calls.

    The recorded calls (``calls`` of them; none: the trajectory was lost) keep their verdicts;
    the terminal :class:`HarnessFault` follows them. FED is the first failing call's when one
    failed, else the fault's (T = calls + 1), unlabelled, with the reason ``harness error: ...``.
    """
    fault = HarnessFault(message=message)
    actions: tuple[Action, ...] = (*recorded.actions[:calls], fault) if calls else (fault,)
    T = len(actions)
    if calls and not recorded.fully_executable and recorded.fed <= calls:
        return Outcome(T=T, fed=recorded.fed, label=recorded.label, reason=recorded.reason, actions=actions)
    return Outcome(T=T, fed=T, label=None, reason=REASON_PREFIX + message, actions=actions)


def counted_rollout(rollout: Rollout, message: str, calls: int) -> Rollout:
    """``rollout`` as a counted harness error: :func:`fault_outcome`, ``meta["harness_error"]``."""
    outcome = fault_outcome(rollout.outcome, message, calls)
    return attrs.evolve(rollout, outcome=outcome, meta={**rollout.meta, "harness_error": message})


def report(adapter: str, errors: Sequence[HarnessError]) -> None:
    """Name the harness errors of one read on stderr and add them to the command's log."""
    if not errors:
        return
    log = _LOG.get()
    if log is not None:
        log.errors.extend(errors)
    counted = [e for e in errors if e.counted]
    excluded = [e for e in errors if not e.counted]
    for group, verb in ((counted, "count as failed rollouts"), (excluded, "are left out")):
        if not group:
            continue
        names = ", ".join(f"{e.task_id} (trial {e.trial})" for e in group[:10])
        more = "" if len(group) <= 10 else f" and {len(group) - 10} more"
        other = "exclude" if group is counted else "failure"
        notice(  # HOSTILE-NOTICE: held back until the command succeeds, escaped
            f"prefixexec: {adapter}: {len(group)} harness error(s) {verb} "
            f"(--harness-errors {other} to change): {names}{more}"
        )


def none_left(where: str, excluded: int) -> InputError:
    """The input error when every rollout read was an excluded harness error."""
    return InputError(
        where, f"all {excluded} rollouts are harness errors, left out (--harness-errors failure counts them)"
    )


def footer_lines(log: HarnessLog, totals: Mapping[ConditionKey, int]) -> list[str]:
    """The table footer's lines (HARNESS-REPORT): per condition, its harness errors and their fate."""
    lines: list[str] = []
    for key, (counted, excluded) in log.by_condition().items():
        name = f"{key.dataset} / {key.model} / {key.method}"
        parts = []
        if counted:
            parts.append(f"{counted} counted as failed rollouts (in N = {totals.get(key, 0)})")
        if excluded:
            parts.append(f"{excluded} left out (not in N)")
        lines.append(f"harness errors: {name}: {'; '.join(parts)}")
    return lines


def condition_json(log: HarnessLog | None, key: ConditionKey) -> dict[str, int]:
    """``harness_errors`` of one condition in the JSON document: counted and excluded."""
    counted, excluded = (0, 0) if log is None else log.by_condition().get(key, (0, 0))
    return {"counted": counted, "excluded": excluded}


def document_json(log: HarnessLog | None) -> list[dict[str, Any]]:
    """The document's ``harness_errors``: every harness error read, with its key and reason."""
    if log is None:
        return []
    return [
        {
            "dataset": e.condition.dataset,
            "model": e.condition.model,
            "method": e.condition.method,
            "task_id": e.task_id,
            "trial": e.trial,
            "counted": e.counted,
            "reason": e.reason,
            "source": e.where,
        }
        for e in log.errors
    ]


__all__ = [
    "ADAPTERS",
    "CHOICES",
    "DEFAULTS",
    "DEFAULT_WORD",
    "REASON_PREFIX",
    "SIGNATURE_DEFAULTS",
    "HarnessError",
    "HarnessFault",
    "HarnessLog",
    "collecting",
    "condition_json",
    "counted_rollout",
    "document_json",
    "fault_outcome",
    "footer_lines",
    "none_left",
    "policy",
    "report",
    "shorten",
    "traceback_summary",
]
