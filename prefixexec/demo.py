"""The default demo: BFCL multi-turn gold trajectories and simulated agents (spec: REP-DEMO).

Data that really exists on a fresh machine: the BFCL multi-turn tasks shipped in the PyPI
package ``bfcl-eval`` (install with ``pip install --no-deps bfcl-eval==2026.3.23 mpmath``). A
stratified sample of 200 tasks (every 4th task of each of the four multi-turn categories, 50
each, as in the paper's design) is replayed with the BFCL adapter
(:func:`prefixexec.adapters.bfcl.replay_calls`) for

* ``gold``: the benchmark's ground-truth calls, unchanged; and
* four **simulated** agents, each a deterministic, documented perturbation of the gold calls
  (:data:`AGENTS`). They are not language models; every output labels them as simulated.

An agent perturbs a task only when its rule applies to the task and the task is selected for it:
``zlib.crc32(f"{agent}/{task_id}")`` is even (about half of the tasks, the same on every
machine). Otherwise it makes the gold calls. Outcomes and Y come from the adapter's replay, never
from this module: the perturbations only change call strings.

Call strings are read with :mod:`ast` (``mode="eval"``) and rebuilt with :func:`ast.unparse`;
nothing is evaluated.
"""

from __future__ import annotations

import ast
import json
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from prefixexec.kernel import ConditionKey, Rollout

#: Every outcome of the demo belongs to this dataset and model (one report block).
DATASET = "bfcl-multi-turn/demo-sample"
MODEL = "simulated-agents"
#: Method name of the unperturbed ground truth.
GOLD = "gold"
#: Tasks per category: every SAMPLE_STRIDE-th task in id order (0, 4, 8, ...).
SAMPLE_STRIDE = 4
#: The report's note: printed at the top of every readable output of the demo.
NOTE = (
    "SIMULATED DATA: except 'gold' (BFCL's ground-truth calls), every method is a simulated agent made "
    "by a deterministic perturbation of the gold calls, not a language model."
)
TITLE = "prefixexec demo: BFCL multi-turn, gold and simulated agents"

Turns = tuple[tuple[str, ...], ...]


@attrs.frozen(slots=True)
class TaskInfo:
    """What a perturbation may look at: the task id, its gold calls and held-out functions."""

    task_id: str
    gold: Turns
    #: miss_func: held-out function -> the turn at which it is offered.
    missed: Mapping[str, int]


# ------------------------------------------------------------------------------ call strings


def _call(text: str) -> tuple[str, ast.Call]:
    node = ast.parse(text, mode="eval").body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise ValueError(f"not a plain call: {text!r}")
    return node.func.id, node


def call_name(text: str) -> str:
    """The function name of a call string such as ``cd(folder='x')``."""
    return _call(text)[0]


def _positions(turns: Turns) -> list[tuple[int, int]]:
    return [(t, i) for t, turn in enumerate(turns) for i in range(len(turn))]


def _replace(turns: Turns, t: int, new_turn: Sequence[str]) -> Turns:
    return tuple(tuple(new_turn) if j == t else turn for j, turn in enumerate(turns))


# ------------------------------------------------------------------------------ perturbations

#: Set-up calls that later calls depend on (working directory, log-ins, vehicle start-up steps).
PRECONDITION_CALLS = frozenset(
    {
        "cd",
        "authenticate_twitter",
        "authenticate_travel",
        "message_login",
        "ticket_login",
        "lockDoors",
        "pressBrakePedal",
    }
)
#: The value an agent invents for an id argument, by the gold value's type.
INVENTED_STR = "ID-404-INVENTED"
INVENTED_INT = 404404


def skips_precondition(task: TaskInfo) -> Turns | None:
    """Drops the first gold call to a set-up function (:data:`PRECONDITION_CALLS`)."""
    for t, i in _positions(task.gold):
        if call_name(task.gold[t][i]) in PRECONDITION_CALLS:
            turn = task.gold[t]
            return _replace(task.gold, t, turn[:i] + turn[i + 1 :])
    return None


def invents_id(task: TaskInfo) -> Turns | None:
    """In the first gold call with an ``..._id`` keyword argument, replaces its value by an invented one."""
    for t, i in _positions(task.gold):
        _, node = _call(task.gold[t][i])
        for kw in node.keywords:
            if kw.arg is not None and kw.arg.endswith("_id") and isinstance(kw.value, ast.Constant):
                value = kw.value.value
                kw.value = ast.Constant(INVENTED_INT if isinstance(value, int) else INVENTED_STR)
                turn = list(task.gold[t])
                turn[i] = ast.unparse(node)
                return _replace(task.gold, t, turn)
    return None


def calls_before_offered(task: TaskInfo) -> Turns | None:
    """miss_func tasks: the first gold call of a held-out function is made one turn early.

    It is taken out of the turn at which the function is offered and appended to the previous
    turn; other categories have no held-out function and are left unchanged.
    """
    for t, i in _positions(task.gold):
        offered = task.missed.get(call_name(task.gold[t][i]))
        if offered is not None and offered == t and t > 0:
            call = task.gold[t][i]
            moved = _replace(task.gold, t, task.gold[t][:i] + task.gold[t][i + 1 :])
            return _replace(moved, t - 1, (*moved[t - 1], call))
    return None


def retries_after_error(task: TaskInfo) -> Turns | None:
    """Before the middle gold call (the first one from the middle on with a keyword argument),
    makes the same call with its first keyword misspelt (last letter dropped, ``cd(folde=...)``),
    which fails; then makes the correct call: a recovery by retrying correctly.
    """
    positions = _positions(task.gold)
    for t, i in positions[len(positions) // 2 :]:
        _, node = _call(task.gold[t][i])
        if node.keywords and node.keywords[0].arg is not None:
            key = node.keywords[0].arg
            node.keywords[0].arg = key[:-1] if len(key) > 1 else key + key
            turn = task.gold[t]
            return _replace(task.gold, t, (*turn[:i], ast.unparse(node), *turn[i:]))
    return None


@attrs.frozen(slots=True)
class Agent:
    """A simulated agent: its method name (marked simulated), rule name, description and rule."""

    method: str
    rule: str
    description: str
    perturb: Callable[[TaskInfo], Turns | None]


def _agent(rule: str, function: Callable[[TaskInfo], Turns | None], description: str) -> Agent:
    return Agent(f"{rule} (simulated)", rule, description, function)


#: The simulated agents (the tables sort methods by name).
AGENTS: tuple[Agent, ...] = (
    _agent(
        "skips-precondition",
        skips_precondition,
        "drops the first gold call to a set-up function ("
        + ", ".join(f"`{name}`" for name in sorted(PRECONDITION_CALLS))
        + ").",
    ),
    _agent(
        "invents-id",
        invents_id,
        "in the first gold call with a keyword argument named `..._id`, replaces its value by an invented "
        f"one (`{INVENTED_STR!r}`, or `{INVENTED_INT}` for an integer).",
    ),
    _agent(
        "calls-before-offered",
        calls_before_offered,
        "in miss_func tasks, makes the first gold call of a held-out function one turn early (at the end of "
        "the turn before the one that offers it); other categories hold nothing out.",
    ),
    _agent(
        "retries-after-error",
        retries_after_error,
        "before the middle gold call (the first from the middle on with a keyword argument), makes the same "
        "call with its first keyword misspelt (last letter dropped, e.g. `cd(folde='x')`), which fails, "
        "then the correct call: a recovery by retrying correctly.",
    ),
)


def selected(agent: Agent, task_id: str) -> bool:
    """Whether ``agent`` perturbs ``task_id``: ``crc32("<rule>/<task id>")`` is even."""
    return zlib.crc32(f"{agent.rule}/{task_id}".encode()) % 2 == 0


def agent_turns(agent: Agent, task: TaskInfo) -> Turns | None:
    """The calls ``agent`` makes on ``task``; ``None`` when it makes the gold calls."""
    return agent.perturb(task) if selected(agent, task.task_id) else None


# ------------------------------------------------------------------------------ tasks and replay


def sample_tasks() -> list[TaskInfo]:
    """Every SAMPLE_STRIDE-th task (by index) of each multi-turn category: 4 x 50 = 200 tasks.

    Raises :class:`prefixexec.adapters.InputError` (with the install command) when ``bfcl-eval``
    is not installed.
    """
    from prefixexec.adapters.bfcl import backend

    backend.package()
    tasks: list[TaskInfo] = []
    for category in backend.CATEGORIES:
        entries = backend.entries(category)
        ids = sorted(entries, key=lambda tid: int(tid.rsplit("_", 1)[1]))
        for tid in ids[::SAMPLE_STRIDE]:
            entry = entries[tid]
            tasks.append(TaskInfo(tid, entry.gold, dict(entry.missed)))
    return tasks


@attrs.frozen(slots=True)
class DemoRollout:
    """One replayed rollout of the demo, with the calls it made (for ``records.jsonl``)."""

    rollout: Rollout
    turns: Turns
    perturbed: bool
    rule: str | None


def simulate(tasks: Sequence[TaskInfo], step: Callable[[str], None] | None = None) -> list[DemoRollout]:
    """Replay gold and every simulated agent on ``tasks`` with the BFCL adapter."""
    from prefixexec.adapters import bfcl

    out: list[DemoRollout] = []
    for method, agent in [(GOLD, None), *((a.method, a) for a in AGENTS)]:
        if step is not None:
            step(f"replaying {method}")
        key = ConditionKey(DATASET, MODEL, method)
        for task in tasks:
            changed = None if agent is None else agent_turns(agent, task)
            turns = task.gold if changed is None else changed
            evaluation = bfcl.replay_calls(task.task_id, [list(t) for t in turns])
            meta: dict[str, object] = {
                "simulated": agent is not None,
                "perturbed": changed is not None,
            }
            rollout = Rollout(key, task.task_id, 0, evaluation.outcome, bool(evaluation.success), meta)
            out.append(
                DemoRollout(rollout, turns, changed is not None, None if agent is None else agent.rule)
            )
    return out


def records_jsonl(rollouts: Sequence[DemoRollout]) -> str:
    """The demo's rollouts as prefixexec records (REC-OUTCOME), with the calls in ``meta``.

    ``prefixexec score records.jsonl`` reproduces the demo's numbers from this file.
    """
    lines = []
    for d in rollouts:
        r = d.rollout
        outcome: dict[str, Any] = {"T": r.outcome.T, "fed": r.outcome.fed}
        if r.outcome.label is not None:
            outcome["label"] = r.outcome.label.value
        if r.outcome.reason is not None:
            outcome["reason"] = r.outcome.reason
        record = {
            "dataset": r.condition.dataset,
            "model": r.condition.model,
            "method": r.condition.method,
            "task_id": r.task_id,
            "success": r.success,
            "outcome": outcome,
            "meta": {
                "simulated": d.rule is not None,
                "rule": d.rule,
                "perturbed": d.perturbed,
                "calls": [list(t) for t in d.turns],
            },
        }
        lines.append(json.dumps(record, ensure_ascii=False, sort_keys=False))
    return "\n".join(lines) + "\n"


def _bfcl_version() -> str:
    from prefixexec.adapters.bfcl import backend

    return backend.installed_version() or "(version unknown)"


def agents_markdown() -> str:
    """``agents.md``: what each simulated agent does (the documented perturbations)."""
    lines = [
        "# The demo's agents",
        "",
        NOTE,
        "",
        f"Tasks: every {SAMPLE_STRIDE}th task of each BFCL multi-turn category in the installed "
        f"`bfcl-eval` {_bfcl_version()} (50 per category, 200 in all), replayed with prefixexec's "
        "BFCL adapter.",
        "",
        "- `gold`: BFCL's ground-truth calls, unchanged.",
    ]
    for agent in AGENTS:
        lines.append(f"- `{agent.method}`: {agent.description}")
    lines += [
        "",
        'A simulated agent perturbs a task only when its rule applies and `crc32("<rule>/<task id>")` '
        "is even (about half of the tasks); otherwise it makes the gold calls. Each rollout's calls "
        "are in `records.jsonl` (`meta.calls`).",
    ]
    return "\n".join(lines) + "\n"


from prefixexec._callable import make_callable  # noqa: E402  # API-COMMANDS: prefixexec.demo(...) runs the command

make_callable(__name__)
