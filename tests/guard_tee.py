"""Run an MCP server and record every line its stdin receives (tests/test_guard_mcp.py).

``python tests/guard_tee.py RECORD -- COMMAND [ARGS...]``: COMMAND's stdin is this process's,
each line also appended to RECORD (flushed); its stdout and stderr are this process's. The
tests read RECORD to see what reached the server.
"""

from __future__ import annotations

import subprocess
import sys


def main(argv: list[str]) -> int:
    record, separator, *command = argv
    assert separator == "--", "usage: guard_tee.py RECORD -- COMMAND [ARGS...]"
    child = subprocess.Popen(command, stdin=subprocess.PIPE, bufsize=0)
    assert child.stdin is not None
    with open(record, "ab", buffering=0) as log:
        for line in iter(sys.stdin.buffer.readline, b""):
            log.write(line)
            try:
                child.stdin.write(line)
            except (BrokenPipeError, OSError):
                break
    try:
        child.stdin.close()
    except OSError:
        pass
    return child.wait()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
