"""``prefixexec guard``: an MCP stdio proxy (:mod:`.proxy`) or streamable-HTTP proxy (:mod:`.http`)
that checks every ``tools/call`` with the scorer's own rules before forwarding it, and its Python
API :class:`Guard` (spec: spec/guard.md; docs/guard.md).

Imported on its own: the scorer's CLI loads it only for the ``guard`` command.
"""

from __future__ import annotations

from .core import MODES, PHRASES, Decision, Guard, Mode, Pending, Violation, reason_text
from .rules import NO_GUARD_RULES, ArgumentRule, GuardRules, Provenance, Requires, load_guard_rules

__all__ = [
    "MODES",
    "NO_GUARD_RULES",
    "PHRASES",
    "ArgumentRule",
    "Decision",
    "Guard",
    "GuardRules",
    "Mode",
    "Pending",
    "Provenance",
    "Requires",
    "Violation",
    "load_guard_rules",
    "reason_text",
]
