"""inspect_ai evaluation logs, ``.eval`` and ``.json`` (spec: spec/adapters/inspect.md, INS-*).

The package has three parts: :mod:`.reader` (the ``.eval`` ZIP archives and ``.json`` streams,
headers, samples -> rollouts), :mod:`.semantics` (inspect's rules, each with its spec ID) and
:mod:`.operators` (the audit's mutation operators and plan). This module re-exports what the
command line, the registry and the tests use.
"""

from __future__ import annotations

from ..errors import InputError
from .operators import AUDIT_OPERATORS, audit
from .reader import (
    DATASET_PREFIX,
    DEFAULT_METHOD,
    ZIP_ZSTD,
    EvalArchive,
    JsonStream,
    LogHeader,
    iter_eval_log,
    iter_json_log,
    read,
    read_log,
)
from .semantics import (
    DEFAULT_THRESHOLD,
    ERROR_LABELS,
    SEMANTICS,
    InspectCall,
    InspectSample,
    InspectSemantics,
    NoToolRule,
    is_success,
    value_to_float,
)

__all__ = [
    "AUDIT_OPERATORS",
    "DATASET_PREFIX",
    "DEFAULT_METHOD",
    "DEFAULT_THRESHOLD",
    "ERROR_LABELS",
    "SEMANTICS",
    "ZIP_ZSTD",
    "EvalArchive",
    "InputError",
    "InspectCall",
    "InspectSample",
    "InspectSemantics",
    "JsonStream",
    "LogHeader",
    "NoToolRule",
    "audit",
    "is_success",
    "iter_eval_log",
    "iter_json_log",
    "read",
    "read_log",
    "value_to_float",
]
