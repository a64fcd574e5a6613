"""``python -m prefixexec``: runs the command line."""

from prefixexec.cli import run

run()
