"""Generated blocks of README.md and docs/*.md: command output copied from the code, never by hand.

A block is written in a Markdown page between two comment lines::

    <!-- generated: NAME -->
    ...what GENERATORS[NAME]() returns...
    <!-- end generated -->

``tests/test_docs.py`` fails when a block differs from what its generator gives now (the demo
table is checked in ``tests/test_report_demo.py``, beside the demo run it needs), so the numbers
in the documentation cannot drift from the code. ``python tests/doc_blocks.py`` rewrites every
block in place (run from anywhere; it runs the commands in the checkout's root, as the pages
show them; the real runs they read are in tests/data/real).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
#: The pages that may hold generated blocks.
PAGES = ("README.md", "docs/*.md", "spec/*.md")

BEGIN = re.compile(r"^<!-- generated: ([a-z0-9-]+) -->$")
END = "<!-- end generated -->"

#: The real tau-bench run the front page shows (MIT, in tests/data/real).
TAU = "tests/data/real/tau-bench-v1/gpt-4o-airline.json"
#: The real tau2-bench leaderboard submissions folder, in tau2's layout (MIT, in tests/data/real).
SUBMISSIONS = "tests/data/real/tau2-submissions"
#: The AgentRx tau-bench retail run with human step labels (MIT, in tests/data/real).
AGENTRX = "tests/data/real/agentrx-tau-retail/data/tau_retail/tau_dataset_failed.json"


@contextlib.contextmanager
def in_checkout() -> Iterator[None]:
    """Run in the checkout's root, where the pages' relative paths hold."""
    before = os.getcwd()
    os.chdir(REPO)
    try:
        yield
    finally:
        os.chdir(before)


def command_output(argv: Sequence[str], stream: str = "stdout") -> str:
    """What ``prefixexec ARGV`` writes to ``stream``, run in this process in the checkout's root."""
    from prefixexec.cli import main

    out, err = io.StringIO(), io.StringIO()
    with in_checkout(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(argv))
    if status not in (0, 1):
        raise RuntimeError(f"prefixexec {' '.join(argv)} exited {status}: {err.getvalue()}")
    return out.getvalue() if stream == "stdout" else err.getvalue()


def shell(argv: Sequence[str], stream: str = "stdout") -> str:
    """A fenced block: ``$ prefixexec ARGV`` and what it printed."""
    import shlex

    shown = " ".join(shlex.quote(a) for a in argv)
    return f"```\n$ prefixexec {shown}\n{command_output(argv, stream)}```"


def demo_table(table_md: str) -> str:
    """The Markdown table of the demo's ``table.md`` (its caption and signature left out)."""
    lines = [ln for ln in table_md.splitlines() if ln.startswith("|")]
    return "\n".join(lines)


def _demo() -> str:
    from prefixexec.cli import main

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "demo-report"
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(["demo", "--out", str(out), "--quiet"]) == 0
        return demo_table((out / "table.md").read_text(encoding="utf-8"))


def _sample_bfcl() -> str:
    """``sample --benchmark bfcl`` into ``bfcl-200.json`` (in a temporary folder), what it says,
    and the file's first lines."""
    import shlex

    from prefixexec.cli import main

    argv = [
        "sample",
        "--benchmark",
        "bfcl",
        "--per-category",
        "50",
        "--seed",
        "0",
        "--output",
        "bfcl-200.json",
    ]
    before = os.getcwd()
    err = io.StringIO()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            with contextlib.redirect_stderr(err):
                assert main(argv) == 0
            head = Path("bfcl-200.json").read_text(encoding="utf-8").splitlines()[:4]
        finally:
            os.chdir(before)
    shown = " ".join(shlex.quote(a) for a in argv)
    return f"```\n$ prefixexec {shown}\n{err.getvalue()}$ head -4 bfcl-200.json\n" + "\n".join(head) + "\n```"


def _usage_error() -> str:
    """A mistyped option: what ``prefixexec explain runs.jsonl --quite`` prints (CLI-USAGE)."""
    import shlex

    from prefixexec.cli import main

    argv = ["explain", "runs.jsonl", "--quite"]
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            main(argv)
        except SystemExit as exc:
            assert exc.code == 2
    return f"```\n$ prefixexec {' '.join(shlex.quote(a) for a in argv)}\n{err.getvalue()}```"


def _human_labels() -> str:
    """What ``python benchmarks/human_labels.py`` prints (docs/localisation.md)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("human_labels", REPO / "benchmarks" / "human_labels.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["human_labels"] = module
    spec.loader.exec_module(module)
    with contextlib.redirect_stderr(io.StringIO()):
        return str(module.render(module.DATA)).rstrip("\n")


#: Block name -> what it holds now. The ``demo-table`` block runs the whole demo (~10 s).
GENERATORS: dict[str, Callable[[], str]] = {
    "score-records": lambda: shell(["score", "--bootstrap", "0", "examples/demo.jsonl"]),
    "score-taubench": lambda: shell(["score", TAU]),
    "explain-taubench": lambda: shell(["explain", TAU, "--task", "20", "--trial", "1"]),
    "adapters": lambda: shell(["adapters"]),
    "sample-bfcl": _sample_bfcl,
    "usage-error": _usage_error,
    "demo-table": _demo,
    "explain-agentrx": lambda: shell(["explain", AGENTRX, "--task", "34"]),
    "human-labels": _human_labels,
    "leaderboard-submissions": lambda: shell(
        ["leaderboard", SUBMISSIONS, "--bootstrap", "1000", "--metric", "TER", "--quiet"]
    ),
    "crosscheck-submissions": lambda: shell(
        [
            "crosscheck",
            f"{SUBMISSIONS}/adaptive-agent_ironshell-ui_2026-03-22/submission.json",
            f"{SUBMISSIONS}/kimi-k2_moonshot-ai_2025-07-11/submission.json",
            "--quiet",
        ]
    ),
}


def pages() -> list[Path]:
    """Every page that may hold blocks, sorted."""
    return sorted({p for pattern in PAGES for p in REPO.glob(pattern)})


def blocks(text: str) -> list[tuple[str, int, int]]:
    """``(name, start, end)`` of each block: the lines ``start:end`` between its two markers."""
    lines = text.split("\n")
    found: list[tuple[str, int, int]] = []
    i = 0
    while i < len(lines):
        match = BEGIN.match(lines[i])
        if match:
            end = next((j for j in range(i + 1, len(lines)) if lines[j] == END), None)
            if end is None:
                raise ValueError(f"block {match.group(1)!r} has no {END!r} line")
            found.append((match.group(1), i + 1, end))
            i = end
        i += 1
    return found


def block_text(text: str, start: int, end: int) -> str:
    return "\n".join(text.split("\n")[start:end])


def replace(text: str, name: str, content: str) -> str:
    """``text`` with every block ``name`` holding ``content``."""
    lines = text.split("\n")
    for block, start, end in reversed(blocks(text)):
        if block == name:
            lines[start:end] = content.split("\n")
    return "\n".join(lines)


def used() -> dict[str, list[Path]]:
    """Block name -> the pages that hold it."""
    out: dict[str, list[Path]] = {}
    for page in pages():
        for name, _, _ in blocks(page.read_text(encoding="utf-8")):
            out.setdefault(name, []).append(page)
    return out


def write_all(names: Sequence[str] | None = None) -> list[str]:
    """Rewrite the blocks (all, or ``names``) in every page; returns the pages changed."""
    changed: list[str] = []
    contents = {name: GENERATORS[name]() for name in used() if names is None or name in names}
    for page in pages():
        text = page.read_text(encoding="utf-8")
        new = text
        for name, content in contents.items():
            new = replace(new, name, content)
        if new != text:
            page.write_text(new, encoding="utf-8")
            changed.append(str(page.relative_to(REPO)))
    return changed


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    for page in write_all(sys.argv[1:] or None):
        print(f"rewrote {page}")
