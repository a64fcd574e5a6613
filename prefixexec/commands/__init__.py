"""Subcommands beyond ``score``, ``compare`` and ``adapters``: one module each, found by the CLI.

A module here defines ``NAME`` (the subcommand), ``add_parser(sub)`` (adds its argparse
sub-parser), ``Options`` (a frozen attrs class: the command's typed options, each field named
after its option's ``dest``; the fields ``arguments``, ``resampling``, ``engine``, ``view`` and
``stdout`` are made of several options, see :data:`prefixexec.cli.BUILDERS`) and
``run(options) -> int`` (the exit status). The command line makes ``Options`` once
(:func:`prefixexec.cli.typed`); the ``argparse.Namespace`` never reaches the module (spec
API-PIPELINE). It raises :class:`prefixexec.adapters.InputError` for bad input; the CLI turns
that into exit 2. A command that detects its input's adapter itself (``sample``: a task list is
not rollouts; ``leaderboard`` and ``crosscheck``: each submission folder's files) sets
``detect_in_command`` on its parser and calls :func:`prefixexec.pipeline.detect` on its
``arguments``.
"""
