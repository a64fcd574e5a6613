"""Subcommands beyond ``score`` and ``adapters``: one module each, found by the CLI.

A module here defines ``NAME`` (the subcommand), ``add_parser(sub)`` (adds its argparse
sub-parser) and ``run(args) -> int`` (the exit status). It raises
:class:`prefixexec.adapters.InputError` for bad input; the CLI turns that into exit 2.
"""
