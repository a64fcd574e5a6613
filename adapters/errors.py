"""The one error type for bad user input (spec: REC-ERRORS)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


class InputError(ValueError):
    """Bad input: the message names the place (``FILE:LINE`` or file and record) and the fault.

    The command line prints the message, writes no output and exits with status 2; in Python it
    is a ``ValueError`` (API-ERRORS), so ``except ValueError`` catches bad input as it catches
    bad arguments.
    """

    #: DETECT-HINT: the adapter and files a command found itself (a submission folder's), which
    #: the command line's hint looks at instead of the files it was given (``None``: those).
    hint_input: tuple[str, tuple[str, ...]] | None = None

    def __init__(self, where: str, what: str) -> None:
        super().__init__(f"{where}: {what}")
        self.where = where
        self.what = what

    def __reduce__(self) -> tuple[type[InputError], tuple[str, str]]:
        """Pickle with both arguments (workers of a Dask cluster send errors back)."""
        return (InputError, (self.where, self.what))


class ArgumentError(InputError, TypeError):
    """A Python argument of the wrong type (API-ERRORS): an :class:`InputError` naming the
    argument, and a ``TypeError``; its message is the sentence alone (``'task' must be ...``)."""

    def __init__(self, argument: str, message: str) -> None:
        super().__init__(argument, message)
        self.args = (message,)

    def __str__(self) -> str:
        return str(self.args[0])


@contextmanager
def file_faults(path: str, expected: str) -> Iterator[None]:
    """The operating system's faults on opening or reading ``path`` as one :class:`InputError`.

    ``no such file``, ``is a directory, expected <expected>``, ``not UTF-8 text (<why> at byte
    <n>)`` and ``permission denied``: the same words for every reader (REC-ERRORS).
    """
    try:
        yield
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except IsADirectoryError:
        raise InputError(path, f"is a directory, expected {expected}") from None
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except PermissionError:
        raise InputError(path, "permission denied") from None
