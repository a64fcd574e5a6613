"""Benchmarks' own task lists, for drawing a sample before a model runs (spec: SAMPLE-TASKLIST-*).

``prefixexec sample`` draws from the tasks of results (any adapter) or, before anything has run,
from the task list a benchmark ships:

* BFCL: the installed ``bfcl-eval`` package's ``data/BFCL_v<N>_multi_turn_<category>.json`` files
  (``--benchmark bfcl``: every multi-turn category present; or such files by name), JSON lines with
  an ``id``; strata are the categories (``bfcl-multi-turn/<category>``, the BFCL adapter's datasets);
* tau2 / tau^3: a domain's ``tasks.json`` (a JSON list of tasks with ``id``), restricted to the
  ``--split`` of the ``split_tasks.json`` beside it (default ``base``, as ``tau2 run`` does);
  the stratum is the domain (``tau-bench/<domain>``);
* tau-bench v1: a task module such as ``tau_bench/envs/airline/tasks_test.py``, read with
  :mod:`ast` (never imported or run): its one top-level list of ``Task(...)`` calls or dicts;
  task ids are the list indices, as ``run.py --task-ids`` takes them; the stratum is the domain;
* ToolSandbox: a ``result_summary.json`` (scenario names and categories; no trajectories needed);
* any benchmark: ``--tasks FILE``, one task a line, ``ID`` or ``ID<TAB>STRATUM[<TAB>STRATUM...]``.

Each list knows the form its runner takes the ids in (:attr:`TaskList.runner`).
"""

from __future__ import annotations

import ast
import json
import os
import re
from collections.abc import Mapping, Sequence

import attrs

from prefixexec.adapters.errors import InputError
from prefixexec.adapters.inputs import plain_name
from prefixexec.adapters.numbers import ascii_digits, json_fault

#: BFCL's data files (not its result or score files).
BFCL_DATA = re.compile(r"^(BFCL_v(\d+))_(multi_turn_[a-z_]+)\.json$")
#: Largest task list read (bytes); the benchmarks' own are below 10 MiB.
MAX_BYTES = 256 * 1024 * 1024
#: What a list without strata is stratified by.
ONE_STRATUM = "tasks"


@attrs.frozen(slots=True)
class TaskList:
    """Task id -> strata, where the list came from, and how its runner takes ids.

    ``runner`` is ``"bfcl"`` (BFCL's ``--run-ids`` id file: category -> ids), ``"tau2"``,
    ``"tau-bench"``, ``"toolsandbox"`` or ``"list"``; ``domain`` is the tau domain (for the hint).
    """

    tasks: Mapping[str, frozenset[str]]
    source: str
    runner: str
    domain: str | None = None
    #: tau-bench v1: the task split of the module (``tasks_test.py``: ``test``), for ``--task-split``.
    split: str | None = None


def _read_text(path: str) -> str:
    """A task list's text, opened with the checks of every input (HOSTILE-PSEUDO, HOSTILE-FIFO,
    HOSTILE-READ: no device, pipe or pseudo-file) and at most :data:`MAX_BYTES` long."""
    from prefixexec.adapters.inputs import check_input_file, read_text

    check_input_file(path)
    try:
        if not os.path.isfile(path):
            raise InputError(path, "not a regular file")
        if os.path.getsize(path) > MAX_BYTES:
            raise InputError(path, f"a task list larger than {MAX_BYTES} bytes")
    except OSError as exc:
        raise InputError(path, f"cannot read it: {exc.strerror or exc}") from None
    return read_text(path, "a task list")


def _json(path: str, text: str) -> object:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}", f"not valid JSON: {exc.msg}") from None
    except RecursionError:
        raise InputError(path, "JSON nested too deeply") from None
    except ValueError as exc:  # HOSTILE-BIGINT: an integer beyond Python's limit on digits
        raise InputError(path, f"not valid JSON: {json_fault(exc)}") from None


def kind(path: str) -> str | None:
    """Which task list ``path`` is (``bfcl``, ``tau2``, ``tau-bench``, ``toolsandbox``), or ``None``
    when it is not one (results, to be read with an adapter)."""
    name = plain_name(os.path.basename(path))  # INPUT-COMPRESSED: a .gz or .zst copy
    if os.path.isdir(path):
        return None
    if BFCL_DATA.match(name):
        return "bfcl"
    if name.endswith(".py"):
        return "tau-bench"
    if name == "result_summary.json":
        return "toolsandbox"
    if name.endswith(".json"):
        from prefixexec.adapters.inputs import open_binary

        try:
            with open_binary(path) as handle:  # the checks of every input: no FIFO, no pseudo-file
                head = handle.read(1 << 16).lstrip()
        except (OSError, InputError):
            return None  # read as results, whose reader says what is wrong with the file
        if head.startswith(b"[") and re.search(rb'"user_scenario"|"evaluation_criteria"', head):
            return "tau2"
    return None


def _bfcl_ids(path: str, text: str) -> list[str]:
    ids: list[str] = []
    for number, line in enumerate(text.split("\n"), start=1):  # HOSTILE-LINES
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError) as exc:  # HOSTILE-BIGINT: ValueError, not only JSON's
            what = json_fault(exc) if not isinstance(exc, RecursionError) else "nested too deeply"
            raise InputError(
                f"{path}:{number}", f"not a JSON object (BFCL data: one a line): {what}"
            ) from None
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str) or not entry["id"]:
            raise InputError(f"{path}:{number}", "a BFCL task needs a non-empty string 'id'")
        ids.append(entry["id"])
    if not ids:
        raise InputError(path, "no BFCL task in the file")
    return ids


def _unique(path: str, pairs: Sequence[tuple[str, frozenset[str]]]) -> dict[str, frozenset[str]]:
    out: dict[str, frozenset[str]] = {}
    for task, labels in pairs:
        if task in out:
            raise InputError(path, f"task id {task!r} is listed twice")
        out[task] = labels
    return out


def bfcl_files(paths: Sequence[str]) -> TaskList:
    """BFCL data files given by name (``BFCL_v4_multi_turn_base.json``, ...)."""
    pairs: list[tuple[str, frozenset[str]]] = []
    versions = set()
    for path in paths:
        match = BFCL_DATA.match(plain_name(os.path.basename(path)))
        assert match is not None
        versions.add(match.group(1))
        category = match.group(3)
        pairs += [(t, frozenset({f"bfcl-multi-turn/{category}"})) for t in _bfcl_ids(path, _read_text(path))]
    return TaskList(_unique(paths[0], pairs), f"BFCL data files ({', '.join(sorted(versions))})", "bfcl")


def bfcl_installed() -> TaskList:
    """Every multi-turn category of the installed ``bfcl-eval`` (the newest ``BFCL_v<N>`` of each)."""
    from importlib import resources

    from prefixexec.adapters.bfcl.backend import installed_version, package

    package()  # an InputError naming the pip install when bfcl-eval is missing
    data = resources.files("bfcl_eval").joinpath("data")
    newest: dict[str, tuple[int, str, str]] = {}
    for item in data.iterdir():
        match = BFCL_DATA.match(item.name)
        if match:
            version, category = int(match.group(2)), match.group(3)
            if category not in newest or version > newest[category][0]:
                newest[category] = (version, match.group(1), item.name)
    if not newest:
        raise InputError("bfcl-eval", "the installed package has no multi-turn data file")
    pairs: list[tuple[str, frozenset[str]]] = []
    for category, (_, _, name) in sorted(newest.items()):
        text = data.joinpath(name).read_text(encoding="utf-8")
        pairs += [(t, frozenset({f"bfcl-multi-turn/{category}"})) for t in _bfcl_ids(name, text)]
    prefixes = ", ".join(sorted({p for _, p, _ in newest.values()}))
    source = f"bfcl-eval {installed_version()} ({prefixes}: {', '.join(sorted(newest))})"
    return TaskList(_unique("bfcl-eval", pairs), source, "bfcl")


def _tau_domain(path: str) -> str | None:
    """The domain of a task file in a benchmark's tree (``.../domains/<d>/tasks.json``,
    ``.../envs/<d>/tasks_test.py``), else ``None``."""
    parent = os.path.dirname(os.path.abspath(path))
    grand = os.path.basename(os.path.dirname(parent))
    return os.path.basename(parent) if grand in ("domains", "envs") else None


def tau2_tasks(path: str, split: str | None) -> TaskList:
    """A tau2 ``tasks.json``, in the ``split`` of ``split_tasks.json`` beside it (default ``base``)."""
    tasks = _json(path, _read_text(path))
    if not isinstance(tasks, list) or not tasks:
        raise InputError(path, "a tau2 tasks.json is a non-empty JSON list of tasks")
    ids: list[str] = []
    domains: set[str] = set()
    for index, task in enumerate(tasks):
        if not isinstance(task, dict) or not isinstance(task.get("id"), str) or not task["id"]:
            raise InputError(f"{path}: task {index}", "a tau2 task needs a non-empty string 'id'")
        ids.append(task["id"])
        instructions = (task.get("user_scenario") or {}).get("instructions")
        if isinstance(instructions, dict) and isinstance(instructions.get("domain"), str):
            domains.add(instructions["domain"])
    domain = _tau_domain(path) or (domains.pop() if len(domains) == 1 else None)
    split_file = os.path.join(os.path.dirname(path), "split_tasks.json")
    shown = path
    if os.path.isfile(split_file):
        splits = _json(split_file, _read_text(split_file))
        name = split or "base"
        if not isinstance(splits, dict) or not all(isinstance(v, list) for v in splits.values()):
            raise InputError(split_file, "a split file maps split names to lists of task ids")
        if name not in splits:
            raise InputError("--split", f"{split_file} has no split {name!r} (splits: {', '.join(splits)})")
        wanted = {str(t) for t in splits[name]}
        ids = [t for t in ids if t in wanted]
        shown = f"{path}, split {name}"
    elif split is not None:
        raise InputError("--split", f"no split_tasks.json beside {path}")
    label = f"tau-bench/{domain}" if domain else ONE_STRATUM
    tasks = _unique(path, [(t, frozenset({label})) for t in ids])
    return TaskList(tasks, f"tau2 tasks ({shown})", "tau2", domain)


def _task_list_node(path: str, module: ast.Module) -> ast.List:
    """The module's one top-level ``NAME = [Task(...) or {...}, ...]``."""
    found = []
    for node in module.body:
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        if (
            isinstance(value, ast.List)
            and value.elts
            and all(
                isinstance(e, ast.Dict) or (isinstance(e, ast.Call) and getattr(e.func, "id", None) == "Task")
                for e in value.elts
            )
        ):
            found.append(value)
    if len(found) != 1:
        raise InputError(
            path,
            "a tau-bench v1 task module has one top-level list of Task(...) calls or dicts "
            f"(found {len(found)})",
        )
    return found[0]


def taubench_tasks(path: str) -> TaskList:
    """A tau-bench v1 task module, parsed (never run); ids are list indices, as ``run.py`` takes them."""
    text = _read_text(path)
    try:
        module = ast.parse(text, filename=path)
    except SyntaxError as exc:
        raise InputError(f"{path}:{exc.lineno}", f"not Python source: {exc.msg}") from None
    except (RecursionError, MemoryError, ValueError):
        raise InputError(path, "cannot be parsed (nested too deeply or not text)") from None
    count = len(_task_list_node(path, module).elts)
    domain = _tau_domain(path)
    label = f"tau-bench/{domain}" if domain else ONE_STRATUM
    pairs = [(str(i), frozenset({label})) for i in range(count)]
    match = re.match(r"^tasks_([a-z]+)\.py$", plain_name(os.path.basename(path)))
    split = match.group(1) if match else None
    return TaskList(_unique(path, pairs), f"tau-bench v1 tasks ({path})", "tau-bench", domain, split)


def toolsandbox_summary(paths: Sequence[str]) -> TaskList:
    """Scenario names and categories of ToolSandbox ``result_summary.json`` files."""
    found: dict[str, set[str]] = {}
    for path in paths:
        summary = _json(path, _read_text(path))
        rows = summary.get("per_scenario_results") if isinstance(summary, dict) else None
        if not isinstance(rows, list):
            raise InputError(path, "a ToolSandbox result_summary.json has a list 'per_scenario_results'")
        for index, row in enumerate(rows):
            name = row.get("name") if isinstance(row, dict) else None
            categories = row.get("categories", []) if isinstance(row, dict) else None
            if not isinstance(name, str) or not name or not isinstance(categories, list):
                raise InputError(
                    f"{path}: per_scenario_results[{index}]", "needs a string 'name' and a list 'categories'"
                )
            found.setdefault(name, set()).update(str(c) for c in categories)
    tasks = {name: frozenset(cs or {"toolsandbox"}) for name, cs in found.items()}
    return TaskList(tasks, f"ToolSandbox scenarios ({', '.join(paths)})", "toolsandbox")


def plain_list(path: str) -> TaskList:
    """``--tasks FILE``: one task a line, ``ID`` or ``ID<TAB>STRATUM[<TAB>...]`` (``#`` comments)."""
    pairs: list[tuple[str, frozenset[str]]] = []
    for line in _read_text(path).split("\n"):  # HOSTILE-LINES: not at U+2028, U+0085, \f or a lone \r
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        task, *labels = [part.strip() for part in line.split("\t")]
        if not task:
            raise InputError(path, f"a line without a task id: {line!r}")
        pairs.append((task, frozenset(label for label in labels if label) or frozenset({ONE_STRATUM})))
    if not pairs:
        raise InputError(path, "no task in the list")
    return TaskList(_unique(path, pairs), f"task list ({path})", "list")


def read(paths: Sequence[str], split: str | None = None) -> TaskList | None:
    """The task list of ``paths`` when they are one benchmark's task list, else ``None``.

    Files of one kind only; a tau2 or tau-bench v1 list is one file (one domain at a time, as
    the runners take them).
    """
    kinds = {p: kind(p) for p in paths}
    found = set(kinds.values())
    if found == {None}:
        if split is not None:
            raise InputError("--split", "only applies to a tau2 tasks.json")
        return None
    if len(found) > 1:
        shown = ", ".join(f"{p} ({k or 'results'})" for p, k in kinds.items())
        raise InputError("sample", f"the inputs are of different kinds: {shown}; sample one kind at a time")
    (what,) = found
    if split is not None and what != "tau2":
        raise InputError("--split", "only applies to a tau2 tasks.json")
    if what in ("tau2", "tau-bench") and len(paths) > 1:
        raise InputError("sample", f"give one {what} task file at a time (one domain per run of its runner)")
    if what == "bfcl":
        return bfcl_files(paths)
    if what == "tau2":
        return tau2_tasks(paths[0], split)
    if what == "tau-bench":
        return taubench_tasks(paths[0])
    return toolsandbox_summary(paths)


def _bfcl_order(task: str) -> tuple[str, int, str]:
    head, _, tail = task.rpartition("_")
    return (head, int(tail) if ascii_digits(tail) and len(tail) < 100 else -1, task)  # HOSTILE-DIGITS


def bfcl_id_file(tasks: Sequence[str]) -> str:
    """BFCL's ``test_case_ids_to_generate.json`` (``bfcl generate --run-ids``): category -> ids."""
    from prefixexec.adapters.bfcl.backend import category_of

    by_category: dict[str, list[str]] = {}
    for task in sorted(tasks, key=_bfcl_order):
        by_category.setdefault(category_of(task), []).append(task)
    return json.dumps(dict(sorted(by_category.items())), indent=4) + "\n"


#: Ids that a shell passes through ``$(cat FILE)`` unchanged (no glob or quote characters).
_PLAIN = re.compile(r"^[A-Za-z0-9_.:,+=@%/-]+$")


def runner_hint(tasklist: TaskList, tasks: Sequence[str], output: str | None, fmt: str) -> str | None:
    """How the benchmark's runner is given the sample (one line), or ``None`` without a runner."""
    import shlex

    file = shlex.quote(output) if output else "FILE"
    if tasklist.runner == "bfcl":
        if fmt != "bfcl":
            return None
        return (
            f"copy {file} to $BFCL_PROJECT_ROOT/test_case_ids_to_generate.json, then: "
            "bfcl generate --model MODEL --run-ids"
        )
    # HOSTILE-SHELL: the domain and split come from the task list (a folder's name, a field):
    # quoted, so that pasting the command never runs what they hold (`x$(touch PWNED)`)
    domain = shlex.quote(tasklist.domain) if tasklist.domain else None
    words = {
        "tau2": f"tau2 run --domain {domain or 'DOMAIN'} --task-ids",
        "tau-bench": f"python run.py --env {domain or 'ENV'}"
        + (f" --task-split {shlex.quote(tasklist.split)}" if tasklist.split else "")
        + " --task-ids",
        "toolsandbox": "tool_sandbox --scenarios",
    }.get(tasklist.runner)
    if words is None:
        return None
    if all(_PLAIN.fullmatch(t) for t in tasks):  # fullmatch: "$" would let a final "\n" through
        return f"{words} $(cat {file})"
    return f"xargs -d '\\n' -a {file} {words}"  # ids with spaces or glob characters: one per line
