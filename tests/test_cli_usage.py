"""The command line's usage errors and --quiet (spec: CLI-USAGE, PROGRESS-QUIET; issue 30)."""

from __future__ import annotations

import argparse
import subprocess
import sys
from typing import cast

import pytest

from prefixexec.cli import build_parser, main


def commands() -> list[str]:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    return sorted(cast(dict[str, object], sub.choices))


#: What each command needs so that its parser gets as far as the unknown options.
REQUIRED = {
    "score": ["f"],
    "compare": ["f", "--baseline", "m"],
    "explain": ["f"],
    "report": ["f", "--out", "d"],
    "convert": ["f", "--output", "o.csv"],
    "sample": ["--size", "1"],
    "crosscheck": ["theirs.json", "f"],
    "audit": ["--adapter", "records"],
    "conformance": ["--command", "x"],
    "audit-table": ["t.csv"],
    "demo": ["--out", "d"],
    "leaderboard": ["f"],
}


def usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as ended:
        main(argv)
    assert ended.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err
    return err


@pytest.mark.spec("CLI-USAGE")
@pytest.mark.parametrize("command", commands())
def test_an_unknown_option_is_one_line_with_a_hint(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    err = usage_error([command, *REQUIRED.get(command, []), "--quite", "--no-such-option"], capsys)
    assert err == (
        f"prefixexec {command}: unknown options --quite --no-such-option (did you mean --quiet?); "
        f"see prefixexec {command} --help\n"
    )


@pytest.mark.spec("CLI-USAGE")
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["explain"], "prefixexec explain: the following arguments are required: FILE; see"),
        (["frobnicate"], "prefixexec: unknown command 'frobnicate'; see prefixexec --help"),
        ([], "prefixexec: a command is required; see prefixexec --help"),
        (["score", "--seed", "x", "f"], "prefixexec score: argument --seed: expected an integer >= 0: 'x'"),
        (["score", "f", "--adapter", "nope"], "prefixexec score: argument --adapter: invalid choice: 'nope'"),
        (["adapters", "extra"], "prefixexec adapters: unexpected argument extra; see prefixexec adapters"),
    ],
)  # fmt: skip
def test_usage_errors_name_the_command(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert usage_error(argv, capsys).startswith(message)


@pytest.mark.spec("CLI-USAGE")
def test_the_installed_command_prints_one_line_too() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "prefixexec", "explain", "x.jsonl", "--quite"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2 and done.stdout == ""
    hint = "see prefixexec explain --help"
    assert done.stderr == f"prefixexec explain: unknown option --quite (did you mean --quiet?); {hint}\n"


@pytest.mark.spec("PROGRESS-QUIET")
@pytest.mark.parametrize("command", commands())
def test_every_command_takes_quiet(command: str) -> None:
    parser = build_parser(command)
    sub = next(a for a in parser._actions if a.dest == "command")
    own = cast(dict[str, argparse.ArgumentParser], sub.choices)[command]
    assert "--quiet" in own._option_string_actions


@pytest.mark.spec("PROGRESS-QUIET", "DETECT-NOTICE")
def test_quiet_silences_the_notices_of_explain_crosscheck_and_convert(
    tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    from conftest import REAL

    tau = str(REAL / "tau-bench-v1" / "gpt-4o-airline.json")
    assert main(["explain", tau, "--task", "20", "--trial", "1", "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["explain", tau, "--task", "20", "--trial", "1"]) == 0
    assert "as taubench (detected" in capsys.readouterr().err
    out = f"{tmp_path}/o.csv"
    assert main(["convert", tau, "--output", out, "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["convert", tau, "--output", out, "--adapter", "taubench"]) == 0
    assert (
        capsys.readouterr().err == f"prefixexec: wrote 200 rollouts to {out}\n"
    )  # 200 rollouts: 50 tasks x 4
