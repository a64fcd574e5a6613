"""Typed options of the commands (spec: API-PIPELINE).

The command line turns its arguments into these frozen values once, at its boundary
(``prefixexec/cli.py``: the ``argparse.Namespace`` never leaves it); the Python functions build
the same values from their keywords. Everything past that boundary (the pipeline, the engine,
the bootstrap's scaling, the progress line, every command's ``run``) takes these, as the
adapters take :class:`~prefixexec.adapters.AdapterOptions` and the bootstrap
:class:`~prefixexec.kernel.bootstrap.BootstrapSettings`. :class:`AdapterArguments` is the input
a command names, as given; :func:`input_options`, :func:`adapter_options` and
:func:`signature_of` check it (CLI-NO-EFFECT, HARNESS-OPTION, TURN-UNIT, OUT-SIGNATURE) for the
command line and the Python functions alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, TextIO

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


# ---------------------------------------------------------------------------------------------
# The adapter arguments of a command, as given (API-PIPELINE): checked into AdapterOptions,
# InputOptions and the signature by the functions below, for the command line and the Python
# functions alike.

#: The trace adapters (TRACE-*): they take --task-attr, --success-attr, --error-pattern too.
TRACE_ADAPTERS = ("agents", "atif", "langsmith", "mlflow", "openinference", "otel")
#: Which adapters each adapter option affects; given with any other adapter it is an error
#: (CLI-NO-EFFECT): an option that cannot change the numbers must not be silently ignored.
OPTION_ADAPTERS: dict[str, tuple[str, ...]] = {
    "model": ("bfcl", "chat", "inspect", "taubench", "toolsandbox", *TRACE_ADAPTERS),
    "method": ("bfcl", "chat", "inspect", "taubench", "toolsandbox", *TRACE_ADAPTERS),
    "category": ("bfcl",),
    "bfcl_decoder": ("bfcl",),
    "threshold": ("inspect", "toolsandbox", *TRACE_ADAPTERS),
    "scorer": ("inspect",),
    "error_pattern": ("chat", *TRACE_ADAPTERS),
    "task_attr": TRACE_ADAPTERS,
    "success_attr": TRACE_ADAPTERS,
    "system_from": ("taubench",),
}
#: The adapter options a command or a Python function takes by name (``--error-pattern``:
#: ``error_pattern``), in the order the signature lists them.
ADAPTER_ARGUMENTS = (
    "model",
    "method",
    "category",
    "threshold",
    "scorer",
    "error_pattern",
    "by",
    "label_rules",
    "harness_errors",
    "inference_errors",
    "unit",
    "bfcl_decoder",
    "task_attr",
    "success_attr",
    "system_from",
)


@attrs.frozen(slots=True)
class AdapterArguments:
    """The input a command names, unchecked: the adapter (``auto`` until detected), the files,
    each adapter option as given (``None``: not given), ``--select``, ``--rollouts``,
    ``--emit-evaluations``, and the rollouts the Python API read itself (API-SOURCES).
    :func:`input_options` checks them (CLI-NO-EFFECT, HARNESS-OPTION, TURN-UNIT, ...)."""

    adapter: str
    files: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    model: str | None = None
    method: str | None = None
    category: str | None = None
    threshold: float | None = None
    scorer: str | None = None
    error_pattern: str | None = None
    by: str | None = None
    label_rules: str | None = None
    harness_errors: str | None = None
    inference_errors: str | None = None
    unit: str | None = None
    bfcl_decoder: str | None = None
    task_attr: str | None = None
    success_attr: str | None = None
    system_from: str | None = None
    select: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    rollouts_path: str | None = None
    emit_evaluations: str | None = None
    given: tuple[Rollout, ...] | None = attrs.field(default=None, repr=False)


def check_option_effect(arguments: AdapterArguments) -> None:
    """Refuse an adapter option that has no effect with the chosen adapter (CLI-NO-EFFECT)."""
    from prefixexec.adapters import InputError

    adapter = arguments.adapter
    for name, adapters in OPTION_ADAPTERS.items():
        if getattr(arguments, name) is not None and adapter not in adapters:
            flag = "--" + name.replace("_", "-")
            why = (
                f"{adapter} input carries its own {name} on every row"
                if name in ("model", "method")
                else f"it only applies with --adapter {' or '.join(adapters)}"
            )
            raise InputError(flag, f"has no effect with --adapter {adapter}: {why}")


def check_harness_errors(arguments: AdapterArguments) -> tuple[str | None, str | None]:
    """``--harness-errors`` and its BFCL alias ``--inference-errors``, checked (HARNESS-OPTION)."""
    from prefixexec.adapters import InputError, harness

    chosen, alias, adapter = arguments.harness_errors, arguments.inference_errors, arguments.adapter
    if alias is not None and adapter != "bfcl":
        raise InputError("--inference-errors", f"only applies with --adapter bfcl, not {adapter!r}")
    if chosen is not None and adapter not in harness.ADAPTERS:
        raise InputError(
            "--harness-errors",
            f"has no effect with --adapter {adapter}: its input records no harness errors "
            f"(it applies with --adapter {', '.join(harness.ADAPTERS)})",
        )
    if chosen is not None and alias is not None and chosen != alias:
        raise InputError(
            "--inference-errors", f"says {alias}, --harness-errors says {chosen}: give one of them"
        )
    return chosen, alias


def adapter_options(arguments: AdapterArguments) -> AdapterOptions:
    """The adapter options, checked before any input is read."""
    from prefixexec.adapters import InputError

    check_option_effect(arguments)
    adapter = arguments.adapter
    if arguments.by is not None and adapter != "toolsandbox":
        raise InputError("--by", f"only the toolsandbox adapter splits by {arguments.by}, not {adapter!r}")
    if arguments.unit is not None:  # TURN-UNIT: before any input is read
        from prefixexec.adapters.turns import check_unit

        check_unit(arguments.unit, adapter)
    check_harness_errors(arguments)  # HARNESS-OPTION: before the label rules file is read
    if arguments.label_rules is not None:
        from prefixexec.adapters.labels import load_label_rules

        load_label_rules(arguments.label_rules, adapter)  # checks the file before any input is read
    extra = {
        name: getattr(arguments, name)
        for name in ("task_attr", "success_attr", "bfcl_decoder")
        if getattr(arguments, name) is not None
    }
    return as_given(arguments, extra)


def as_given(arguments: AdapterArguments, extra: Mapping[str, object]) -> AdapterOptions:
    """The adapter options exactly as given (the checks are :func:`adapter_options`'s, or the
    caller's: ``audit`` takes any adapter's options), with ``extra`` for the adapter."""
    from prefixexec.adapters import AdapterOptions

    harness_errors, inference_errors = check_harness_errors(arguments)
    return AdapterOptions(
        extra=extra,
        model=arguments.model,
        method=arguments.method,
        category=arguments.category,
        threshold=arguments.threshold,
        scorer=arguments.scorer,
        error_pattern=arguments.error_pattern,
        by=arguments.by,
        label_rules=arguments.label_rules,
        harness_errors=harness_errors,
        inference_errors=inference_errors,
        unit=arguments.unit or "call",
        system_from=arguments.system_from or "pooled",
    )


def input_options(arguments: AdapterArguments) -> InputOptions:
    """What the command reads, checked (CLI-NO-EFFECT, HARNESS-OPTION, ...) before any input is."""
    from prefixexec.adapters import InputError

    evaluations = arguments.emit_evaluations
    if evaluations is not None and arguments.adapter not in TRACE_ADAPTERS:
        raise InputError(
            "--emit-evaluations",
            f"only trace adapters ({', '.join(TRACE_ADAPTERS)}) have spans to key events by",
        )
    if evaluations is not None:
        from prefixexec.adapters.evaluations import check_evaluations_path

        check_evaluations_path(evaluations)  # a protobuf output without its extra: before any input
    return InputOptions(
        adapter=arguments.adapter,
        files=arguments.files,
        adapter_options=adapter_options(arguments),
        select=arguments.select,
        rollouts_path=arguments.rollouts_path,
        emit_evaluations=evaluations,
        given=arguments.given,
    )


def installed_version(distribution: str) -> str:
    """The installed version of a distribution, or ``missing``."""
    import importlib.metadata

    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "missing"


def signature_options(arguments: AdapterArguments) -> tuple[tuple[str, str], ...]:
    """The adapter settings that can change the numbers, for the signature (OUT-SIGNATURE)."""
    from prefixexec.adapters import ADAPTERS

    found: list[tuple[str, str]] = []
    adapter = arguments.adapter
    backend = ADAPTERS[adapter].backend
    if backend is not None:
        found.append((backend, installed_version(backend)))
    for name in ("category", "threshold", "scorer", "by", "task_attr", "success_attr", "bfcl_decoder"):
        value = getattr(arguments, name)
        if value is not None:
            found.append((name, f"{value:g}" if isinstance(value, float) else str(value)))
    pattern = arguments.error_pattern
    if pattern is not None:
        import hashlib

        digest = hashlib.sha256(pattern.encode("utf-8")).hexdigest()[:12]
        found.append(("error-pattern", f"sha256:{digest}"))
    if arguments.label_rules is not None:
        from prefixexec.adapters.labels import file_digest

        found.append(("label-rules", file_digest(arguments.label_rules)))
    from prefixexec.adapters import harness

    if adapter in harness.ADAPTERS:  # HARNESS-SIGNATURE: the choice, or the benchmark's default
        chosen = arguments.harness_errors or arguments.inference_errors
        found.append(("harness-errors", chosen or harness.SIGNATURE_DEFAULTS[adapter]))
    if arguments.unit == "turn":
        found.append(("unit", "turn"))
    if arguments.system_from == "file":  # TAU-SYSTEM-FILE: other conditions
        found.append(("system-from", "file"))
    return tuple(found)


def signature_of(
    arguments: AdapterArguments, bootstrap: int, seed: int, level: float, paired: bool = True
) -> Signature:
    """The signature of these arguments and interval settings (OUT-SIGNATURE)."""
    from .signature import Signature

    return Signature(
        adapter=arguments.adapter,
        adapter_options=signature_options(arguments),
        bootstrap=bootstrap,
        seed=seed,
        level=level,
        paired=paired,
    )


def evaluation_rules(arguments: AdapterArguments) -> str:
    """TRACE-EVALUATIONS: the hash of the rule set that labelled the failures of this run."""
    from prefixexec.adapters.evaluations import rule_set_hash

    digest = ""
    if arguments.label_rules is not None:
        from prefixexec.adapters.labels import file_digest

        digest = file_digest(arguments.label_rules)
    return rule_set_hash(digest, arguments.error_pattern)


def bootstrap_settings(bootstrap: int, seed: int, level: float) -> BootstrapSettings | None:
    """Bootstrap settings, or None when intervals are off (``--bootstrap 0``)."""
    if bootstrap == 0:
        return None
    from prefixexec.kernel.bootstrap import BootstrapSettings

    return BootstrapSettings(B=bootstrap, seed=seed, level=level)


@attrs.frozen(slots=True)
class Resampling:
    """``--bootstrap B``, ``--seed S``, ``--level L`` as given: the interval protocol."""

    bootstrap: int = 10_000
    seed: int = 0
    level: float = 0.95

    @property
    def settings(self) -> BootstrapSettings | None:
        """The bootstrap's settings, ``None`` with intervals off."""
        return bootstrap_settings(self.bootstrap, self.seed, self.level)


@attrs.frozen(slots=True)
class CompareOptions:
    """``compare``'s arguments (and ``prefixexec.compare``'s keywords), typed: the input, the
    interval protocol, the baseline and how conditions are matched and adjusted (CMP-*)."""

    arguments: AdapterArguments
    resampling: Resampling
    baseline: str
    stdout: TextIO
    match: str | None = None
    adjust: str = "holm"
    json: bool = False
    output: str | None = None
    engine: EngineOptions = EngineOptions()
    quiet: bool = False
