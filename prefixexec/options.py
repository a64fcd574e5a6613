"""Typed options of the commands (spec: API-PIPELINE).

The command line turns its arguments into these frozen values once, at its boundary
(``prefixexec/cli.py``: the ``argparse.Namespace`` never leaves it); the Python functions build
the same values from their keywords. Everything past that boundary (the pipeline, the engine,
the bootstrap's scaling, the progress line) takes these, as the adapters take
:class:`~prefixexec.adapters.AdapterOptions` and the bootstrap
:class:`~prefixexec.kernel.bootstrap.BootstrapSettings`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from prefixexec.adapters import AdapterOptions
    from prefixexec.kernel import Rollout
    from prefixexec.kernel.bootstrap import BootstrapSettings
    from prefixexec.signature import Signature

#: The engines of ``--engine`` (DASK-ENGINE).
ENGINES = ("local", "dask")


def _tuple(value: object) -> tuple[str, ...]:
    return tuple(value) if isinstance(value, list | tuple) else ()


@attrs.frozen(slots=True)
class InputOptions:
    """What a command reads: the adapter, its files and options, and what is kept of it.

    ``select``: OUT-SELECT patterns; ``rollouts_path``: ``--rollouts PATH`` (OUT-ROLLOUTS-FILE);
    ``emit_evaluations``: ``--emit-evaluations PATH`` (trace adapters); ``given``: rollouts the
    Python API read itself (API-SOURCES), used instead of reading ``files``.
    """

    adapter: str
    files: tuple[str, ...] = attrs.field(converter=_tuple)
    adapter_options: AdapterOptions
    select: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    rollouts_path: str | None = None
    emit_evaluations: str | None = None
    given: tuple[Rollout, ...] | None = attrs.field(default=None, repr=False)
    #: Keep every rollout read (the Python API's ``Scores.rollouts``).
    keep: bool = False

    @property
    def keeps_rollouts(self) -> bool:
        """Every rollout is read and kept (not streamed into accumulators)."""
        return (
            self.keep
            or bool(self.select)
            or self.rollouts_path is not None
            or self.emit_evaluations is not None
            or (self.given is not None)
        )


@attrs.frozen(slots=True)
class EngineOptions:
    """Where the scoring runs (DASK-ENGINE) and the bootstrap's block (BOOT-BLOCK)."""

    engine: str = attrs.field(default="local", validator=attrs.validators.in_(ENGINES))
    scheduler: str | None = None
    workers: int | None = None
    bootstrap_block: int | None = None


@attrs.frozen(slots=True)
class ScoreOptions:
    """Everything ``score`` (and the Python ``prefixexec.score``) needs: the input, the engine,
    the bootstrap (``None``: intervals off), pairing, the signature, and whether notices and
    progress are off (PROGRESS-QUIET)."""

    input: InputOptions
    bootstrap: BootstrapSettings | None
    signature: Signature
    engine: EngineOptions = EngineOptions()
    paired: bool = True
    quiet: bool = False

    @property
    def resamples(self) -> int:
        """B, 0 with intervals off."""
        return 0 if self.bootstrap is None else self.bootstrap.B
