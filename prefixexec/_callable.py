"""Modules that are also the command's Python function (spec: API-COMMANDS).

``prefixexec.explain``, ``.report``, ``.demo``, ``.crosscheck``, ``.conformance`` and
``.audit_table`` name both a module of this package and a command; the module is made callable,
so that ``prefixexec.explain(source, ...)`` runs :func:`prefixexec.calls.explain` whether or not
the module was imported before. Everything else about the module stays as it is. Typed code can
import the plain functions instead: ``from prefixexec.calls import explain``.
"""

from __future__ import annotations

import sys
import types
from typing import Any


class CommandModule(types.ModuleType):
    """A module that, called, runs its command's function in :mod:`prefixexec.calls`."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        import prefixexec.calls as calls

        return getattr(calls, self.__name__.rsplit(".", 1)[1])(*args, **kwargs)


def make_callable(name: str) -> None:
    """Make the module ``name`` (``prefixexec.explain``, ...) callable as its command's function."""
    sys.modules[name].__class__ = CommandModule
