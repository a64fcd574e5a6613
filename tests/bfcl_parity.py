"""BFCL's own verdict per entry, computed in-process with bfcl_eval's checker, next to ours.

Usage: ``python tests/bfcl_parity.py [--bfcl-decoder NAME] [--data DIR] PATH...`` (a PATH may be a
directory: every ``BFCL_v<N>_multi_turn_<category>_result.json`` below it is read). Prints, per
file, the decoder that read it, the entries, how many BFCL's checker could be run on, on how
many our success agrees with BFCL's verdict, and every disagreement; exits 1 when any entry
disagrees. tests/test_bfcl_parity.py runs the same comparison on every real result file the
tests have (spec BFCL-PARITY, BFCL-HANDLERS).

The reference is BFCL's own pipeline, as ``eval_runner._evaluate_single_multi_turn_entry`` runs
it (bfcl-eval 2026.3.23): a result that is not a list is invalid (``multi_turn:inference_error``),
a result with another number of turns than the ground truth is invalid
(``multi_turn:force_terminated``); otherwise every step of every turn is decoded by the handler's
decoder, a step whose decoding raises or is empty is skipped, and ``multi_turn_checker`` gives the
verdict. The decoder is BFCL's own for the decoder the adapter chose (adapters/bfcl/decoders.py):
``convert_to_function_call`` or ``default_decode_execute_prompting`` for BFCL's API rules, else
the ``decode_execute`` of the BFCL handler class itself (:data:`HANDLERS`), imported from the
installed bfcl_eval with import-time stand-ins for the vendor SDKs its modules import and
``decode_execute`` never uses (:func:`_stand_ins`).

Two more references where a file has them: BFCL's own score file next to the result file
(``score/`` for ``result/``; entries it does not list are valid), compared on the tasks whose
data are the same in the version that wrote it (``--data DIR``: that version's ``bfcl_eval/data``
folder, :func:`changed_tasks`); and the ``inference_log`` BFCL's inference loop wrote, whose
``handler_log`` records give, per step, the handler's own decoding at inference time
(:func:`logged_steps`), compared with our decoder's step by step.

BFCL's checker executes the decoded calls with ``eval``, its prompting decoder evaluates
arithmetic and lambdas and ``LlamaHandler_3_1`` runs ``eval`` on the model's text. They are run
here on model output only behind gates: a prompting text reaches BFCL's decoder only when its
syntax tree holds no node that decoder evaluates (:func:`unsafe_text`), a Llama 3.1 text only when
it is literals and names ``eval`` cannot resolve (:func:`llama_unsafe`), and an entry reaches the
checker only when every decoded call is ``name(k=literal, ...)`` (nested calls allowed) whose
every called name is either an API method of the task's classes (BFCL runs it on its instance)
or a name that is no builtin and no global of BFCL's executor module (BFCL's ``eval`` raises
``NameError``). An entry that fails a gate is counted as not checked, with the reason; nothing of
it is evaluated.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import decimal
import functools
import importlib
import importlib.util
import inspect
import json
import sys
import types
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from prefixexec.adapters import AdapterOptions, bfcl
from prefixexec.adapters.bfcl import backend, decoders

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
    #: The decoder that read the file (BFCL-HANDLERS) and BFCL's decoder run as the reference.
    decoder: str = "api"
    reference: str = ""
    #: Per entry, the ``valid`` verdict of BFCL's own score file next to the result file (entries
    #: it does not list are valid), ``None`` when there is no score file.
    score: Mapping[str, bool] | None = None
    #: Tasks whose data differ between the version that wrote the score file and the installed
    #: one (:func:`changed_tasks`, given ``--data``): left out of the score-file comparison.
    changed: frozenset[str] = frozenset()
    #: Steps whose decoding BFCL's ``inference_log`` records, and on how many ours agrees with it
    #: (the same calls, or both a decoding error, or both no call).
    logged_steps: int = 0
    logged_agree: int = 0
    #: Logged steps not compared: texts BFCL's decoder evaluates as Python (not decoded here).
    logged_evaluated: int = 0
    #: The first few steps that disagree with the log: (task id, turn, step, logged, ours).
    logged_differences: tuple[tuple[str, int, int, str, str], ...] = ()

    @property
    def score_differences(self) -> tuple[tuple[str, bool, bool], ...]:
        """(task id, the score file's verdict, ours) where they differ."""
        if self.score is None:
            return ()
        return tuple(
            (t, self.score[t], ours)
            for t, _, ours in self.rows
            if self.score[t] != ours and t not in self.changed
        )

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
        text = (
            f"{self.path}: decoder {self.decoder} (reference: {self.reference}): {n} entries, "
            f"{checked} checked by BFCL's checker, {checked - diff}/{checked} agree "
            f"(BFCL valid {self.bfcl_valid}, ours {self.ours_valid})"
            + ("" if checked == n else f", {n - checked} not checked")
        )
        if self.score is not None:
            compared = n - len(self.changed & {t for t, _, _ in self.rows})
            agree = compared - len(self.score_differences)
            text += (
                f"; BFCL's score file: {sum(self.score.values())} valid, {agree}/{compared} agree with ours"
            )
            if compared != n:
                text += f" ({n - compared} tasks whose data changed since that version left out)"
        if self.logged_steps:
            text += f"; inference_log decodings: {self.logged_agree}/{self.logged_steps} steps agree"
            if self.logged_evaluated:
                text += f" ({self.logged_evaluated} more that BFCL evaluates as Python, not compared)"
        return text


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


#: BFCL's own handler class for each decoder of adapters/bfcl/decoders.py whose module imports
#: here (their vendor SDKs are absent: see :func:`_stand_ins`); the Gemini decoders' module needs
#: google-genai and is checked on crafted steps only.
HANDLERS: Mapping[str, tuple[str, ...]] = {
    "xlam": (
        "local_inference.salesforce_llama.SalesforceLlamaHandler",
        "local_inference.salesforce_qwen.SalesforceQwenHandler",
    ),
    "llama-3.1": ("local_inference.llama_3_1.LlamaHandler_3_1",),
    "tool-call-tags": (
        "local_inference.qwen_fc.QwenFCHandler",
        "local_inference.granite_4.Granite4FCHandler",
        "local_inference.pelican_vl_fc.PelicanVLFCHandler",
        "local_inference.nanbeige_fc.NanbeigeFCHandler",
    ),
    "json-calls": ("local_inference.bitagent.BitAgentHandler",),
    "hammer": ("local_inference.hammer.HammerHandler",),
    "falcon": ("local_inference.falcon_fc.Falcon3FCHandler",),
    "glm": ("local_inference.glm.GLMHandler",),
    "fc-list": (
        "local_inference.mistral_fc.MistralFCHandler",
        "local_inference.arch.ArchHandler",
        "local_inference.phi_fc.PhiFCHandler",
        "local_inference.granite_3.Granite3FCHandler",
    ),
    "phi": ("local_inference.phi.PhiHandler",),
    "nemotron": ("api_inference.nemotron.NemotronHandler",),
    "cohere": ("api_inference.cohere.CohereHandler",),
    "mining": ("api_inference.mining.MiningHandler",),
}

#: Vendor SDKs the handler modules import at module level, for clients ``decode_execute`` never
#: touches; stood in for while the modules are imported when they are not installed.
_SDKS = ("openai", "overrides", "cohere")


class _AbsentType(type):
    def __getattr__(cls, name: str) -> type:  # ``sdk.Module.Name`` in annotations and signatures
        return cls


class _Absent(metaclass=_AbsentType):
    """What a stood-in SDK name is: a class that refuses to be used."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        raise RuntimeError("a stood-in SDK class was used: the parity check must not reach it")


def _stand_in(name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    if name == "overrides":  # decorators that return the function; a plain base class
        module.__dict__.update(override=lambda f: f, final=lambda f: f, EnforceOverrides=object)
    else:
        module.__getattr__ = lambda attr: _Absent  # type: ignore[method-assign]  # module-level __getattr__
    return module


@contextlib.contextmanager
def _stand_ins() -> Iterator[None]:
    """Import-time stand-ins for the SDKs in :data:`_SDKS` that are not installed (removed after)."""
    added = [n for n in _SDKS if n not in sys.modules and importlib.util.find_spec(n) is None]
    for name in added:
        sys.modules[name] = _stand_in(name)
    try:
        yield
    finally:
        for name in added:
            sys.modules.pop(name, None)


@functools.cache
def handler_decoder(path: str) -> Callable[[Any], Any]:
    """``decode_execute`` of BFCL's handler ``path`` (under bfcl_eval.model_handler), bound to an
    instance made without ``__init__`` (which would start an SDK client)."""
    module_name, _, class_name = path.rpartition(".")
    with _stand_ins():
        module = importlib.import_module(f"bfcl_eval.model_handler.{module_name}")
    cls = getattr(module, class_name)
    handler = cls.__new__(cls)
    return lambda step: cls.decode_execute(handler, step, False)


def llama_unsafe(step: Any) -> str | None:
    """Why ``LlamaHandler_3_1.decode_execute`` must not see ``step`` (it runs ``eval`` on a text
    without ``;``), or None: handed over only a text whose tree is literals and names ``eval``
    cannot resolve (it computes the literal or raises), decoders._python_literal's own rule."""
    if not isinstance(step, str):
        return None
    text = step.replace("<|python_tag|>", "")
    if ";" in text or len(text) > decoders.MAX_STEP_CHARS:
        return None
    try:
        decoders._python_literal(text)
    except decoders._Evaluates as exc:
        return f"BFCL's Llama 3.1 decoder would eval {exc} in {text[:60]!r}"
    except decoders._Raises:
        return None
    return None


@attrs.frozen(slots=True)
class Reference:
    """BFCL's own decoding of a step for one of our decoders, and the gate in front of it."""

    name: str
    decode: Callable[[Any], Any]
    gate: Callable[[Any], str | None]


def _prompting_gate(transform: Callable[[str], str | None]) -> Callable[[Any], str | None]:
    def gate(step: Any) -> str | None:
        text = transform(step) if isinstance(step, str) else None
        return unsafe_text(text) if text is not None else None

    return gate


def _nemotron_body(text: str) -> str | None:
    bodies = decoders._tag_bodies(text, "<TOOLCALL>", "</TOOLCALL>", True)
    return bodies[0] if bodies else None


def reference(decoder: str, function_calling: bool, handler: int = 0) -> Reference | None:
    """BFCL's decoder for our ``decoder`` (``handler``: which of its handler classes), or None
    where BFCL's module cannot be imported here."""
    utils = importlib.import_module("bfcl_eval.model_handler.utils")
    if decoder == "api":
        decoder = "fc" if function_calling else "prompting"
    if decoder == "fc":
        return Reference("utils.convert_to_function_call", utils.convert_to_function_call, lambda step: None)
    if decoder == "prompting":
        return Reference(
            "utils.default_decode_execute_prompting",
            lambda step: utils.default_decode_execute_prompting(step, False),
            _prompting_gate(lambda text: text),
        )
    paths = HANDLERS.get(decoder)
    if paths is None:
        return None
    gates: dict[str, Callable[[Any], str | None]] = {
        "llama-3.1": llama_unsafe,
        "phi": _prompting_gate(lambda text: text.removeprefix("```json").removeprefix("```python")),
        "nemotron": _prompting_gate(_nemotron_body),
    }
    path = paths[handler]
    return Reference(
        path.rpartition(".")[2] + ".decode_execute",
        handler_decoder(path),
        gates.get(decoder, lambda step: None),
    )


def _decode(step: Any, ref: Reference) -> list[str] | None:
    """BFCL's decoding of one step: its call strings, or None when BFCL skips the step."""
    runner = importlib.import_module("bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils")
    try:
        decoded = ref.decode(step)
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


def bfcl_verdict(record: dict[str, Any], ref: Reference, index: int) -> Verdict:
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
            why = ref.gate(step)
            if why is not None:
                return Verdict(task_id, None, why)
            calls = _decode(step, ref)
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


def score_file(path: Path) -> Path | None:
    """BFCL's score file for a result file: ``.../result/<model>/[multi_turn/]X_result.json`` ->
    ``.../score/<model>/[multi_turn/]X_score.json`` (any folder above named with ``result``)."""
    parts = path.resolve().parts
    name = path.name.replace("_result.json", "_score.json")
    for i in range(len(parts) - 2, -1, -1):
        if "result" in parts[i]:
            candidate = Path(*parts[:i], parts[i].replace("result", "score"), *parts[i + 1 : -1], name)
            if candidate.is_file():
                return candidate
    return None


def score_verdicts(path: Path, ids: Sequence[str]) -> dict[str, bool]:
    """Per entry, ``valid`` as BFCL's score file says: its first line is the summary, every other
    line a failed entry; an entry not listed is valid. The summary's count is checked."""
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    failed = {line["id"] for line in lines[1:] if not line.get("valid", False)}
    verdicts = {task_id: task_id not in failed for task_id in ids}
    if lines[0].get("correct_count") != sum(verdicts.values()):
        raise ValueError(f"{path}: correct_count {lines[0].get('correct_count')} != {sum(verdicts.values())}")
    return verdicts


def changed_tasks(data: Path, category: str) -> set[str]:
    """The tasks of ``category`` whose data in another BFCL version's data folder ``data``
    (``BFCL_v<N>_<category>.json`` and ``possible_answer/``, as ``bfcl_eval/data`` lays them out)
    differ from the installed package's: ground truth, initial configuration, involved classes,
    missed functions or user turns. A score file written with that version is compared with ours
    only on the other tasks (BFCL's verdict depends on the data it was scored against)."""
    found = sorted(data.glob(f"BFCL_v*_{category}.json"))
    answers = sorted((data / "possible_answer").glob(f"BFCL_v*_{category}.json"))
    if not found or not answers:
        raise ValueError(f"{data}: no BFCL_v*_{category}.json with its possible_answer")
    rows = {}
    for line in found[-1].read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            rows[row["id"]] = row
    for line in answers[-1].read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            rows.setdefault(row["id"], {})["ground_truth"] = row["ground_truth"]
    installed = backend.entries(category)
    changed = set()
    for task_id, row in rows.items():
        entry = installed.get(task_id)
        users = [
            [m.get("content", "") for m in turn if m.get("role") == "user"]
            for turn in row.get("question", [])
        ]
        missed = {n: int(t) for t, names in row.get("missed_function", {}).items() for n in names}
        if entry is None or (
            [list(t) for t in entry.gold] != row.get("ground_truth")
            or backend.thaw(entry.initial_config) != row.get("initial_config", {})
            or list(entry.involved_classes) != row.get("involved_classes")
            or [list(t) for t in entry.questions] != users
            or dict(entry.missed) != missed
        ):
            changed.add(task_id)
    return changed


def _normal(call: str) -> str:
    """A call string in one spelling (BFCL's handlers join arguments with ``,`` or ``, ``)."""
    try:
        return ast.unparse(ast.parse(call, mode="eval"))
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return call.replace(", ", ",")  # not Python (an empty or odd name): the joins only


#: A step's decoding: ``("error",)``, ``("empty",)``, ``("eval",)`` (a text BFCL's decoder
#: evaluates as Python, not decoded here) or ``("calls", call, ...)``.
Decoding = tuple[str, ...]


def logged_steps(record: dict[str, Any]) -> Iterator[tuple[int, int, Decoding]]:
    """(turn, step, status) for each step whose decoding BFCL's ``inference_log`` records:
    ``error`` (``Error decoding the model response``), ``empty`` or the decoded calls."""
    log = record.get("inference_log")
    if not isinstance(log, list):
        return
    turns = [item for item in log if isinstance(item, dict) and "begin_of_turn_query" in item]
    for t, turn in enumerate(turns):
        for key, messages in turn.items():
            if not key.startswith("step_") or not isinstance(messages, list):
                continue
            for message in messages:
                if not (isinstance(message, dict) and message.get("role") == "handler_log"):
                    continue
                content = str(message.get("content", ""))
                if content.startswith("Error decoding"):
                    yield t, int(key[5:]), ("error",)
                elif content.startswith("Successfully decoded"):
                    calls = [str(c) for c in message.get("model_response_decoded") or []]
                    yield t, int(key[5:]), ("calls", *calls) if calls else ("empty",)
                break


def _ours(decoder: bfcl.decoders.Decoder, step: Any, function_calling: bool) -> Decoding:
    """Our decoding of a step in :func:`logged_steps`' terms."""
    decoded = bfcl.decoders.decode(decoder, step, function_calling=function_calling)
    if any((c.fault or "").startswith(decoders.EVAL_FAULT) for c in decoded.calls):
        return ("eval",)
    if any(c.decoded for c in decoded.calls):
        return ("calls", *(_spelled(c) for c in decoded.calls))
    return ("error",) if decoded.raises else ("empty",)


def _spelled(call: bfcl.parse.ParsedCall) -> str:
    """A decoded call as BFCL's decoders spell it, ``name(k=repr(v),...)`` (a call with a fault
    keeps no arguments: its text, which is cut at 2,000 characters with ``...``)."""
    if call.fault is not None:
        return call.text
    return f"{call.name}({','.join(f'{k}={v!r}' for k, v in call.kwargs)})"


def same_decoding(logged: Decoding, ours: Decoding) -> bool:
    """Whether a logged decoding is ours: the same kind and, call by call, the same call in one
    spelling, or ours a cut text (``...``) that the logged call starts with."""
    if len(logged) != len(ours) or logged[0] != ours[0]:
        return False
    return all(
        _normal(a) == _normal(b)
        or a == b.replace(",", ", ")  # not Python (a name '' or ' '): ours joins with ',', BFCL's ', '
        or (b.endswith("...") and a.startswith(b[:-3]))
        for a, b in zip(logged[1:], ours[1:], strict=True)
    )


def compare_file(path: Path, decoder: str | None = None, data: Path | None = None) -> FileParity:
    """BFCL's verdict and ours for every entry of one result file (``decoder``: ``--bfcl-decoder``;
    ``data``: the data folder of the BFCL version that wrote the score file, :func:`changed_tasks`)."""
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    model = path.resolve().parent.name
    if model == "multi_turn":
        model = path.resolve().parent.parent.name
    function_calling = bfcl.reader.function_calling(model, records)  # the adapter's own rule (BFCL-STEP)
    choice = decoders.choose(model, decoder)
    extra = {"bfcl_decoder": decoder} if decoder is not None else {}
    read = bfcl.read_results([str(path)], AdapterOptions(model=model, extra=extra))
    ours = {r.task_id: r.success for r in read.rollouts}
    ref = reference(choice.decoder.name, function_calling)
    rows = []
    for record in records:
        if ref is None:
            verdict = Verdict(record["id"], None, f"BFCL's {choice.decoder.source} does not import here")
        else:
            verdict = bfcl_verdict(record, ref, next(_counter))
        rows.append((record["id"], verdict, ours[record["id"]]))
    scores = score_file(path)
    logged = agree = evaluated = 0
    differences: list[tuple[str, int, int, str, str]] = []
    for record in records:
        if not isinstance(record["result"], list):
            continue
        for t, k, status in logged_steps(record):
            turn = record["result"][t] if t < len(record["result"]) else None
            if not isinstance(turn, list) or k >= len(turn):
                continue
            mine = _ours(choice.decoder, turn[k], function_calling)
            if mine == ("eval",):
                evaluated += 1
                continue
            logged += 1
            if same_decoding(status, mine):
                agree += 1
            elif len(differences) < 5:
                differences.append((record["id"], t, k, " ; ".join(status)[:120], " ; ".join(mine)[:120]))
    return FileParity(
        str(path),
        tuple(rows),
        decoder=choice.decoder.name,
        reference=ref.name if ref is not None else "none",
        score=score_verdicts(scores, [r["id"] for r in records]) if scores is not None else None,
        logged_steps=logged,
        logged_agree=agree,
        logged_evaluated=evaluated,
        changed=frozenset(changed_tasks(data, backend.category_of(records[0]["id"])))
        if data
        else frozenset(),
        logged_differences=tuple(differences),
    )


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
    decoder: str | None = None
    data: Path | None = None
    while argv and argv[0] in ("--bfcl-decoder", "--data"):
        if argv[0] == "--bfcl-decoder":
            decoder = argv[1]
        else:
            data = Path(argv[1])
        argv = argv[2:]
    total = checked = agree = 0
    status = 0
    for path in result_files(argv):
        parity = compare_file(path, decoder, data)
        print(parity.line())
        for task_id, verdict, ours in parity.differences:
            print(f"  DIFFERS {task_id}: BFCL {verdict.valid} ({verdict.why}), ours {ours}")
            status = 1
        for task_id, verdict, _ in parity.rows:
            if verdict.valid is None:
                print(f"  not checked {task_id}: {verdict.why}")
        for task_id, theirs, ours in parity.score_differences:
            print(f"  SCORE FILE DIFFERS {task_id}: BFCL's score file {theirs}, ours {ours}")
            status = 1
        for task_id, t, k, logged, mine in parity.logged_differences:
            print(f"  LOG DIFFERS {task_id} result[{t}][{k}]: logged {logged!r}, ours {mine!r}")
        total += len(parity.rows)
        checked += parity.checked
        agree += parity.checked - len(parity.differences)
    print(f"total: {total} entries, {checked} checked by BFCL's checker, {agree}/{checked} agree")
    return status


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
