"""Cross-check with BFCL's own executor and checker, on TRUSTED inputs only (spec: BFCL-CROSSCHECK).

BFCL's executor (``multi_turn_utils.execute_multi_turn_func_call``) runs call strings with
``eval``; its checker (``multi_turn_checker``) calls that executor. Both are used here only on
trusted inputs, the benchmark's own ground truth and mutants built from it by
:mod:`.operators`, and only in a child process (``python -m
prefixexec.adapters.bfcl.reference``), never on model output. The parent compares, per
variant, the per-call results, the final instance state and the success verdict with the
adapter's own replay.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

import attrs

from .parse import parse_call_string
from .semantics import evaluate, run_from_strings, task

#: Prefix BFCL's executor gives a call that raised.
BFCL_EXECUTION_ERROR = "Error during execution"
#: Upper bound on the child's run time.
TIMEOUT_S = 900


@attrs.frozen(slots=True)
class Difference:
    task_id: str
    tag: str
    what: str


@attrs.frozen(slots=True)
class CrossCheck:
    """How the adapter and BFCL's own implementation compare on trusted variants."""

    variants: int
    calls: int
    differences: tuple[Difference, ...]
    #: Variants the adapter replays as fully executable: BFCL's executor raised on none of their calls.
    executable_confirmed: int

    @property
    def agrees(self) -> bool:
        return not self.differences

    def render_lines(self) -> list[str]:
        lines = [
            f"Cross-check with BFCL's own executor and checker (subprocess, trusted inputs): "
            f"{self.variants} variants, {self.calls} calls: per-call results, final state and success "
            f"{'agree' if self.agrees else 'DIFFER'}; {self.executable_confirmed} variants replayed as "
            "fully executable raise no error in BFCL's executor"
        ]
        lines += [f"  {d.task_id} [{d.tag}]: {d.what}" for d in self.differences[:50]]
        if len(self.differences) > 50:
            lines.append(f"  ... and {len(self.differences) - 50} more")
        return lines

    def to_json(self) -> dict[str, Any]:
        return {
            "variants": self.variants,
            "calls": self.calls,
            "agrees": self.agrees,
            "executable_confirmed": self.executable_confirmed,
            "differences": [attrs.asdict(d) for d in self.differences],
        }


def reference_results(variants: Sequence[tuple[str, Sequence[Sequence[str]]]]) -> list[dict[str, Any]]:
    """Run BFCL's own executor and checker on trusted variants in a child process.

    As a second line of defence, every call string must be a plain call with literal arguments
    (BFCL-PARSE); anything else is refused before it could reach BFCL's ``eval``.
    """
    for task_id, turns in variants:
        for turn in turns:
            for call in turn:
                fault = parse_call_string(call).fault
                if fault is not None:
                    raise ValueError(
                        f"{task_id}: the cross-check runs plain literal calls only: {call!r} ({fault})"
                    )
    payload = "\n".join(json.dumps({"id": tid, "turns": [list(t) for t in turns]}) for tid, turns in variants)
    completed = subprocess.run(
        [sys.executable, "-m", "prefixexec.adapters.bfcl.reference"],
        input=payload,
        capture_output=True,
        text=True,
        env={**os.environ, "TZ": "UTC", "PYTHONHASHSEED": "0"},
        timeout=TIMEOUT_S,
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(
            f"BFCL reference process failed ({completed.returncode}): {completed.stderr[-2000:]}"
        )
    return [json.loads(line) for line in completed.stdout.split("\n") if line.strip()]


def cross_check(variants: Sequence[tuple[str, Sequence[Sequence[str]], str]]) -> CrossCheck:
    """Compare the adapter with BFCL's own executor and checker on trusted variants."""
    references = reference_results([(tid, turns) for tid, turns, _ in variants])
    differences: list[Difference] = []
    calls = confirmed = 0
    for (task_id, turns, tag), reference in zip(variants, references, strict=True):
        ours = evaluate(run_from_strings(task(task_id), turns), execute_all=True, snapshot=True)
        theirs: list[str] = [r for turn in reference["results"] for r in turn]
        calls += len(theirs)
        if len(theirs) != len(ours.records):
            differences.append(
                Difference(task_id, tag, f"{len(ours.records)} calls here, {len(theirs)} in BFCL")
            )
            continue
        for record, text in zip(ours.records, theirs, strict=True):
            if record.executed:
                if record.result != text:
                    differences.append(
                        Difference(
                            task_id,
                            tag,
                            f"call {record.position} {record.call}: {record.result!r} != {text!r}",
                        )
                    )
            elif not text.startswith(BFCL_EXECUTION_ERROR):
                differences.append(
                    Difference(
                        task_id,
                        tag,
                        f"call {record.position} {record.call}: not executable here, BFCL ran it",
                    )
                )
        if ours.state != reference["state"]:
            differences.append(Difference(task_id, tag, "final instance state differs"))
        if ours.success != reference["valid"]:
            differences.append(
                Difference(
                    task_id,
                    tag,
                    f"success {ours.success} here ({ours.failure}), {reference['valid']} in BFCL",
                )
            )
        if ours.outcome.fully_executable:
            if any(t.startswith(BFCL_EXECUTION_ERROR) for t in theirs):
                differences.append(Difference(task_id, tag, "fully executable here, BFCL's executor raised"))
            else:
                confirmed += 1
    return CrossCheck(len(variants), calls, tuple(differences), confirmed)


# --- the child process ---------------------------------------------------------------------------


def _child() -> int:  # pragma: no cover - runs in the subprocess, exercised by the cross-check test
    import importlib

    from .backend import entry as backend_entry
    from .backend import long_context, thaw
    from .execute import instance_snapshot

    utils = importlib.import_module("bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils")
    checker = importlib.import_module("bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker")
    out = sys.stdout
    for index, line in enumerate(sys.stdin):
        if not line.strip():
            continue
        request = json.loads(line)
        entry = backend_entry(request["id"])
        turns: list[list[str]] = request["turns"]
        initial = thaw(entry.initial_config)
        involved = list(entry.involved_classes)
        flag = long_context(entry.category)
        model = f"xcheck{index}"
        results: list[list[str]] = []
        instances: dict[str, object] = {}
        for turn in turns:
            turn_results, instances = utils.execute_multi_turn_func_call(
                turn, initial, involved, model, entry.id, long_context=flag, is_evaL_run=False
            )
            results.append(list(turn_results))
        state = instance_snapshot(instances)
        prompt = {"id": entry.id, "initial_config": initial, "involved_classes": involved}
        decoded = [[list(turn)] if turn else [] for turn in turns]
        gold = [list(turn) for turn in entry.gold]
        verdict = checker.multi_turn_checker(decoded, gold, prompt, entry.category, f"xcheckY{index}")
        valid = bool(verdict["valid"]) and len(turns) == len(gold)
        for key in [k for k in vars(utils) if f"xcheck{index}_" in k or f"xcheckY{index}_" in k]:
            delattr(utils, key)
        out.write(json.dumps({"id": entry.id, "results": results, "state": state, "valid": valid}) + "\n")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(_child())
