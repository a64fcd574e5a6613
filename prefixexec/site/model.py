"""The site's typed input: :class:`DomainBoard` and :class:`ClaimRow` (SITE-PAGES; the contract
is in :mod:`prefixexec.site`'s docstring)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import attrs

from prefixexec.kernel import Rollout
from prefixexec.numbers import Number


def _frozen_map(value: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(value))


def _rollout_map(value: Mapping[str, Sequence[Rollout]]) -> Mapping[str, tuple[Rollout, ...]]:
    return MappingProxyType({str(k): tuple(v) for k, v in value.items()})


@attrs.frozen(slots=True)
class DomainBoard:
    """One domain's leaderboard and its systems' rollouts (see the module's input contract)."""

    name: str
    #: One entry of the ``leaderboard --json`` document's ``datasets`` (LB-JSON).
    board: Mapping[str, Any] = attrs.field(converter=_frozen_map, repr=False)
    #: The document's ``settings`` (bootstrap, level, trials, ...).
    settings: Mapping[str, Any] = attrs.field(converter=_frozen_map, repr=False)
    #: Each system's rollouts by its ``system`` name.
    rollouts: Mapping[str, tuple[Rollout, ...]] = attrs.field(
        factory=dict, converter=_rollout_map, repr=False
    )

    @board.validator
    def _check_board(self, attribute: attrs.Attribute[Mapping[str, Any]], value: Mapping[str, Any]) -> None:
        missing = [key for key in ("systems", "k", "tasks", "shown", "ranked") if key not in value]
        if missing:
            raise ValueError(
                f"'board' must be a leaderboard document's dataset entry; absent: {', '.join(missing)}"
            )


@attrs.frozen(slots=True)
class ClaimRow:
    """One claimed number beside the recomputed one, with ``crosscheck``'s verdict."""

    system: str
    domain: str
    metric: str
    claimed: Number | None
    recomputed: Number | None
    verdict: str
    note: str = ""


def domains_of(document: Mapping[str, Any], rollouts: Sequence[Rollout] | None) -> list[DomainBoard]:
    """Today's leaderboard as domains: one :class:`DomainBoard` per dataset of the
    ``leaderboard --json`` document, each system's rollouts found by its label
    (:func:`prefixexec.ranking.core.system_label`) and kept to the tasks it was scored on."""
    from prefixexec.ranking.core import system_label

    by = document["settings"]["by"]
    grouped: dict[tuple[str, str], list[Rollout]] = {}
    for r in rollouts or ():
        grouped.setdefault((r.condition.dataset, system_label(r.condition, by)), []).append(r)
    out = []
    for ds in document["datasets"]:
        mine = {s["system"]: grouped.get((ds["dataset"], s["system"]), []) for s in ds["systems"]}
        if ds["tasks"].get("dropped"):  # --shared-tasks: the tasks every system has (LB-TASKS)
            shared = set.intersection(*({r.task_id for r in rs} for rs in mine.values()))
            mine = {name: [r for r in rs if r.task_id in shared] for name, rs in mine.items()}
        out.append(DomainBoard(ds["dataset"], ds, document["settings"], mine))
    return out
