"""BFCL's own verdict per entry, computed in-process with bfcl_eval's checker, next to ours.

Usage: ``python tests/bfcl_parity.py PATH...`` (a PATH may be a directory: every
``BFCL_v<N>_multi_turn_<category>_result.json`` below it is read). Prints, per file, the
entries, how many BFCL's checker could be run on, on how many our success agrees with BFCL's
verdict, and every disagreement; exits 1 when any entry disagrees. tests/test_bfcl_parity.py runs
the same comparison on every real result file the tests have (spec BFCL-PARITY).

The reference is BFCL's own pipeline, as ``eval_runner._evaluate_single_multi_turn_entry`` runs
it (bfcl-eval 2026.3.23): a result that is not a list is invalid (``multi_turn:inference_error``),
a result with another number of turns than the ground truth is invalid
(``multi_turn:force_terminated``); otherwise every step of every turn is decoded by the handler's
decoder, a step whose decoding raises or is empty is skipped, and ``multi_turn_checker`` gives the
verdict. The decoder is the one BFCL's API handlers use: ``convert_to_function_call`` for a
function-calling file, ``default_decode_execute_prompting`` for a prompting one (the file's kind
as the adapter reads it, BFCL-STEP). Handlers with a decoder of their own (local models whose
steps are raw JSON or tagged text) are not mirrored here (docs/bfcl-parity.md).

BFCL's checker executes the decoded calls with ``eval`` and its prompting decoder evaluates
arithmetic and lambdas. It is run here on model output only behind a gate (:func:`unsafe`): a
prompting step is decoded by BFCL only when its syntax tree holds no node BFCL's decoder
evaluates, and an entry reaches the checker only when every decoded call is ``name(k=literal,
...)`` (nested calls allowed) whose every called name is either an API method of the task's
classes (BFCL runs it on its instance) or a name that is no builtin and no global of BFCL's
executor module (BFCL's ``eval`` raises ``NameError``). An entry that fails the gate is counted as
not checked, with the reason; nothing of it is evaluated.
"""

from __future__ import annotations

import ast
import builtins
import decimal
import importlib
import inspect
import json
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from prefixexec.adapters import AdapterOptions, bfcl
from prefixexec.adapters.bfcl import backend

#: What the reference checker is called with as the model name, plus a counter (BFCL keeps each
#: entry's instances in module globals keyed by model name and entry id: a fresh name per entry).
MODEL_TAG = "prefixexec_parity"
#: AST nodes BFCL's prompting decoder evaluates (``resolve_ast_by_type``): never handed to it.
_EVALUATED = (ast.BinOp, ast.Lambda, ast.BoolOp, ast.Compare, ast.IfExp, ast.NamedExpr)


@attrs.frozen(slots=True)
class Verdict:
    """BFCL's verdict on one entry: ``valid`` (``None``: not checked, ``why`` says why)."""

    task_id: str
    valid: bool | None
    why: str


@attrs.frozen(slots=True)
class FileParity:
    path: str
    #: (task id, BFCL's verdict, ours) for every entry.
    rows: tuple[tuple[str, Verdict, bool], ...]

    @property
    def checked(self) -> int:
        return sum(v.valid is not None for _, v, _ in self.rows)

    @property
    def differences(self) -> tuple[tuple[str, Verdict, bool], ...]:
        return tuple(r for r in self.rows if r[1].valid is not None and r[1].valid != r[2])

    @property
    def bfcl_valid(self) -> int:
        return sum(v.valid is True for _, v, _ in self.rows)

    @property
    def ours_valid(self) -> int:
        return sum(ours for _, v, ours in self.rows if v.valid is not None)

    def line(self) -> str:
        n, checked, diff = len(self.rows), self.checked, len(self.differences)
        return (
            f"{self.path}: {n} entries, {checked} checked by BFCL's checker, "
            f"{checked - diff}/{checked} agree (BFCL valid {self.bfcl_valid}, ours {self.ours_valid})"
            + ("" if checked == n else f", {n - checked} not checked")
        )


# --- the gate ------------------------------------------------------------------------------------


def _executor_globals() -> dict[str, object]:
    """The names BFCL's ``eval`` resolves: its module's globals and the builtins."""
    utils = importlib.import_module("bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils")
    return {**vars(builtins), **vars(utils)}


def _refuses(target: object, node: ast.Call) -> bool:
    """Whether calling ``target`` with ``node``'s arguments raises TypeError before it runs: its
    signature (when it has one) cannot bind them. Only literal arguments are considered."""
    if any(isinstance(n, ast.Call) for arg in (*node.args, *node.keywords) for n in ast.walk(arg)):
        return False
    if not callable(target):
        return False
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        return False
    try:
        signature.bind(*[None] * len(node.args), **{k.arg: None for k in node.keywords if k.arg})
    except TypeError:
        return True
    return False


def unsafe_text(text: str) -> str | None:
    """Why BFCL's prompting decoder must not see ``text`` (it would evaluate part of it), or None."""
    wrapped = text.strip("`\n ")
    if not wrapped.startswith("["):
        wrapped = "[" + wrapped
    if not wrapped.endswith("]"):
        wrapped = wrapped + "]"
    try:
        tree = ast.parse(wrapped.strip().strip("'"), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None  # BFCL's own parse raises too: the step is skipped, nothing is evaluated
    for node in ast.walk(tree):
        if isinstance(node, _EVALUATED):
            return f"BFCL's decoder would evaluate {type(node).__name__} {ast.unparse(node)[:60]!r}"
    return None


def unsafe_call(text: str, methods: set[str], taken: Mapping[str, object]) -> str | None:
    """Why BFCL's ``eval`` must not run the decoded call ``text``, or None (see the module doc).

    A name BFCL's ``eval`` would resolve is let through only as the outermost call, with literal
    arguments its signature cannot bind (``exec(cmd=...)``): that raises TypeError before it runs.
    """
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None  # eval raises SyntaxError before running anything
    if not isinstance(tree.body, ast.Call):
        return f"not a call: {text[:60]!r}"
    for node in ast.walk(tree.body):
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name):
                return f"call of {type(node.func).__name__}: {text[:60]!r}"
            name = node.func.id
            if name not in methods and name in taken:
                if node is tree.body and _refuses(taken[name], node):
                    continue
                return f"calls `{name}`, which BFCL's eval would resolve: {text[:60]!r}"
        elif isinstance(node, ast.Starred | ast.Attribute | ast.Subscript | ast.Lambda):
            return f"{type(node).__name__} in {text[:60]!r}"
        elif isinstance(node, ast.Name) and not isinstance(getattr(node, "ctx", None), ast.Load):
            return f"name binding in {text[:60]!r}"
    called = {id(node.func) for node in ast.walk(tree.body) if isinstance(node, ast.Call)}
    for node in ast.walk(tree.body):
        if isinstance(node, ast.Name) and id(node) not in called:
            return f"bare name `{node.id}` in {text[:60]!r}"
    return None


# --- BFCL's pipeline ---------------------------------------------------------------------------------


def _decode(step: Any, function_calling: bool) -> list[str] | None:
    """BFCL's decoding of one step: its call strings, or None when BFCL skips the step."""
    utils = importlib.import_module("bfcl_eval.model_handler.utils")
    runner = importlib.import_module("bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils")
    try:
        if function_calling:
            decoded = utils.convert_to_function_call(step)
        else:
            decoded = utils.default_decode_execute_prompting(step, False)
    except Exception:  # BFCL: "Ignore any failed decoding and continue to the next message"
        return None
    if runner.is_empty_execute_response(decoded):
        return None
    return list(decoded)


def _forget(model: str) -> None:
    """Drop the instances BFCL's executor kept in its module globals for ``model``."""
    utils = importlib.import_module("bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils")
    for key in [k for k in vars(utils) if k.startswith(model + "_")]:
        delattr(utils, key)


def bfcl_verdict(record: dict[str, Any], function_calling: bool, index: int) -> Verdict:
    """BFCL's verdict on one result entry (``_evaluate_single_multi_turn_entry``), behind the gate."""
    checker = importlib.import_module("bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker")
    task_id: str = record["id"]
    entry = backend.entry(task_id)
    result = record["result"]
    gold = [list(turn) for turn in entry.gold]
    if not isinstance(result, list):
        return Verdict(task_id, False, "multi_turn:inference_error")
    if len(result) != len(gold):
        return Verdict(task_id, False, "multi_turn:force_terminated")
    catalogue = backend.catalogue()
    methods = {m for m, info in catalogue.methods.items() if info.cls in entry.involved_classes}
    taken = _executor_globals()
    decoded: list[list[list[str]]] = []
    for turn in result:
        steps: list[list[str]] = []
        for step in turn:
            if not function_calling and isinstance(step, str):
                why = unsafe_text(step)
                if why is not None:
                    return Verdict(task_id, None, why)
            calls = _decode(step, function_calling)
            if calls is None:
                continue
            for call in calls:
                why = unsafe_call(call, methods, taken)
                if why is not None:
                    return Verdict(task_id, None, why)
            steps.append(calls)
        decoded.append(steps)
    prompt = {
        "id": task_id,
        "initial_config": backend.thaw(entry.initial_config),
        "involved_classes": list(entry.involved_classes),
    }
    model = f"{MODEL_TAG}{index}"
    mpmath = sys.modules.get("mpmath")
    dps = mpmath.mp.dps if mpmath is not None else None
    try:
        with backend.utc(), decimal.localcontext():
            verdict = checker.multi_turn_checker(decoded, gold, prompt, entry.category, model)
    finally:
        _forget(model)
        if mpmath is not None:
            mpmath.mp.dps = dps
    return Verdict(task_id, bool(verdict["valid"]), str(verdict.get("error_type", "valid")))


_counter = iter(range(10**9))


def compare_file(path: Path) -> FileParity:
    """BFCL's verdict and ours for every entry of one result file."""
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    model = path.resolve().parent.name
    if model == "multi_turn":
        model = path.resolve().parent.parent.name
    function_calling = bfcl.reader.function_calling(model, records)  # the adapter's own rule (BFCL-STEP)
    read = bfcl.read_results([str(path)], AdapterOptions(model=model))
    ours = {r.task_id: r.success for r in read.rollouts}
    rows = []
    for record in records:
        verdict = bfcl_verdict(record, function_calling, next(_counter))
        rows.append((record["id"], verdict, ours[record["id"]]))
    return FileParity(str(path), tuple(rows))


def result_files(paths: Iterable[str]) -> Iterator[Path]:
    """The BFCL multi-turn result files named by ``paths`` (directories are searched)."""
    for name in paths:
        path = Path(name)
        found = [path] if path.is_file() else sorted(path.rglob("BFCL_v*_multi_turn_*_result.json"))
        for file in found:
            try:
                backend.normalise_category(file.name.split("_", 2)[2].rsplit("_result", 1)[0])
            except ValueError:
                continue
            yield file


def main(argv: Sequence[str]) -> int:
    if not argv:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    total = checked = agree = 0
    status = 0
    for path in result_files(argv):
        parity = compare_file(path)
        print(parity.line())
        for task_id, verdict, ours in parity.differences:
            print(f"  DIFFERS {task_id}: BFCL {verdict.valid} ({verdict.why}), ours {ours}")
            status = 1
        for task_id, verdict, _ in parity.rows:
            if verdict.valid is None:
                print(f"  not checked {task_id}: {verdict.why}")
        total += len(parity.rows)
        checked += parity.checked
        agree += parity.checked - len(parity.differences)
    print(f"total: {total} entries, {checked} checked by BFCL's checker, {agree}/{checked} agree")
    return status


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
