"""Rerun mutmut mutants in one process through mutmut's own switch (issue 19; tests/mutation.md).

mutmut 3's trampolines read ``MUTANT_UNDER_TEST`` at every call, so one Python process can run a
test selection under many mutants in turn without paying interpreter and import start-up per
mutant. Used for the mutants a ``mutmut run`` did not reach and to rerun survivors against new
tests. Not part of the test suite.

Usage (in WORKDIR/stage/mutants of ``bash tests/mutation.sh WORKDIR``)::

    PYTHONPATH=src python /path/to/tests/mutation_rerun.py OUTDIR MUTANTS_FILE TEST_FILE...

For each mutant name in MUTANTS_FILE (whitespace separated) it writes ``OUTDIR/<mutant>`` holding
pytest's exit code (0: the mutant survived these tests; 1: a test failed, killed; 99: crashed or
timed out after 180 s, counted as killed only if you decide so) and ``OUTDIR/<mutant>.log``.
Arguments after the mutants file go to pytest as they are, e.g. ``-m "not hypothesis"`` for a
first pass over the example tests only (a failing property test spends seconds shrinking, and
pytest's traceback of a mutated module of 40,000 lines takes longer: hence ``--tb=no``).
Mutants with a result already are skipped, so a stopped run resumes. The selection must pass
without a mutant first.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sys
from types import FrameType

import pytest


def _timeout(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt("mutant timed out")


def main(argv: list[str]) -> int:
    out, listing, tests = argv[0], argv[1], argv[2:]
    os.makedirs(out, exist_ok=True)
    args = ["-q", "-x", "--tb=no", "-p", "no:cacheprovider", *tests]
    signal.signal(signal.SIGALRM, _timeout)
    os.environ["MUTANT_UNDER_TEST"] = ""
    with contextlib.redirect_stdout(io.StringIO()):
        baseline = int(pytest.main(args))
    print("baseline", baseline, flush=True)
    if baseline != 0:
        return 1
    # A failing example only has to be found, not shrunk (shrinking took up to a minute a mutant).
    from hypothesis import Phase, settings

    current = settings()
    settings.register_profile(
        "mutation-rerun", current, phases=[Phase.explicit, Phase.reuse, Phase.generate]
    )
    settings.load_profile("mutation-rerun")
    with open(listing, encoding="utf-8") as f:
        names = f.read().split()
    for name in names:
        path = os.path.join(out, name)
        if os.path.exists(path):
            continue
        os.environ["MUTANT_UNDER_TEST"] = name
        signal.alarm(180)
        buffer = io.StringIO()
        try:
            with contextlib.redirect_stdout(buffer):
                code = int(pytest.main(args))
        except BaseException:  # a mutant may raise anything, or time out
            code = 99
        signal.alarm(0)
        os.environ["MUTANT_UNDER_TEST"] = ""
        with open(path, "w", encoding="utf-8") as f:
            f.write(f"{code}\n")
        with open(path + ".log", "w", encoding="utf-8") as f:
            f.write(buffer.getvalue()[-3000:])
        print(name, code, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
