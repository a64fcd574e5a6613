"""``python -m prefixexec``: runs the command line."""

from prefixexec.cli import main

raise SystemExit(main())
