"""``prefixexec.leaderboard(...)``: the ``leaderboard --json`` document from Python (LB-API)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prefixexec.api import Source, _namespace, _rollouts_of


def leaderboard(
    source: Source,
    *,
    adapter: str = "auto",
    by: str = "condition",
    metrics: Sequence[str] | None = None,
    k: int | None = None,
    trials: str = "tau2",
    shared_tasks: bool = False,
    bootstrap: int = 10_000,
    seed: int = 0,
    level: float = 0.95,
    select: Sequence[str] | str | None = None,
    **adapter_options: object,
) -> dict[str, Any]:
    """LB-API: rank the systems of ``source`` as ``prefixexec leaderboard --json`` does.

    ``source`` as for :func:`prefixexec.score` (paths, record dicts or a DataFrame of outcomes);
    ``by``, ``metrics``, ``k``, ``trials`` and ``shared_tasks`` are the command's ``--by``,
    ``--metric``, ``--k``, ``--trials`` and ``--shared-tasks``. Returns the JSON document (a dict,
    spec LB-JSON), equal to what the command prints for the same input and settings. Bad input
    raises :class:`prefixexec.InputError`.
    """
    from prefixexec.cli import signature_of
    from prefixexec.kernel.accumulator import AccumulatorSet
    from prefixexec.kernel.bootstrap import BootstrapSettings
    from prefixexec.selection import parse
    from prefixexec.selection import select as select_rollouts

    from .core import PREFIX_METRICS, LeaderboardOptions, leaderboard_document

    if isinstance(bootstrap, bool) or not isinstance(bootstrap, int) or bootstrap < 0:
        raise ValueError(f"'bootstrap' must be an integer >= 0: {bootstrap!r}")
    options = LeaderboardOptions(
        by=by,
        metrics=PREFIX_METRICS if metrics is None else metrics,
        k=k,
        trials=trials,  # type: ignore[arg-type]  # checked by LeaderboardOptions' validator
        shared_tasks=shared_tasks,
    )
    settings = None if bootstrap == 0 else BootstrapSettings(B=bootstrap, seed=seed, level=level)
    name, rollouts = _rollouts_of(source, adapter, adapter_options)
    if select is not None:
        rollouts = select_rollouts(rollouts, parse([select] if isinstance(select, str) else list(select)))
    namespace = _namespace(name, [], adapter_options)
    namespace.bootstrap, namespace.seed, namespace.level = bootstrap, seed, level
    signature = str(signature_of(namespace))  # paired, as leaderboard always is
    return leaderboard_document(AccumulatorSet.from_rollouts(rollouts), settings, options, signature)
