"""Comparison: prefixexec's rejected calls against human step labels (AgentRx tau-bench retail, issue 42).

AgentRx (microsoft/AgentRx, MIT; tests/data/real/agentrx-tau-retail/) labels 29 failed tau-bench
v1 retail rollouts step by step: every failure a person saw, with its step (1-based over the
``traj`` message list, the system message being step 1), its category (AgentRx taxonomy) and the
root cause. FED is another claim: the first call the environment rejected. This script reads the
rollouts with prefixexec's taubench adapter (every rejected call, OUT-REJECTIONS, and each call's
message, OUT-SOURCE) and prints, all from the data in the checkout:

1. per rollout: the human first failure (step, category), the root cause step, prefixexec's first
   rejected call (message, tool, label) and its later rejected calls, and how the two first
   errors relate: ``same`` (same message), ``earlier`` (prefixexec's first rejected call comes
   before the human first failure), ``later``, or ``silent`` (no call rejected: FED = T + 1);
2. the agreement table, split by whether the human first failure is of a category FED is meant
   to see (``Invalid Invocation`` or ``Invention of New Information``) or another one;
3. every human-labelled step against the rejected calls (any position, counted or not);
4. every rejected call of the labelled run and of the 100-rollout run it comes from, with its
   label, and the share left unlabelled.

Usage: python benchmarks/human_labels.py [--data DIR]   (docs/localisation.md quotes its output)
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from prefixexec.adapters import AdapterOptions, taubench
from prefixexec.rollouts import rows

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "real" / "agentrx-tau-retail" / "data"
FAILED = Path("tau_retail") / "tau_dataset_failed.json"
FULL = Path("tau_retail") / "tau_dataset_full.json.zst"
TRUTH = Path("ground_truth") / "tau_ground_truth.json"
#: The AgentRx categories of a call the environment is meant to refuse: what FED can see.
FED_CATEGORIES = frozenset({"Invalid Invocation", "Invention of New Information"})
#: How prefixexec's first rejected call relates to the human first failure.
RELATIONS = ("same", "earlier", "later", "silent")
#: The model is named for the report (the file names none: TAU-V1-MODEL-STEM).
OPTIONS = AdapterOptions(model="agentrx-tau-retail")


@attrs.frozen(slots=True)
class Compared:
    """One labelled rollout: the human labels beside prefixexec's rejected calls."""

    task_id: str
    human_step: int
    human_category: str
    root_step: int
    root_category: str
    human_steps: tuple[tuple[int, str], ...]
    #: prefixexec's rejected calls: ``(message, tool, label, counted)``, in order.
    rejected: tuple[tuple[int, str, str, bool], ...]

    @property
    def fed_message(self) -> int | None:
        """The message of a_FED, the first rejected call (``None``: FED = T + 1)."""
        return self.rejected[0][0] if self.rejected else None

    @property
    def relation(self) -> str:
        """``same``, ``earlier``, ``later`` or ``silent`` (see the module's docstring)."""
        fed = self.fed_message
        if fed is None:
            return "silent"
        return "same" if fed == self.human_step else "earlier" if fed < self.human_step else "later"

    @property
    def fed_category(self) -> bool:
        """The human first failure is of a category FED is meant to see (:data:`FED_CATEGORIES`)."""
        return self.human_category in FED_CATEGORIES


def rejected_calls(row: Mapping[str, Any]) -> tuple[tuple[int, str, str, bool], ...]:
    """``(message, tool, label, counted)`` of every rejected call of a row (OUT-REJECTIONS)."""
    out = []
    for r in row["rejections"]:
        out.append(
            (int(r["source"]["message"]), str(r["tool"]), r["label"] or "unlabelled", bool(r["counted"]))
        )
    return tuple(out)


def compare(table: Sequence[Mapping[str, Any]], truth: Sequence[Mapping[str, Any]]) -> list[Compared]:
    """The labelled rollouts (``truth``: AgentRx's ground truth) beside the rows of their run."""
    by_task = {row["task_id"]: row for row in table}
    out: list[Compared] = []
    for entry in truth:
        task_id = str(entry["trajectory_id"])
        failures = sorted(entry["failures"], key=lambda f: (f["step_number"], f["failure_id"]))
        first = failures[0]
        root = next(f for f in failures if f["failure_id"] == entry["root_cause"]["failure_id"])
        out.append(
            Compared(
                task_id,
                int(first["step_number"]),
                str(first["failure_category"]),
                int(root["step_number"]),
                str(root["failure_category"]),
                tuple((int(f["step_number"]), str(f["failure_category"])) for f in failures),
                rejected_calls(by_task[task_id]),
            )
        )
    return out


def agreement(compared: Sequence[Compared]) -> dict[bool, Counter[str]]:
    """Counts of :attr:`Compared.relation` by :attr:`Compared.fed_category`."""
    table: dict[bool, Counter[str]] = {True: Counter(), False: Counter()}
    for c in compared:
        table[c.fed_category][c.relation] += 1
    return table


def step_matches(compared: Sequence[Compared]) -> list[tuple[str, int, str, str | None]]:
    """Every human-labelled step with the label of the rejected call at that message (``None``:
    no call rejected there): ``(task, step, category, label)``."""
    out = []
    for c in compared:
        at = {message: label for message, _, label, _ in c.rejected}
        out.extend((c.task_id, step, category, at.get(step)) for step, category in c.human_steps)
    return out


def every_rejection(table: Sequence[Mapping[str, Any]]) -> list[tuple[str, int, str, str, str]]:
    """``(task, message, tool, label, tool message)`` of every rejected call of a run."""
    out = []
    for row in table:
        for r in row["rejections"]:
            text = str(r["reason"]).split(": ", 1)[1] if ": " in str(r["reason"]) else str(r["reason"])
            out.append(
                (row["task_id"], int(r["source"]["message"]), r["tool"], r["label"] or "unlabelled", text)
            )
    return out


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The OUT-ROLLOUTS rows of one tau-bench v1 file."""
    return rows(taubench.read([str(path)], OPTIONS))


def render(data: Path) -> str:
    """The whole comparison as Markdown."""
    failed = read_rows(data / FAILED)
    truth = json.loads((data / TRUTH).read_text(encoding="utf-8"))
    compared = compare(failed, truth)
    lines = [
        "### Per rollout",
        "",
        "| task | human first failure | root cause | prefixexec first rejected call | later rejected calls "
        "| relation |",
        "|---|---|---|---|---|---|",
    ]
    for c in compared:
        first = "none (FED = T+1)"
        if c.rejected:
            message, tool, label, _ = c.rejected[0]
            first = f"message {message} `{tool}` ({label})"
        later = ", ".join(f"{m} `{t}` ({lab})" for m, t, lab, _ in c.rejected[1:]) or "-"
        human = f"step {c.human_step}: {c.human_category}"
        root = f"step {c.root_step}: {c.root_category}"
        lines.append(f"| {c.task_id} | {human} | {root} | {first} | {later} | {c.relation} |")
    table = agreement(compared)
    lines += [
        "",
        "### Agreement",
        "",
        "| human first failure | rollouts | same | prefixexec earlier | prefixexec later "
        "| prefixexec silent |",
        "|---|---|---|---|---|---|",
    ]
    for group, name in (
        (True, "Invalid Invocation / Invention of New Information"),
        (False, "another category"),
    ):
        counts = table[group]
        lines.append(
            f"| {name} | {sum(counts.values())} | " + " | ".join(str(counts[r]) for r in RELATIONS) + " |"
        )
    total = table[True] + table[False]
    lines.append(f"| all | {sum(total.values())} | " + " | ".join(str(total[r]) for r in RELATIONS) + " |")
    steps = step_matches(compared)
    invocations = [s for s in steps if s[2] in FED_CATEGORIES]
    rejected = [r for c in compared for r in c.rejected]
    labelled = {(c.task_id, step) for c in compared for step, _ in c.human_steps}
    at_labelled = [1 for c in compared for m, *_ in c.rejected if (c.task_id, m) in labelled]
    invocation_steps = {(t, s) for t, s, _, _ in invocations}
    counted = sum(
        1 for c in compared for m, *_, first in c.rejected if first and (c.task_id, m) in invocation_steps
    )
    lines += [
        "",
        "### Human-labelled steps against every rejected call",
        "",
        f"- human-labelled failure steps: {len(steps)}; at a rejected call: "
        f"{sum(1 for s in steps if s[3] is not None)}",
        f"- of them Invalid Invocation / Invention of New Information: {len(invocations)}; "
        f"at a rejected call: {sum(1 for s in invocations if s[3] is not None)} "
        f"(the first rejected call, counted by FED: {counted})",
        f"- rejected calls: {len(rejected)} in {sum(1 for c in compared if c.rejected)} rollouts; "
        f"at a human-labelled step: {len(at_labelled)}",
    ]
    for name, table_rows in (("labelled run", failed), ("100-rollout run", read_rows(data / FULL))):
        found = every_rejection(table_rows)
        labels = Counter(label for *_, label, _ in found)
        unlabelled = labels.get("unlabelled", 0)
        share = f"{unlabelled}/{len(found)}" if found else "0/0"
        lines += [
            "",
            f"### Every rejected call, {name} ({len(found)} calls in "
            f"{sum(1 for r in table_rows if r['rejections'])} of {len(table_rows)} rollouts; "
            f"unlabelled: {share})",
            "",
            "| label | calls | tool messages |",
            "|---|---|---|",
        ]
        texts: dict[str, Counter[str]] = {}
        for *_, label, text in found:
            texts.setdefault(label, Counter())[text] += 1
        for label, count in sorted(labels.items(), key=lambda item: (-item[1], item[0])):
            quoted = "; ".join(
                f"{n} x `{t}`" for t, n in sorted(texts[label].items(), key=lambda i: (-i[1], i[0]))
            )
            lines.append(f"| {label} | {count} | {quoted} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0] if __doc__ else None)
    parser.add_argument(
        "--data", type=Path, default=DATA, help="the AgentRx data folder (default: the checkout's)"
    )
    args = parser.parse_args(argv)
    print(render(args.data), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
