"""Optional dependencies and the extras that install them (spec: API-EXTRAS).

The core install (``pip install prefix-executability``) is the kernel, the record reader and the
light adapters; the heavy packages come with extras. A command or function that needs a package
of a missing extra stops with one line naming the ``pip install`` that provides it.
"""

from __future__ import annotations

DISTRIBUTION = "prefix-executability"

#: Top-level module -> the extra that installs it (pyproject.toml's optional-dependencies).
EXTRA_OF = {
    "matplotlib": "report",
    "pyarrow": "parquet",
    "dask": "dask",
    "distributed": "dask",
    "pandas": "pandas",
    "polars": "polars",
    "inspect_ai": "inspect",
}


class MissingExtra(ImportError):
    """An optional dependency is not installed; the message names the extra that installs it."""


def install_hint(extra: str) -> str:
    """``pip install 'prefix-executability[EXTRA]'``."""
    return f"pip install '{DISTRIBUTION}[{extra}]'"


def missing_extra_message(exc: ImportError) -> str | None:
    """The one-line message for a missing optional module, or ``None`` when ``exc`` is not one."""
    name = (getattr(exc, "name", None) or "").split(".")[0]
    if isinstance(exc, MissingExtra):
        return str(exc)
    extra = EXTRA_OF.get(name)
    if extra is None:
        return None
    return f"{name} is not installed (the [{extra}] extra): {install_hint(extra)}"


def require(module: str, what: str) -> None:
    """Raise :class:`MissingExtra` (naming the extra) when ``module`` cannot be imported."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        extra = EXTRA_OF[module.split(".")[0]]
        raise MissingExtra(
            f"{what} needs {module}, which is not installed: {install_hint(extra)}", name=module
        )
