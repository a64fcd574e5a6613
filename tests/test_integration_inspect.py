"""The inspect_ai scorer, metrics and approver in real inspect runs (spec/integrations.md).

The tests read tiny inspect runs made with inspect's scripted mock model (``mockllm``) by
tests/test_integration_inspect_runner.py, all in one subprocess (the module fixture ``logs``;
importing inspect_ai patches the standard library's ``zipfile``, so it is kept out of the pytest
process, and importing it once keeps the runs cheap), with tools that succeed
and that fail in the ways inspect records, as tests/make_inspect_logs.py makes the committed logs.
The logs are read back with the inspect adapter's own reader. The expected values are not
written here: they are what ``prefixexec score --adapter inspect`` reads from the very log the
run wrote (one implementation, two entry points). Needs inspect_ai (the ``inspect`` extra;
installed in .venv-test: inspect_ai 0.3.285).
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tomllib
from contextlib import redirect_stderr, redirect_stdout
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from test_integration_inspect_runner import SCENARIOS

from prefixexec.adapters import AdapterOptions
from prefixexec.adapters import inspect_logs as il
from prefixexec.adapters.inspect_logs.reader import iter_log
from prefixexec.cli import main

from conftest import REPO

RUNNER = REPO / "tests" / "test_integration_inspect_runner.py"

#: Every scenario whose sample ends without an error (inspect scores those).
SCORED = tuple(name for name in SCENARIOS if name != "crash")


def run_all(folder: Path, runs: dict[str, tuple[tuple[str, ...], str, tuple[str, ...]]]) -> dict[str, Path]:
    """Run each ``name: (scenarios, log format, runner options)`` in inspect, all in one subprocess
    (the runner's ``--batch``: inspect_ai is imported once), each into its own folder; the path of
    the log each run wrote."""
    jobs = []
    for name, (scenarios, log_format, options) in runs.items():
        (folder / name).mkdir()
        jobs.append([str(folder / name), log_format, ",".join(scenarios), *options])
    batch = folder / "jobs.json"
    batch.write_text(json.dumps(jobs), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(RUNNER), "--batch", str(batch)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    paths = [Path(line) for line in done.stdout.strip().splitlines()[-len(runs) :]]
    assert len(paths) == len(runs), done.stdout
    for name, path in zip(runs, paths, strict=True):
        assert path.parent == folder / name, (name, path)  # each log in its own run's folder
    return dict(zip(runs, paths, strict=True))


def read_log(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header and the samples of a log, read by the inspect adapter's reader (INS-FILES).

    A ``.json`` log is one JSON document: read whole (the adapter's stream hands over its header
    as soon as it names the scorers, before ``results``)."""
    if path.suffix == ".json":
        document = json.loads(path.read_text(encoding="utf-8"))
        return document, document["samples"]
    header: dict[str, Any] = {}
    samples: list[dict[str, Any]] = []
    for kind, _, value in iter_log(path):
        if kind == "eval":
            header = value
        else:
            samples.append(value)
    return header, samples


def tool_errors(sample: dict[str, Any]) -> list[tuple[str, str | None, str]]:
    """``(function, error type, error message)`` of each tool message of a sample."""
    found = []
    for m in sample["messages"]:
        if m["role"] == "tool":
            error = m.get("error")
            found.append(
                (
                    m["function"],
                    None if error is None else error["type"],
                    "" if error is None else error["message"],
                )
            )
    return found


def cli_score(path: Path, *extra: str) -> dict[str, Any]:
    """``prefixexec score --adapter inspect --scorer outcome --json`` (in this process: reading a
    log does not import inspect_ai)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(["score", "--adapter", "inspect", "--scorer", "outcome", "--json", *extra, str(path)])
    assert status == 0, err.getvalue()
    conditions = json.loads(out.getvalue())["conditions"]
    assert len(conditions) == 1
    return dict(conditions[0])


def log_metrics(path: Path, name: str = "prefix_executability") -> dict[str, float]:
    header, _ = read_log(path)
    (found,) = [s for s in header["results"]["scores"] if s["name"] == name]
    return {key: m["value"] for key, m in found["metrics"].items()}


APPROVAL_POLICY = "approvers:\n  - name: prefixexec/schema_approver\n    tools: '*'\n"


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every inspect run the tests below read, made in one runner process (the runs with an
    approver come last, so no later run could see one)."""
    folder = tmp_path_factory.mktemp("inspect")
    policy = folder / "approval.yaml"
    policy.write_text(APPROVAL_POLICY, encoding="utf-8")
    return run_all(
        folder,
        {
            "eval": (SCORED, "eval", ()),
            "json": (SCORED, "json", ()),
            "no_outcome": (("ok", "recovered"), "eval", ("--no-outcome",)),
            "epochs": (SCORED, "eval", ("--epochs", "2")),
            "errors": (("ok", "recovered", "crash"), "eval", ("--errors-ok",)),
            "approval": (("ok", "bad_args", "unknown_tool", "parallel"), "eval", ("--approval", str(policy))),
            "approver_object": (("bad_args", "ok"), "eval", ("--approver-object",)),
        },
    )


@pytest.fixture(scope="module")
def eval_log(logs: dict[str, Path]) -> Path:
    return logs["eval"]


@pytest.mark.spec("INSP-SCORER-SAME", "INSP-SCORER-METRICS", "INSP-SCORER-FLOAT")
@pytest.mark.parametrize("log_format", ["eval", "json"])
def test_metrics_in_the_log_equal_prefixexec_score(log_format: str, logs: dict[str, Path]) -> None:
    path = logs[log_format]
    assert path.suffix == f".{log_format}"
    metrics = log_metrics(path)
    expected = cli_score(path)
    exact = expected["exact"]
    # each float in the log is the nearest double of the CLI's exact fraction
    assert metrics["ter"] == float(Fraction(exact["TER"]))
    assert metrics["auc_pec"] == float(Fraction(exact["AUC_PEC"]))
    assert metrics["mean_fed"] == float(Fraction(exact["mean_FED"]))
    assert metrics["rr"] == float(Fraction(exact["RR"]))
    assert metrics["rr_eligible"] == expected["RR_eligible"]
    # the run is not degenerate: failures and a recovery are both there (outcome C after a
    # first error: "recovered", "bad_args", "tool_error")
    assert 0 < Fraction(exact["TER"]) < 1 and 0 < Fraction(exact["RR"]) < 1


@pytest.mark.spec("INSP-SCORER-SAME", "INSP-SCORER-VALUE")
def test_each_sample_score_is_the_adapters_rollout(eval_log: Path) -> None:
    rollouts = {r.task_id: r for r in il.read([str(eval_log)], AdapterOptions(scorer="outcome"))}
    _, samples = read_log(eval_log)
    assert len(samples) == len(SCORED)
    labels = set()
    for sample in samples:
        score = sample["scores"]["prefix_executability"]
        rollout = rollouts[str(sample["id"])]
        o = rollout.outcome
        assert score["value"] == {"T": o.T, "fed": o.fed, "Y": int(rollout.success)}
        assert score.get("answer") == (None if o.label is None else o.label.value)
        assert score.get("explanation") == o.reason
        labels.add(score.get("answer"))
    # the scenarios reach every inspect label they script: file_not_found (dependency), parsing
    # (schema), and samples without one (unknown is unlabelled: LABEL-UNMATCHED)
    assert labels == {None, "dependency", "schema"}


@pytest.mark.spec("INSP-SCORER-SUCCESS")
def test_without_a_success_scorer_rr_is_undefined(logs: dict[str, Path]) -> None:
    path = logs["no_outcome"]  # ("ok", "recovered"), only the prefixexec scorer
    metrics = log_metrics(path)
    assert metrics["rr_eligible"] == 1  # "recovered" fails at its first call
    assert metrics["rr"] != metrics["rr"]  # NaN: Y unknown
    _, samples = read_log(path)
    assert [s["scores"]["prefix_executability"]["value"]["Y"] for s in samples] == [None, None]


@pytest.mark.spec("INSP-SCORER-EPOCHS")
def test_epochs_pooled_count_each_epoch_as_a_rollout(logs: dict[str, Path]) -> None:
    path = logs["epochs"]  # SCORED, --epochs 2
    metrics = log_metrics(path)
    expected = cli_score(path)
    assert expected["N"] == 2 * len(SCORED)  # 10 scenarios x 2 epochs, as the run made them
    assert metrics["ter"] == float(Fraction(expected["exact"]["TER"]))
    assert metrics["auc_pec"] == float(Fraction(expected["exact"]["AUC_PEC"]))
    assert metrics["mean_fed"] == float(Fraction(expected["exact"]["mean_FED"]))
    assert metrics["rr"] == float(Fraction(expected["exact"]["RR"]))
    assert metrics["rr_eligible"] == expected["RR_eligible"]


@pytest.mark.spec("INSP-SCORER-ERRORS")
def test_a_sample_that_errors_is_not_scored_by_inspect(logs: dict[str, Path]) -> None:
    path = logs["errors"]  # ("ok", "recovered", "crash"), --errors-ok
    _, samples = read_log(path)
    scored = sorted(str(s["id"]) for s in samples if "prefix_executability" in (s.get("scores") or {}))
    assert scored == ["ok", "recovered"]  # inspect ran no scorer on "crash"
    # prefixexec score leaves the errored, unscored sample out as inspect does (INS-HARNESS) and
    # counts it with --harness-errors failure; on the scored ones it agrees with inspect's metrics
    assert cli_score(path, "--harness-errors", "failure")["N"] == 3
    expected = cli_score(path)
    assert expected["N"] == 2 and expected["harness_errors"] == {"counted": 0, "excluded": 1}
    metrics = log_metrics(path)
    assert metrics["ter"] == float(Fraction(expected["exact"]["TER"]))
    assert metrics["auc_pec"] == float(Fraction(expected["exact"]["AUC_PEC"]))
    assert metrics["mean_fed"] == float(Fraction(expected["exact"]["mean_FED"]))
    assert metrics["rr"] == float(Fraction(expected["exact"]["RR"]))


@pytest.mark.spec("INSP-SCORER-REGISTRY")
def test_pyproject_declares_the_inspect_entry_point() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["entry-points"]["inspect_ai"] == {"prefixexec": "prefixexec.integrations._registry"}
    assert project["optional-dependencies"]["inspect"] == ["inspect_ai>=0.3"]


@pytest.mark.spec("INSP-SCORER-REGISTRY")
def test_inspect_finds_the_scorer_by_name_through_the_entry_point(eval_log: Path, tmp_path: Path) -> None:
    """``inspect score --scorer prefixexec/prefix_executability`` in a fresh process, where only the
    ``inspect_ai`` entry point (declared as pyproject.toml declares it) can load the module."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    dist = tmp_path / "site" / "prefixexec_entry-0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: prefixexec-entry\nVersion: 0\n")
    lines = [f"{k} = {v}" for k, v in project["entry-points"]["inspect_ai"].items()]
    (dist / "entry_points.txt").write_text("[inspect_ai]\n" + "\n".join(lines) + "\n")
    out = tmp_path / "rescored.eval"
    code = (
        "import sys, site; site.addsitedir(sys.argv[1]); from inspect_ai._cli.main import main; "
        "sys.argv = ['inspect'] + sys.argv[2:]; main()"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            str(tmp_path / "site"),
            "score",
            str(eval_log),
            "--scorer",
            "prefixexec/prefix_executability",
            "-S",
            "success=outcome",
            "--action",
            "append",
            "--output-file",
            str(out),
            "--display",
            "none",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    header, _ = read_log(out)
    names = [s["name"] for s in header["results"]["scores"]]
    # appended next to the run's own prefix_executability scores, under a fresh name
    (added,) = [n for n in names if n.startswith("prefix_executability") and n != "prefix_executability"]
    assert log_metrics(out, added) == log_metrics(eval_log)


@pytest.mark.spec("INSP-SCORER-OPTIONAL")
def test_without_inspect_ai_prefixexec_imports_and_the_integration_names_the_extra() -> None:
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'inspect_ai' or name.startswith('inspect_ai.'):\n"
        "            raise ImportError('blocked: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import prefixexec.cli, prefixexec.integrations, prefixexec.integrations.monitors\n"
        "try:\n"
        "    import prefixexec.integrations.inspect\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    hint = "pip install 'inspect_ai>=0.3' (or pip install '.[inspect]' in a prefixexec checkout)"
    assert hint in done.stdout


# --- the approver (INSP-APPROVER) ------------------------------------------------------------


@pytest.mark.spec("INSP-APPROVER")
def test_approver_rejects_calls_not_executable_at_the_schema_level(logs: dict[str, Path]) -> None:
    path = logs["approval"]  # ("ok", "bad_args", "unknown_tool", "parallel"), APPROVAL_POLICY
    _, samples = read_log(path)
    errors = {str(s["id"]): tool_errors(s) for s in samples}
    assert errors["ok"] == [("add", None, "")]
    (bad,) = errors["bad_args"]
    assert bad[:2] == ("add", "approval")
    assert "prefixexec: [schema]" in bad[2]
    assert "arguments.x" in bad[2] and "'two' is not of type 'integer'" in bad[2]
    # inspect answers a call to a tool it does not have before asking any approver ("parsing")
    assert [e[:2] for e in errors["unknown_tool"]] == [("delete_everything", "parsing")]
    # the approver judges the schema only: read_file's missing file still fails when it runs
    assert [e[:2] for e in errors["parallel"]] == [("add", None), ("read_file", "file_not_found")]
    # the adapter reads the rejection as inspect's "approval" error (INS-LABELS: precondition)
    rollouts = {r.task_id: r for r in il.read([str(path)], AdapterOptions(scorer="outcome"))}
    assert rollouts["bad_args"].outcome.fed == 1 and rollouts["bad_args"].outcome.label is not None
    assert rollouts["bad_args"].outcome.label.value == "precondition"


@pytest.mark.spec("INSP-APPROVER")
def test_approver_object_in_a_policy(logs: dict[str, Path]) -> None:
    path = logs["approver_object"]  # ("bad_args", "ok"), the approver as an object
    _, samples = read_log(path)
    errors = {str(s["id"]): tool_errors(s) for s in samples}
    assert [e[:2] for e in errors["bad_args"]] == [("add", "approval")]
    assert errors["ok"] == [("add", None, "")]
