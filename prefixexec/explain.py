"""``prefixexec explain``: each rollout's actions with their verdicts (spec: OUT-EXPLAIN).

Per rollout: a heading (condition, task, trial, source), the numbered actions a_1..a_T, each
marked ``ok`` (executed: k < FED), ``FAIL`` with the label and the reason (k = FED), or
``after the first failure (not counted)`` (k > FED: replay stops at the first failure), then
T, FED and success. Rendered with ``rich``: colour only on a terminal, plain text when piped.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import IO, Any

from prefixexec.kernel import Rollout
from prefixexec.kernel.actions import NoToolAction, ToolCall

from .rollouts import action_json, json_value, row

#: Longest argument text shown on an action's line.
ARGUMENT_LIMIT = 160

OK = "ok"
FAIL = "FAIL"
AFTER = "after the first failure (not counted)"


def verdict(k: int, fed: int) -> str:
    """``ok`` before FED, ``FAIL`` at FED, AFTER past it (OUT-EXPLAIN)."""
    return OK if k < fed else FAIL if k == fed else AFTER


def call_text(action: object) -> str:
    """``tool(key=value, ...)`` with JSON values, cut to :data:`ARGUMENT_LIMIT` characters."""
    if isinstance(action, NoToolAction):
        return "(no tool call: the rollout ended without calling a tool)"
    if not isinstance(action, ToolCall):
        return repr(action)
    parts = [f"{k}={json.dumps(json_value(v), ensure_ascii=False)}" for k, v in action.arguments.items()]
    arguments = ", ".join(parts)
    if len(arguments) > ARGUMENT_LIMIT:
        arguments = arguments[: ARGUMENT_LIMIT - 3] + "..."
    return f"{action.name}({arguments})"


def explanation(rollout: Rollout) -> dict[str, Any]:
    """The per-rollout row plus ``actions``: every action with its verdict (``--json``)."""
    out = row(rollout)
    outcome = rollout.outcome
    turns = rollout.meta.get("action_turns")
    steps = []
    for k, action in enumerate(outcome.actions, start=1):
        step = action_json(action, k, turns if isinstance(turns, list | tuple) else None)
        step["verdict"] = {OK: "ok", FAIL: "failed", AFTER: "not_evaluated"}[verdict(k, outcome.fed)]
        steps.append(step)
    out["actions"] = steps if outcome.actions else None
    return out


def _yes(value: bool) -> str:
    return "yes" if value else "no"


def render(rollouts: Sequence[Rollout], file: IO[str], colour: bool) -> None:
    """Print the explanations of ``rollouts`` with rich (styles only when ``colour``)."""
    from rich.console import Console
    from rich.text import Text

    console = Console(
        file=file,
        force_terminal=colour,
        no_color=not colour,
        highlight=False,
        emoji=False,
        markup=False,
        soft_wrap=True,
        width=10_000 if not colour else None,
    )
    for index, rollout in enumerate(rollouts):
        if index:
            console.print()
        c = rollout.condition
        heading = Text(f"{c.dataset} / {c.model} / {c.method}", style="bold")
        heading.append(f"  task {rollout.task_id}  trial {rollout.trial}")
        source = rollout.meta.get("source")
        if isinstance(source, str):
            heading.append(f"  ({source})", style="dim")
        console.print(heading)
        outcome = rollout.outcome
        if not outcome.actions:
            note = "  actions not recorded (the input gives T, FED and the label only)"
            console.print(Text(note, style="dim"))
            if not outcome.fully_executable:
                failed = Text(f"  {outcome.fed:>3}  {FAIL}  ", style="bold red")
                failed.append(outcome.label.value if outcome.label else "unlabelled", style="red")
                console.print(failed)
                if outcome.reason:
                    console.print(Text(f"       reason: {outcome.reason}"))
        width = len(str(len(outcome.actions)))
        turns = rollout.meta.get("action_turns")
        turns = turns if isinstance(turns, list | tuple) and len(turns) == len(outcome.actions) else None
        for k, action in enumerate(outcome.actions, start=1):
            mark = verdict(k, outcome.fed)
            line = Text(f"  {k:>{width}}  ")
            if turns is not None:
                line.append(f"turn {turns[k - 1]}  ", style="dim")
            if mark == OK:
                line.append("ok    ", style="green")
                line.append(call_text(action))
            elif mark == FAIL:
                line.append("FAIL  ", style="bold red")
                line.append(call_text(action), style="bold")
                line.append("  " + (outcome.label.value if outcome.label else "unlabelled"), style="red")
            else:
                line.append("--    ", style="dim")
                line.append(call_text(action), style="dim")
                line.append(f"  [{AFTER}]", style="dim")
            console.print(line)
            if mark == FAIL and outcome.reason:
                console.print(Text(" " * (width + 4) + f"reason: {outcome.reason}"))
        summary = Text(f"  T = {outcome.T}  FED = {outcome.fed}  ")
        summary.append(
            "fully executable" if outcome.fully_executable else f"first failure at action {outcome.fed}",
            style="green" if outcome.fully_executable else "red",
        )
        summary.append(f"  success: {_yes(rollout.success)}")
        console.print(summary)


from prefixexec._callable import make_callable  # noqa: E402  # API-COMMANDS: prefixexec.explain(...) runs the command

make_callable(__name__)
