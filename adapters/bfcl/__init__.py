"""BFCL v3/v4 multi-turn: safe prefix replay on the benchmark's own classes (spec: spec/adapters/bfcl.md).

The adapter replays a model's predicted calls, prefix by prefix, on fresh instances of BFCL's
executable API classes (PyPI ``bfcl-eval``; install with
``pip install --no-deps bfcl-eval==2026.3.23 mpmath``). Outcomes come from the kernel's
:func:`~prefixexec.kernel.replay` driven by :class:`BfclSemantics`; the final success Y is BFCL's
own multi-turn rule re-implemented on the same single pass. Model output is never evaluated:
calls are parsed with :mod:`ast` / :mod:`json` into literal values and dispatched with
``getattr`` on the owning instance (BFCL-SECURITY).

The package's modules, none of which imports another in a cycle (nor this ``__init__``):

* :mod:`.backend` — the benchmark's data and classes as shipped in ``bfcl-eval``;
* :mod:`.parse` — safe decoding of model output into calls;
* :mod:`.execute` — checks and execution of one call, error markers and labels;
* :mod:`.semantics` — tasks, the rules with their spec IDs, the kernel semantics, BFCL's Y;
* :mod:`.reader` — result files -> entries -> rollouts (``score --adapter bfcl``);
* :mod:`.reference` — the cross-check with BFCL's own executor, on trusted inputs only;
* :mod:`.operators` — ``audit --adapter bfcl``: gold, mutants, result-file counts.

This module only re-exports the names callers use.
"""

from __future__ import annotations

from . import backend
from .operators import audit
from .reader import DATASET_PREFIX, DEFAULT_METHOD, Excluded, FileSummary, ReadResult, read, read_results
from .semantics import (
    INFERENCE_ERROR,
    BfclCall,
    BfclRun,
    BfclSemantics,
    BfclState,
    BfclTask,
    CallRecord,
    Evaluation,
    StaleStateError,
    check_and_run,
    evaluate,
    gold_turns,
    make_run,
    replay_calls,
    run_from_strings,
    task,
)

__all__ = [
    "DATASET_PREFIX",
    "DEFAULT_METHOD",
    "INFERENCE_ERROR",
    "BfclCall",
    "BfclRun",
    "BfclSemantics",
    "BfclState",
    "BfclTask",
    "CallRecord",
    "Evaluation",
    "Excluded",
    "FileSummary",
    "ReadResult",
    "StaleStateError",
    "audit",
    "backend",
    "check_and_run",
    "evaluate",
    "gold_turns",
    "make_run",
    "read",
    "read_results",
    "replay_calls",
    "run_from_strings",
    "task",
]
