"""Prefix executability inside the tools people run (spec: spec/integrations.md).

:mod:`.monitors` holds the semantics a runtime :class:`~prefixexec.kernel.PrefixMonitor` checks
candidate calls with: JSON-Schema tools (chat, inspect) and BFCL's live instances.
:mod:`.inspect` is the inspect_ai scorer, metrics and approver; it needs the optional
``inspect`` extra (``pip install '.[inspect]'`` in a checkout) and is not imported here,
so ``import prefixexec.integrations`` works without inspect_ai.
"""

from __future__ import annotations
