"""ToolSandbox run directories (spec: spec/adapters/toolsandbox.md, TSB-*).

A ToolSandbox run (apple/ToolSandbox) writes ``result_summary.json`` and, per scenario,
``trajectories/<scenario>/execution_context.json`` (the sandbox message database) and, when the
scenario was evaluated, ``conversation.json``. The calls of a rollout are the AGENT ->
EXECUTION_ENVIRONMENT rows in order; a call is executable iff its reply carries no
``tool_call_exception``; Y is ``similarity >= threshold``.

- :mod:`.reader`: run folders, summary and execution context -> rollouts;
- :mod:`.semantics`: :class:`ToolSandboxSemantics` and the label rules, each with its spec ID.

ToolSandbox has no gold trajectories prefixexec could replay, so there is no audit module
(``prefixexec audit --adapter toolsandbox`` says so, AUDIT-NOTHING).
"""

from __future__ import annotations

from .operators import audit
from .reader import (
    DATASET,
    DEFAULT_THRESHOLD,
    NO_CATEGORY,
    ParsedCode,
    ScenarioRun,
    SummaryEntry,
    calls_from_context,
    calls_from_conversation,
    conversation_exception,
    model_from_run,
    parse_call_code,
    read,
    read_scenarios,
    read_summary,
    rollout_categories,
    split_by_category,
    unknown_tool_name,
)
from .semantics import (
    EXCEPTION_RULES,
    NO_TOOL_CATEGORIES,
    SEMANTICS,
    SandboxCall,
    Scenario,
    ToolSandboxSemantics,
    exception_labels,
    masked_exception,
    split_exception,
)

__all__ = [
    "DATASET",
    "DEFAULT_THRESHOLD",
    "EXCEPTION_RULES",
    "NO_CATEGORY",
    "NO_TOOL_CATEGORIES",
    "SEMANTICS",
    "ParsedCode",
    "SandboxCall",
    "Scenario",
    "ScenarioRun",
    "SummaryEntry",
    "ToolSandboxSemantics",
    "audit",
    "calls_from_context",
    "calls_from_conversation",
    "conversation_exception",
    "exception_labels",
    "masked_exception",
    "model_from_run",
    "parse_call_code",
    "read",
    "read_scenarios",
    "read_summary",
    "rollout_categories",
    "split_by_category",
    "split_exception",
    "unknown_tool_name",
]
