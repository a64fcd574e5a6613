"""Adapters: benchmark semantics and record readers, each turning input files into rollouts.

Every adapter is a function ``read(paths, options) -> list[Rollout]`` registered in
:data:`ADAPTERS` with a one-line description; it validates all of its input before returning
and raises :class:`InputError` (naming file and line or record) on bad input. Adapters import
the kernel, never the CLI.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import attrs

from prefixexec.kernel import Rollout

from . import bfcl, chat, inspect_logs, limits, parquet, records, taubench, toolsandbox
from .audit import AuditReport
from .errors import InputError


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
    #: BFCL: ``"failure"`` (default, the leaderboard's convention) or ``"exclude"`` entries whose
    #: result is an inference error.
    inference_errors: str = "failure"
    extra: Mapping[str, object] = attrs.field(factory=dict)


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
        lambda paths, options: records.read_records(paths),
        audit=lambda paths, options: records.audit(paths, options),
    ),
    "taubench": AdapterInfo(
        "taubench",
        "tau-bench v1 result lists and tau2/tau^3 results.json (executed trajectories)",
        lambda paths, options: taubench.read(paths, options),
        audit=lambda paths, options: taubench.audit(paths, options),
    ),
    "toolsandbox": AdapterInfo(
        "toolsandbox",
        "ToolSandbox run directories (result_summary.json + trajectories/*/execution_context.json)",
        lambda paths, options: toolsandbox.read(paths, options),
        audit=lambda paths, options: toolsandbox.audit(paths, options),
    ),
    "inspect": AdapterInfo(
        "inspect",
        "inspect_ai logs (.eval or .json): assistant tool calls, tool errors and a scorer's value",
        lambda paths, options: inspect_logs.read(paths, options),
        audit=lambda paths, options: inspect_logs.audit(paths, options),
    ),
    "chat": AdapterInfo(
        "chat",
        "chat transcripts, one rollout per JSONL line (OpenAI/Anthropic/MCP tool calls and results)",
        lambda paths, options: chat.read(paths, options),
        audit=lambda paths, options: chat.audit(paths, options),
    ),
    "bfcl": AdapterInfo(
        "bfcl",
        "BFCL multi-turn result files (BFCL_v<N>_multi_turn_<category>_result.json), replayed on bfcl-eval",
        lambda paths, options: bfcl.read(paths, options),
        backend="bfcl-eval",
    ),
    "parquet": AdapterInfo(
        "parquet",
        "outcome tables in Parquet (dataset, model, method, task_id, trial, T, fed, label, success)",
        lambda paths, options: parquet.read(paths, options),
    ),
}



def _checked(read: Callable[[Sequence[str], AdapterOptions], list[Rollout]]) -> Callable[
    [Sequence[str], AdapterOptions], list[Rollout]
]:
    """``read`` with the input paths checked first and its rollouts checked after (HOSTILE-ROLLOUT,
    HOSTILE-DEVICE): every adapter's output passes the same bounds as records."""

    def checked(paths: Sequence[str], options: AdapterOptions) -> list[Rollout]:
        for path in paths:
            if path != "-":
                limits.check_input_file(path)
        rollouts = read(paths, options)
        limits.check_rollouts(rollouts)
        limits.check_cells(rollouts)
        return limits.escaped_reasons(rollouts)

    return checked


ADAPTERS = {name: attrs.evolve(info, read=_checked(info.read)) for name, info in ADAPTERS.items()}

__all__ = ["ADAPTERS", "AdapterInfo", "AdapterOptions", "InputError", "records"]
