"""Optional dependencies and the extras that install them (spec: API-EXTRAS).

The core install (``pip install .`` in a checkout, or its wheel) is the kernel, the record reader
and the light adapters; the heavy packages come with extras. The distribution is not on PyPI, so
a command or function that needs a package of a missing extra stops with one line naming the
``pip install`` of the package itself (the extra's requirement) and the extra, to install from
a checkout instead.
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


#: Extra -> its requirement (pyproject.toml's optional-dependencies; tests/test_docs.py keeps them equal).
REQUIREMENT = {
    "report": "matplotlib>=3.8",
    "parquet": "pyarrow>=15",
    "dask": "dask[distributed]>=2024.1",
    "pandas": "pandas>=2",
    "polars": "polars>=1",
    "inspect": "inspect_ai>=0.3",
}


class MissingExtra(ImportError):
    """An optional dependency is not installed; the message names the extra that installs it."""


def install_hint(extra: str) -> str:
    """``pip install 'matplotlib>=3.8' (or pip install '.[report]' in a prefixexec checkout)``."""
    return f"pip install '{REQUIREMENT[extra]}' (or pip install '.[{extra}]' in a prefixexec checkout)"


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
