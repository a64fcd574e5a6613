"""Progress of long commands: on a terminal only, never piped or with --quiet (spec: PROGRESS-*)."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

import prefixexec.report.progress as progress_module
from prefixexec.cli import main

from conftest import REPO

DEMO = str(REPO / "examples" / "demo.jsonl")


class Terminal(io.StringIO):
    """A stderr that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def run_on(stream: io.StringIO, argv: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    monkeypatch.setattr(progress_module, "DELAY", 0.0)  # show at once (the delay keeps quick runs silent)
    monkeypatch.setattr("sys.stderr", stream)
    code = main(argv)
    return code, stream.getvalue()


@pytest.mark.spec("PROGRESS-TTY")
@pytest.mark.parametrize(
    ("argv", "label"),
    [
        (["score", "--bootstrap", "200", DEMO], "prefixexec score"),
        (["compare", "--baseline", "react", "--bootstrap", "200", DEMO], "prefixexec compare"),
        (["convert", DEMO, "--output", "{tmp}/o.jsonl"], "prefixexec convert"),
    ],
)
def test_progress_on_a_terminal(
    argv: list[str],
    label: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    code, err = run_on(Terminal(), argv, monkeypatch)
    assert code == 0 and label in err
    for stream in (io.StringIO(), Terminal()):  # piped, and a terminal with --quiet
        quiet = ["--quiet"] if isinstance(stream, Terminal) else []
        code, err = run_on(stream, [*argv, *quiet], monkeypatch)
        assert code == 0 and label not in err
        if argv[0] != "convert":
            assert err == ""


@pytest.mark.spec("PROGRESS-QUIET")
def test_conformance_shows_vectors_done_unless_quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    vectors = REPO / "spec" / "vectors"
    some = sorted(p.stem for p in vectors.glob("*.json"))[:3]
    assert len(some) == 3, "spec/vectors is missing"
    argv = ["conformance", "--command", f"{sys.executable} -m prefixexec score --json --bootstrap 0 -"]
    for name in some:
        argv += ["--only", name]
    code, err = run_on(Terminal(), argv, monkeypatch)
    assert code == 0 and "prefixexec conformance: checking  3/3 vectors" in err
    code, err = run_on(Terminal(), [*argv, "--quiet"], monkeypatch)
    assert code == 0 and "vectors" not in err


@pytest.mark.spec("PROGRESS-TTY", "PROGRESS-QUIET")
def test_audit_shows_a_status_on_a_terminal_only(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["audit", "--adapter", "records", DEMO]
    code, err = run_on(Terminal(), argv, monkeypatch)
    assert code == 0 and "prefixexec audit: records" in err
    out = capsys.readouterr().out
    for stream, extra in ((io.StringIO(), []), (Terminal(), ["--quiet"])):
        code, err = run_on(stream, [*argv, *extra], monkeypatch)
        assert code == 0 and err == ""
        assert capsys.readouterr().out == out  # the same report either way


@pytest.mark.spec("PROGRESS-COUNT")
def test_work_counts_and_says_the_time_left(monkeypatch: pytest.MonkeyPatch) -> None:
    from prefixexec.ttyprogress import Work

    now = [100.0]
    stream = Terminal()
    monkeypatch.setattr("sys.stderr", stream)
    work = Work(False, "prefixexec score", delay=0.0, clock=lambda: now[0])
    work.phase("reading input", unit="rollouts")
    now[0] += 2.0
    work.advance(500)
    # No total: the count and its rate (500 rollouts in 2 s).
    assert work.line() == "prefixexec score: reading input  500 rollouts (250/s)  2 s elapsed"
    work.phase("bootstrap", 4, "datasets")
    now[0] += 30.0
    work.advance()
    # One of four datasets in 30 s: three more take about 90 s.
    assert work.line() == "prefixexec score: bootstrap  1/4 datasets  ~1 min 30 s left  32 s elapsed"
    now[0] += 90.0
    work.advance(3)
    assert work.line() == "prefixexec score: bootstrap  4/4 datasets  2 min 02 s elapsed"
    work.close()
    assert stream.getvalue().endswith("\r" + " " * len(work.line()) + "\r")  # erased at the end
    quiet = Work(True, "x", delay=0.0)
    quiet.phase("p", 2)
    quiet.advance()
    assert not quiet.shown


@pytest.mark.spec("PROGRESS-COUNT")
def test_score_counts_rollouts_and_bootstrap_blocks_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    code, err = run_on(Terminal(), ["score", "--bootstrap", "200", DEMO], monkeypatch)
    # examples/demo.jsonl: 8 rollouts of one dataset (wc -l; every line's dataset is "demo"); 200
    # resamples of 4 tasks fit in one block of the blocked bootstrap (BOOT-BLOCK, BOOT-PROGRESS).
    assert code == 0 and "reading input  8 rollouts" in err and "1/1 blocks" in err
