"""Chat transcripts, one rollout per JSONL line (spec: spec/adapters/chat.md, CHAT-*).

A line is ``{"task_id", "model", "method", "success", "messages", "tools"}`` with the messages in
OpenAI chat format; Anthropic ``tool_use`` / ``tool_result`` blocks and MCP ``isError`` results
are read too. A call is not executable when its arguments are not valid JSON, it names a tool not
in ``tools``, its arguments violate the tool's JSON Schema (checked with ``jsonschema``), its
result is flagged ``is_error`` / ``isError``, or its result matches ``--error-pattern``.
Arguments are JSON data: nothing of a transcript is evaluated or executed.
"""

from __future__ import annotations

from .operators import AUDIT_OPERATORS, audit
from .reader import (
    DEFAULT_DATASET,
    STDIN,
    error_pattern,
    is_error_flag,
    line_rollout,
    parse_arguments,
    read,
    read_calls,
    read_tools,
    result_text,
)
from .semantics import (
    ERROR_FAMILIES,
    REASON_EXCERPT,
    SEMANTICS,
    ChatCall,
    ChatSemantics,
    ChatTask,
    ChatTool,
    compile_schema,
    error_labels,
    schema_violation,
)

__all__ = [
    "AUDIT_OPERATORS",
    "DEFAULT_DATASET",
    "ERROR_FAMILIES",
    "REASON_EXCERPT",
    "SEMANTICS",
    "STDIN",
    "ChatCall",
    "ChatSemantics",
    "ChatTask",
    "ChatTool",
    "audit",
    "compile_schema",
    "error_labels",
    "error_pattern",
    "is_error_flag",
    "line_rollout",
    "parse_arguments",
    "read",
    "read_calls",
    "read_tools",
    "result_text",
    "schema_violation",
]
