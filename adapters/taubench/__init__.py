"""tau-bench result files: v1 result lists and tau2/tau^3 ``results.json`` (spec: spec/adapters/taubench.md).

The grader does not re-run anything: executability is what the benchmark's environment did
with each call, read from the recorded trajectory (TAU-EXEC). The package has three modules:

- :mod:`.reader`: file formats -> rollouts (v1 lists, tau2 objects, condition names);
- :mod:`.semantics`: the benchmark's rules (:class:`TauSemantics`, :func:`classify`);
- :mod:`.operators`: ``prefixexec audit --adapter taubench`` (operators and checks).

This module only re-exports.
"""

from __future__ import annotations

from .operators import audit, audit_operators, text_call_lines
from .reader import (
    DATASET_PREFIX,
    DEFAULT_METHOD_TAU2,
    DEFAULT_METHOD_V1,
    DOMAIN_TOOLS,
    KNOWN_DOMAINS,
    MODEL_FAMILIES,
    STOP_REASONS,
    Naming,
    parse_arguments,
    read,
    read_file,
    split_strategy_model,
    text_calls,
    tools_domain,
    v1_naming,
    v1_verdict,
)
from .semantics import (
    DOMAIN_ID_PREFIXES,
    REASON_LIMIT,
    TAU,
    Exchange,
    TauSemantics,
    TauState,
    TauTask,
    classify,
    missing_entity_ids,
    normalise,
    occurs,
)

__all__ = [
    "DATASET_PREFIX",
    "DEFAULT_METHOD_TAU2",
    "DEFAULT_METHOD_V1",
    "DOMAIN_ID_PREFIXES",
    "DOMAIN_TOOLS",
    "KNOWN_DOMAINS",
    "MODEL_FAMILIES",
    "REASON_LIMIT",
    "STOP_REASONS",
    "TAU",
    "Exchange",
    "Naming",
    "TauSemantics",
    "TauState",
    "TauTask",
    "audit",
    "audit_operators",
    "classify",
    "missing_entity_ids",
    "normalise",
    "occurs",
    "parse_arguments",
    "read",
    "read_file",
    "split_strategy_model",
    "text_call_lines",
    "text_calls",
    "tools_domain",
    "v1_naming",
    "v1_verdict",
]
