"""The guard's provenance check against the session's size (GUARD-PROVENANCE-INDEX, issue 41).

A session of N tool results (each about 80 characters, each with its own order id); one check
of an identifier that never occurred (the check a blocked call makes: every text must be ruled
out) and one of an identifier from the middle of the session, by ``SeenIndex.occurs`` (what the
guard asks) and by its peer ``occurs(identifier, texts)`` over the same texts (what it asked
before: every seen text normalised and searched on every check), measured in the same run.

Usage: ``python benchmarks/guard_provenance.py [--sizes 100,1000,5000]``. Target: the index's
time per check does not grow with N.
"""

from __future__ import annotations

import argparse
import time

from prefixexec.adapters.provenance import SeenIndex, occurs


def per_check(check: object, identifier: str, repeat: int) -> float:
    """Microseconds per call of ``check(identifier)``, the best of 3 runs of ``repeat`` calls."""
    assert callable(check)
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(repeat):
            check(identifier)
        best = min(best, (time.perf_counter() - start) / repeat)
    return best * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,1000,5000", help="session sizes (results), comma-separated")
    args = parser.parse_args()
    for size in (int(n) for n in args.sizes.split(",")):
        texts = [
            f"order W{n}: shipped to 12 Main St, carrier UPS, tracking 1Z{n:08d}, 3 books"
            for n in range(size)
        ]
        index = SeenIndex(texts)
        for identifier, what in (("W99999999", "never occurred"), (f"W{size // 2}", "occurred")):
            assert index.occurs(identifier) == occurs(identifier, texts)
            indexed = per_check(index.occurs, identifier, 2000)
            scanned = per_check(lambda i, t=texts: occurs(i, t), identifier, max(1, 20000 // size))
            print(f"{size:>6} results, an id that {what:>14}: index {indexed:8.1f} us, "
                  f"occurs() over the texts {scanned:10.1f} us ({scanned / indexed:.0f}x)")  # fmt: skip


if __name__ == "__main__":
    main()
