"""The one error type for bad user input (spec: REC-ERRORS)."""

from __future__ import annotations


class InputError(Exception):
    """Bad input: the message names the place (``FILE:LINE`` or file and record) and the fault.

    The command line prints the message, writes no output and exits with status 2.
    """

    def __init__(self, where: str, what: str) -> None:
        super().__init__(f"{where}: {what}")
        self.where = where
        self.what = what

    def __reduce__(self) -> tuple[type[InputError], tuple[str, str]]:
        """Pickle with both arguments (workers of a Dask cluster send errors back)."""
        return (InputError, (self.where, self.what))
