"""Cost of a monitor ``check`` next to the cost of executing the call it checks (issue 18).

Two cases, measured in the same run with :func:`time.perf_counter_ns`, median of repeated timings:

* BFCL: ``PrefixMonitor(BfclLiveSemantics(), run).check(call)`` (a copy of the live instances,
  BFCL-EXEC's checks and the call run on the copy) against executing the call on the live
  instances (the bound method of the BFCL class, what BFCL itself does), for each ground-truth
  call of a few multi-turn tasks, at the point of the trajectory where it is made.
* JSON Schema: ``PrefixMonitor(SCHEMA, task).check(call)`` against calling a trivial tool
  (``add(x, y)``, a Python function) and against the same tool run by inspect_ai's
  ``execute_tools`` if inspect_ai is installed.

Usage: ``python benchmarks/monitor_cost.py [--repeat N]``. Prints one line per case with the
median cost per check, per execution, and their ratio.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from prefixexec.adapters import bfcl as bfcl_adapter
from prefixexec.adapters.bfcl import backend
from prefixexec.adapters.bfcl.execute import bind
from prefixexec.adapters.bfcl.semantics import run_from_strings
from prefixexec.integrations.monitors import SCHEMA, BfclLiveSemantics, schema_task
from prefixexec.kernel import PrefixMonitor, ToolCall

TASKS = ("multi_turn_base_0", "multi_turn_base_1", "multi_turn_base_2", "multi_turn_base_3")


def median_ns(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - start)
    return statistics.median(times)


def bfcl_costs(repeat: int) -> tuple[list[float], list[float], list[float]]:
    """Per ground-truth call: median ns of check, of execution, and of the fork alone."""
    checks: list[float] = []
    executions: list[float] = []
    forks: list[float] = []
    for task_id in TASKS:
        run = run_from_strings(bfcl_adapter.task(task_id), bfcl_adapter.gold_turns(task_id))
        semantics = BfclLiveSemantics()
        monitor: PrefixMonitor[Any, Any] = PrefixMonitor(semantics, run)
        for action in run.actions:
            checks.append(median_ns(partial(monitor.check, action), repeat))
            forks.append(median_ns(partial(semantics.fork, monitor.state), repeat))
            # executing the call: the bound BFCL method on a fresh copy of the live state each
            # time (the copy is made outside the timed part), as BFCL runs a call
            world = monitor.state.world
            info = world.method(action.call.name)
            assert info is not None, action.call.text
            bound = bind(info, action.call.args, action.call.kwargs)
            assert isinstance(bound, dict), bound
            samples = []
            for _ in range(repeat):
                twin = semantics.fork(monitor.state).world
                start = time.perf_counter_ns()
                with backend.utc():
                    getattr(twin.instances[info.cls], info.name)(**bound)
                samples.append(time.perf_counter_ns() - start)
            executions.append(statistics.median(samples))
            monitor.commit(action)
    return checks, executions, forks


ADD_SPEC = {
    "name": "add",
    "parameters": {
        "type": "object",
        "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
        "required": ["x", "y"],
        "additionalProperties": False,
    },
}


def add(x: int, y: int) -> int:
    return x + y


def schema_costs(repeat: int) -> tuple[float, float, float | None]:
    monitor = PrefixMonitor(SCHEMA, schema_task([ADD_SPEC]))
    call = ToolCall("add", {"x": 2, "y": 3}, "c1")
    check = median_ns(lambda: monitor.check(call), repeat)
    direct = median_ns(lambda: add(**call.arguments), repeat)
    return check, direct, inspect_cost(repeat)


def inspect_cost(repeat: int) -> float | None:
    """Median ns of inspect_ai's ``execute_tools`` running one ``add`` call (None: no inspect_ai)."""
    try:
        import anyio
        from inspect_ai.model import ChatMessageAssistant, execute_tools
        from inspect_ai.tool import Tool, tool
        from inspect_ai.tool import ToolCall as InspectCall
    except ImportError:
        return None

    @tool
    def add_tool() -> Tool:
        async def execute(x: int, y: int) -> int:
            """Add two integers.

            Args:
                x: The first integer.
                y: The second integer.
            """
            return x + y

        return execute

    tools = [add_tool()]
    message = ChatMessageAssistant(
        content="", tool_calls=[InspectCall(id="c1", function="add_tool", arguments={"x": 2, "y": 3})]
    )

    async def timed() -> list[int]:
        samples = []
        for _ in range(repeat):
            start = time.perf_counter_ns()
            await execute_tools([message], tools)
            samples.append(time.perf_counter_ns() - start)
        return samples

    return float(statistics.median(anyio.run(timed)))


def us(ns: float) -> str:
    return f"{ns / 1000:9.2f} us"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args(argv)
    checks, executions, forks = bfcl_costs(args.repeat)
    check, direct, via_inspect = schema_costs(args.repeat * 20)
    total_check, total_exec = sum(checks), sum(executions)
    print(f"monitor cost per check (median of {args.repeat} timings per call; same run)")
    print(
        f"BFCL   {len(checks)} gold calls of {', '.join(TASKS)}: check {us(total_check / len(checks))} "
        f"execute {us(total_exec / len(executions))} ratio {total_check / total_exec:8.1f}x (mean per call)"
    )
    print(
        f"BFCL   of which copying the live instances (fork): {us(sum(forks) / len(forks))} "
        f"({sum(forks) / total_check:.0%} of the check)"
    )
    ratios = sorted(c / e for c, e in zip(checks, executions, strict=True))
    print(
        f"BFCL   per-call ratio check/execute: min {ratios[0]:.1f}x median "
        f"{statistics.median(ratios):.1f}x max {ratios[-1]:.1f}x"
    )
    print(f"schema check {us(check)} execute add() {us(direct)} ratio {check / direct:8.1f}x")
    if via_inspect is not None:
        print(
            f"schema check {us(check)} inspect execute_tools(add) {us(via_inspect)} "
            f"ratio {check / via_inspect:8.3f}x"
        )
    else:
        print("schema: inspect_ai not installed, execute_tools not timed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
