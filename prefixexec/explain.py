"""``prefixexec explain``: each rollout's actions with their verdicts (spec: OUT-EXPLAIN).

Per rollout: a heading (condition, task, trial, source), the numbered actions a_1..a_T, each
marked ``ok`` (executed: k < FED), ``FAIL`` with the label and the reason (k = FED), or
``after the first failure (not counted)`` (k > FED: replay stops at the first failure), then
T, FED and success. Where the adapter judges every action (OUT-REJECTIONS), a later rejected
action is shown too, with its label, its reason and whether the agent recovered, still marked as
not counted: FED counts the first rejection alone. Rendered with ``rich``: colour only on a
terminal, plain text when piped.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import IO, Any

from prefixexec.adapters.harness import HarnessFault
from prefixexec.kernel import Rollout
from prefixexec.kernel.actions import NoToolAction, ToolCall

from .rollouts import action_json, action_sources, json_value, rejections_json, row

#: Longest argument text shown on an action's line.
ARGUMENT_LIMIT = 160

OK = "ok"
FAIL = "FAIL"
AFTER = "after the first failure (not counted)"


def verdict(k: int, fed: int) -> str:
    """``ok`` before FED, ``FAIL`` at FED, AFTER past it (OUT-EXPLAIN)."""
    return OK if k < fed else FAIL if k == fed else AFTER


def call_text(action: object, written: object = None) -> str:
    """``tool(key=value, ...)`` with JSON values, cut to :data:`ARGUMENT_LIMIT` characters, or
    ``written``, the call as the model wrote it where the adapter keeps that (BFCL: positional
    arguments too)."""
    if isinstance(action, HarnessFault):
        return "(harness error: the harness ended the rollout here; not an action of the agent)"
    if isinstance(action, NoToolAction):
        return "(no tool call: the rollout ended without calling a tool)"
    if isinstance(written, str) and written:
        return written if len(written) <= ARGUMENT_LIMIT + 40 else written[: ARGUMENT_LIMIT + 37] + "..."
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
    texts = _texts(rollout)
    sources = action_sources(rollout)
    rejected = rejected_by_position(out["rejections"])
    steps = []
    for k, action in enumerate(outcome.actions, start=1):
        step = action_json(action, k, turns if isinstance(turns, list | tuple) else None, sources)
        if texts is not None:
            step["text"] = texts[k - 1]
        step["verdict"] = {OK: "ok", FAIL: "failed", AFTER: "not_evaluated"}[verdict(k, outcome.fed)]
        if rejected is not None:  # OUT-REJECTIONS: the recorded verdict, counted or not
            found = rejected.get(k)
            step["rejected"] = found is not None
            if found is not None:
                step["rejection"] = {key: found[key] for key in _REJECTION_KEYS}
        steps.append(step)
    out["actions"] = steps if outcome.actions else None
    out["success_check"] = success_check(rollout)
    return out


def success_check(rollout: Rollout) -> str | None:
    """OUT-EXPLAIN-SUCCESS: why an unsuccessful rollout failed the benchmark's own success check,
    where the adapter ran that check (BFCL: BFCL's multi-turn checker, BFCL-SUCCESS: the check
    that failed and at which turn, counted from 1, BFCL-TURNS); ``None`` otherwise."""
    check = rollout.meta.get("success_check")
    if rollout.success or not isinstance(check, str) or not check or check == "valid":
        return None
    return check


#: The keys of a step's ``rejection`` object in ``explain --json`` (OUT-REJECTIONS).
_REJECTION_KEYS = ("label", "reason", "counted", "recovered", "recovered_at")


def rejected_by_position(rejections: object) -> dict[int, dict[str, Any]] | None:
    """The rejections of a row by position, or ``None`` when the adapter does not list them."""
    if not isinstance(rejections, list):
        return None
    return {int(r["position"]): r for r in rejections}


def recovery_text(found: dict[str, Any]) -> str:
    """``recovered: ...`` for one rejected action of a row's ``rejections`` (OUT-REJECTIONS)."""
    at = found["recovered_at"]
    if at is not None:
        return f"recovered: yes (the same tool accepted at action {at})"
    return "recovered: yes (the rollout succeeded)" if found["recovered"] else "recovered: no"


def _yes(value: bool) -> str:
    return "yes" if value else "no"


def _texts(rollout: Rollout) -> list[str] | None:
    """The calls as the model wrote them (``meta["action_texts"]``, one per action), if kept."""
    texts = rollout.meta.get("action_texts")
    if isinstance(texts, list | tuple) and len(texts) == len(rollout.outcome.actions):
        return [str(t) for t in texts]
    return None


def _source_text(source: object) -> str:
    """``message 5`` / ``span 3f2a...``: where an action sits in the input (OUT-SOURCE)."""
    if isinstance(source, dict):
        return "  ".join(f"{key.replace('_id', '')} {value}" for key, value in source.items())
    return str(source)


def reason_text(indent: int, reason: str) -> str:
    """``reason: ...`` indented by ``indent`` spaces, each further line of a multi-line reason
    indented to where the first line's text starts, its own indentation kept (OUT-EXPLAIN): tabs
    as the spaces they stand for, every other control character escaped (HOSTILE-CONTROL)."""
    from prefixexec.adapters.text import printable  # HOSTILE-CONTROL: each line escaped

    lead = " " * indent + "reason: "
    lines = reason.split("\n")  # HOSTILE-LINES: lines end at \n only
    shown = [lead + lines[0], *(" " * len(lead) + line for line in lines[1:])]
    return "\n".join(printable(text.expandtabs()) for text in shown)  # a tab: the spaces it stands for


def render(rollouts: Sequence[Rollout], file: IO[str], colour: bool) -> None:
    """Print the explanations of ``rollouts`` with rich (styles only when ``colour``)."""
    from rich.console import Console
    from rich.text import Text

    from prefixexec.adapters.text import printable  # HOSTILE-CONTROL: text from the input, escaped

    class _Console(Console):
        def on_broken_pipe(self) -> None:  # HOSTILE-PIPE: the command line's way, not rich's exit 1
            raise BrokenPipeError

    console = _Console(
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
        heading = Text(printable(f"{c.dataset} / {c.model} / {c.method}"), style="bold")
        heading.append(printable(f"  task {rollout.task_id}  trial {rollout.trial}"))
        source = rollout.meta.get("source")
        if isinstance(source, str):
            heading.append(printable(f"  ({source})"), style="dim")
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
                    console.print(Text(reason_text(7, outcome.reason)))
        width = len(str(len(outcome.actions)))
        turns = rollout.meta.get("action_turns")
        turns = turns if isinstance(turns, list | tuple) and len(turns) == len(outcome.actions) else None
        texts = _texts(rollout)
        sources = action_sources(rollout)
        rejected = rejected_by_position(rejections_json(rollout)) or {}
        for k, action in enumerate(outcome.actions, start=1):
            written = None if texts is None else texts[k - 1]
            mark = verdict(k, outcome.fed)
            found = rejected.get(k)
            line = Text(f"  {k:>{width}}  ")
            if turns is not None:
                line.append(f"turn {turns[k - 1]}  ", style="dim")
            if mark == OK:
                line.append("ok    ", style="green")
                line.append(printable(call_text(action, written)))
            elif mark == FAIL:
                line.append("FAIL  ", style="bold red")
                line.append(printable(call_text(action, written)), style="bold")
                line.append("  " + (outcome.label.value if outcome.label else "unlabelled"), style="red")
            elif found is not None:  # OUT-REJECTIONS: a later rejection, shown, not counted
                line.append("REJ   ", style="red")
                line.append(printable(call_text(action, written)))
                line.append("  " + (found["label"] or "unlabelled"), style="red")
                line.append(f"  [{AFTER}]", style="dim")
            else:
                line.append("--    ", style="dim")
                line.append(printable(call_text(action, written)), style="dim")
                line.append(f"  [{AFTER}]", style="dim")
            if found is not None:
                line.append(f"  ({recovery_text(found)})", style="dim")
            if sources is not None and (mark == FAIL or found is not None):  # OUT-SOURCE
                line.append(printable(f"  <{_source_text(sources[k - 1])}>"), style="dim")
            console.print(line)
            if mark == FAIL and outcome.reason:
                console.print(Text(reason_text(width + 4, outcome.reason)))
            elif found is not None and found["reason"]:
                console.print(Text(reason_text(width + 4, found["reason"])))
        summary = Text(f"  T = {outcome.T}  FED = {outcome.fed}  ")
        summary.append(
            "fully executable" if outcome.fully_executable else f"first failure at action {outcome.fed}",
            style="green" if outcome.fully_executable else "red",
        )
        summary.append(f"  success: {_yes(rollout.success)}")
        later = sum(1 for k in rejected if k > outcome.fed)
        if later:
            summary.append(f"  {later} more rejected after FED (not counted)")
        console.print(summary)
        check = success_check(rollout)
        if check is not None:  # OUT-EXPLAIN-SUCCESS: the benchmark's own reason for Y = 0
            why = Text("  not a success: ", style="red")
            why.append(printable(check))
            console.print(why)


from prefixexec._callable import make_callable  # noqa: E402  # API-COMMANDS: prefixexec.explain(...) runs the command

make_callable(__name__)
