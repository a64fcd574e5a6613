"""The summary of ``bash tests/mutation.sh`` (issue 19; tests/mutation.md): both phases counted.

Usage: python tests/mutation_summary.py WORKDIR MUTMUT_SECONDS TOTAL_SECONDS STOPPED

Reads ``WORKDIR/results.txt`` (``mutmut results --all true``: one ``name: status`` line per
mutant) and, for the mutants mutmut did not check, the exit codes tests/mutation_rerun.py wrote
in ``WORKDIR/rerun-examples`` (the example tests) and ``WORKDIR/rerun-all`` (the survivors of
that, against every test of the selection). Writes ``WORKDIR/results-final.txt``: mutmut's
statuses with those of the rerun (0 survived, 1 killed, 99 timeout), which
tests/mutation_report.py reads. Not part of the test suite.
"""

from __future__ import annotations

import collections
import os
import sys

#: tests/mutation_rerun.py's exit codes.
CODES = {"0": "survived", "1": "killed", "99": "crashed or timed out (180 s)"}
#: The same as mutmut's statuses, for ``results-final.txt``.
STATUSES = {"0": "survived", "1": "killed", "99": "timeout"}


def _rerun(work: str, folder: str, name: str) -> str | None:
    path = os.path.join(work, folder, name)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return f.read().strip()


def _counts(status: dict[str, str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(collections.Counter(status.values()).items()))


def read_statuses(path: str) -> dict[str, str]:
    """``name -> status`` of a file of ``name: status`` lines (``mutmut results --all true``, or
    ``results-final.txt``)."""
    status: dict[str, str] = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            name, sep, state = line.strip().rpartition(": ")
            if sep and name:
                status[name] = state
    return status


def main(argv: list[str]) -> int:
    work, mutmut_seconds, seconds, stopped = argv[0], int(argv[1]), int(argv[2]), argv[3] == "1"
    status = read_statuses(os.path.join(work, "results.txt"))
    budget = ", stopped at the budget" if stopped else ""
    print(f"mutation: {len(status)} mutants; mutmut run ({mutmut_seconds} s{budget}): {_counts(status)}")
    final: dict[str, str] = dict(status)
    for name, state in status.items():
        if state == "not checked":
            first = _rerun(work, "rerun-examples", name)
            code = _rerun(work, "rerun-all", name) if first == "0" else first
            status[name] = CODES.get(code or "", "not run") + " (in one process)"
            final[name] = STATUSES.get(code or "", "not checked")
    with open(os.path.join(work, "results-final.txt"), "w", encoding="utf-8") as f:
        f.writelines(f"    {name}: {state}\n" for name, state in final.items())
    print(f"mutation: with the rerun in one process: {_counts(status)}")
    killed = sum(1 for s in status.values() if s.startswith("killed"))
    share = 100 * killed / max(len(status), 1)
    print(f"mutation: killed {killed} of {len(status)} = {share:.1f}% (equivalent mutants not left out)")
    rest = seconds - mutmut_seconds
    print(f"mutation: wall time {seconds} s (mutmut run {mutmut_seconds} s; import check and rerun {rest} s)")
    survivors = sorted(n for n, s in status.items() if s.startswith("survived"))
    print(f"mutation: {len(survivors)} survived")
    for name in survivors:
        print(f"  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
