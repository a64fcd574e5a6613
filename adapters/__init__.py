"""Adapters: benchmark semantics and record readers, each turning input files into rollouts.

Every adapter is a function ``read(paths, options) -> list[Rollout]`` registered in
:data:`ADAPTERS` with a one-line description; it validates all of its input before returning
and raises :class:`InputError` (naming file and line or record) on bad input. Adapters import
the kernel, never the CLI.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from .errors import InputError

if TYPE_CHECKING:
    from prefixexec.kernel import Rollout

    from .audit import AuditReport

#: The adapter modules, imported on first use: reading records loads no other adapter (issue 16).
_MODULES = (
    "agents_sdk",
    "atif",
    "bfcl",
    "chat",
    "harness",
    "inspect_logs",
    "langsmith_runs",
    "limits",
    "mlflow_traces",
    "openinference",
    "otel",
    "parquet",
    "records",
    "taubench",
    "toolsandbox",
)


def __getattr__(name: str) -> Any:
    """An adapter module, imported when first asked for (PEP 562)."""
    if name in _MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _module(name: str) -> Any:
    return importlib.import_module(f"{__name__}.{name}")


#: ``--system-from``: what one system is when several runs share a condition's task ids.
#: ``pooled``: several runs of one system are its trials, in the order given (TAU-POOL);
#: ``file``: each file given is its own system (TAU-SYSTEM-FILE). The value ``file`` means the
#: same in ``leaderboard``'s ``--system-from``.
SYSTEM_FROM = ("pooled", "file")


@attrs.frozen(slots=True)
class AdapterOptions:
    """Options the command line passes to every adapter (each uses what applies to it)."""

    model: str | None = None
    method: str | None = None
    #: BFCL: restrict to one category (e.g. ``multi_turn_base``).
    category: str | None = None
    #: ToolSandbox: similarity threshold for Y; inspect_ai: score threshold for numeric values.
    threshold: float | None = None
    #: inspect_ai: the scorer whose value is Y (default: the first).
    scorer: str | None = None
    #: chat transcripts: a regex that marks a tool result as an error.
    error_pattern: str | None = None
    #: ToolSandbox: ``"category"`` splits the dataset by scenario category.
    by: str | None = None
    #: ``--label-rules FILE``: user label families for text-labelled adapters (LABEL-RULES).
    label_rules: str | None = None
    #: ``--harness-errors``: ``"failure"`` (counted as failed rollouts) or ``"exclude"`` (left
    #: out); ``None``: each benchmark's own convention (HARNESS-DEFAULT, adapters/harness.py).
    harness_errors: str | None = None
    #: BFCL's ``--inference-errors``, the alias of ``harness_errors`` for its inference errors.
    inference_errors: str | None = None
    extra: Mapping[str, object] = attrs.field(factory=dict)
    #: ``--unit``: ``"call"`` (one step per call, the paper's) or ``"turn"`` (one per user turn,
    #: TURN-UNIT), applied by the readers of :data:`ADAPTERS`.
    unit: str = "call"
    #: ``--system-from`` (:data:`SYSTEM_FROM`): ``"pooled"`` or ``"file"``; read by the taubench
    #: adapter, the one that pools runs.
    system_from: str = attrs.field(default="pooled", validator=attrs.validators.in_(SYSTEM_FROM))


@attrs.frozen(slots=True)
class AdapterInfo:
    """A registered adapter: its name, what it reads, and its reader."""

    name: str
    description: str
    read: Callable[[Sequence[str], AdapterOptions], list[Rollout]]
    #: ``prefixexec audit``: ``audit(paths, options)``; ``None``: a module function ``audit``, if any.
    audit: Callable[[Sequence[str], AdapterOptions], AuditReport] | None = None
    #: The benchmark package whose code or data the adapter runs; its version enters the signature.
    backend: str | None = None


ADAPTERS: dict[str, AdapterInfo] = {
    "records": AdapterInfo(
        "records",
        "prefixexec JSONL records (spec/record.schema.json): recorded verdicts or outcomes",
        lambda paths, options: _module("records").read_records(paths),
        audit=lambda paths, options: _module("records").audit(paths, options),
    ),
    "taubench": AdapterInfo(
        "taubench",
        "tau-bench v1 result lists and tau2/tau^3 results.json (executed trajectories)",
        lambda paths, options: _module("taubench").read(paths, options),
        audit=lambda paths, options: _module("taubench").audit(paths, options),
    ),
    "toolsandbox": AdapterInfo(
        "toolsandbox",
        "ToolSandbox run directories (result_summary.json + trajectories/*/execution_context.json)",
        lambda paths, options: _module("toolsandbox").read(paths, options),
        audit=lambda paths, options: _module("toolsandbox").audit(paths, options),
    ),
    "inspect": AdapterInfo(
        "inspect",
        "inspect_ai logs (.eval or .json): assistant tool calls, tool errors and a scorer's value",
        lambda paths, options: _module("inspect_logs").read(paths, options),
        audit=lambda paths, options: _module("inspect_logs").audit(paths, options),
    ),
    "chat": AdapterInfo(
        "chat",
        "chat transcripts, one rollout per JSONL line (OpenAI/Anthropic/MCP tool calls and results)",
        lambda paths, options: _module("chat").read(paths, options),
        audit=lambda paths, options: _module("chat").audit(paths, options),
    ),
    "bfcl": AdapterInfo(
        "bfcl",
        "BFCL multi-turn result files (BFCL_v<N>_multi_turn_<category>_result.json), replayed on bfcl-eval",
        lambda paths, options: _module("bfcl").read(paths, options),
        backend="bfcl-eval",
    ),
    "otel": AdapterInfo(
        "otel",
        "OpenTelemetry GenAI traces in OTLP (JSON Lines, JSON documents or protobuf; plain or gzip): "
        "one trace per rollout",
        lambda paths, options: _module("otel").read(paths, options),
        audit=lambda paths, options: _module("otel").audit(paths, options),
    ),
    "openinference": AdapterInfo(
        "openinference",
        "OpenInference (Arize) traces in OTLP JSON Lines (plain or gzip): one trace per rollout",
        lambda paths, options: _module("openinference").read(paths, options),
        audit=lambda paths, options: _module("openinference").audit(paths, options),
    ),
    "agents": AdapterInfo(
        "agents",
        "OpenAI Agents SDK traces (prefixexec.integrations.agents.JsonlTraceProcessor JSONL)",
        lambda paths, options: _module("agents_sdk").read(paths, options),
        audit=lambda paths, options: _module("agents_sdk").audit(paths, options),
    ),
    "langsmith": AdapterInfo(
        "langsmith",
        "LangSmith run exports (JSONL of runs or a JSON list): one trace per rollout",
        lambda paths, options: _module("langsmith_runs").read(paths, options),
        audit=lambda paths, options: _module("langsmith_runs").audit(paths, options),
    ),
    "mlflow": AdapterInfo(
        "mlflow",
        "MLflow Tracing exports (Trace.to_json(): one per file or per line): one trace per rollout",
        lambda paths, options: _module("mlflow_traces").read(paths, options),
        audit=lambda paths, options: _module("mlflow_traces").audit(paths, options),
    ),
    "atif": AdapterInfo(
        "atif",
        "ATIF trajectories (Harbor's Agent Trajectory Interchange Format): one trajectory per rollout",
        lambda paths, options: _module("atif").read(paths, options),
        audit=lambda paths, options: _module("atif").audit(paths, options),
    ),
    "parquet": AdapterInfo(
        "parquet",
        "outcome tables in Parquet (dataset, model, method, task_id, trial, T, fed, label, success)",
        lambda paths, options: _module("parquet").read(paths, options),
    ),
}


def _checked(
    read: Callable[[Sequence[str], AdapterOptions], list[Rollout]], name: str = ""
) -> Callable[[Sequence[str], AdapterOptions], list[Rollout]]:
    """``read`` with the input paths checked first and its rollouts checked after (HOSTILE-ROLLOUT,
    HOSTILE-DEVICE): every adapter's output passes the same bounds as records. With
    ``options.unit == "turn"`` the rollouts are turned into turn-level ones first (TURN-UNIT)."""

    def checked(paths: Sequence[str], options: AdapterOptions) -> list[Rollout]:
        from . import limits  # imported on first use, like every adapter module

        if options.unit != "call":
            from .turns import check_unit

            check_unit(options.unit, name)
        for path in paths:
            if path != "-":
                limits.check_input_file(path)
        rollouts = read(paths, options)
        if options.unit == "turn":
            from .turns import turn_rollouts

            rollouts = turn_rollouts(rollouts, name)
        limits.check_rollouts(rollouts)
        limits.check_cells(rollouts)
        return limits.escaped_reasons(rollouts)

    return checked


ADAPTERS = {name: attrs.evolve(info, read=_checked(info.read, name)) for name, info in ADAPTERS.items()}

__all__ = ["ADAPTERS", "AdapterInfo", "AdapterOptions", "InputError", "records"]
