"""The inspect_ai scorer, metrics and approver in real inspect runs (spec/integrations.md).

Each test runs a tiny inspect task with inspect's scripted mock model (``mockllm``), as
tests/make_inspect_logs.py makes the committed logs: tools that succeed and that fail in the ways
inspect records. The expected values are not written here: they are what ``prefixexec score
--adapter inspect`` reads from the very log the run wrote (one implementation, two entry points).
Needs inspect_ai (the ``inspect`` extra; installed in .venv-test: inspect_ai 0.3.285).
"""

from __future__ import annotations

import errno
import json
import subprocess
import sys
import tomllib
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task, eval
from inspect_ai.approval import ApprovalPolicy
from inspect_ai.dataset import Sample
from inspect_ai.log import read_eval_log
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ModelOutput, ModelUsage, get_model
from inspect_ai.model._model_output import ChatCompletionChoice
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.scorer._metrics import mean
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool, ToolCall, ToolError, tool

from prefixexec.adapters import AdapterOptions
from prefixexec.adapters import inspect_logs as il
from prefixexec.integrations.inspect import prefix_executability, schema_approver

from conftest import REPO

MODEL = "mockllm/model"

# inspect's event loop leaves anyio memory streams to the garbage collector (ResourceWarning);
# that is inspect's own housekeeping, not something these tests check. inspect 0.3.285 passes
# tenacity a deprecated parameter (DeprecationWarning inside inspect, not in prefixexec).
pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

#: Per scenario: the steps the mock model takes and whether the ``outcome`` scorer says correct.
SCENARIOS: dict[str, dict[str, Any]] = {
    "ok": {"steps": [("call", [("add", {"x": 2, "y": 3})]), ("answer", "5")], "C": True},
    "recovered": {
        "steps": [
            ("call", [("read_file", {"path": "/missing"})]),
            ("call", [("add", {"x": 1, "y": 1})]),
            ("answer", "2"),
        ],
        "C": True,
    },
    "notool": {"steps": [("answer", "4")], "C": False},
    "notool_free": {"tools": False, "steps": [("answer", "hi")], "C": True},
    "parse_error": {"steps": [("parse_error", "add"), ("answer", "?")], "C": False},
    "unknown_tool": {"steps": [("call", [("delete_everything", {})]), ("answer", "x")], "C": False},
    "bad_args": {"steps": [("call", [("add", {"x": "two", "y": 3})]), ("answer", "x")], "C": True},
    "tool_error": {"steps": [("call", [("flaky", {})]), ("answer", "ok")], "C": True},
    "parallel": {
        "steps": [("call", [("add", {"x": 1, "y": 2}), ("read_file", {"path": "/nope"})]), ("answer", "3")],
        "C": False,
    },
    # the model raises after one good call: the sample ends in an error (only used where named)
    "crash": {"steps": [("call", [("add", {"x": 0, "y": 0})]), ("crash", "provider down")], "C": False},
    "two_ok": {
        "steps": [
            ("call", [("add", {"x": 1, "y": 2})]),
            ("call", [("add", {"x": 3, "y": 4})]),
            ("answer", "7"),
        ],
        "C": False,
    },
}


@tool
def add() -> Tool:
    async def execute(x: int, y: int) -> int:
        """Add two integers.

        Args:
            x: The first integer.
            y: The second integer.
        """
        return x + y

    return execute


@tool
def read_file() -> Tool:
    async def execute(path: str) -> str:
        """Read a text file.

        Args:
            path: The file to read.
        """
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)

    return execute


@tool
def flaky() -> Tool:
    async def execute() -> str:
        """A tool that reports an error."""
        raise ToolError("the service returned 503")

    return execute


@solver
def scripted_agent() -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if SCENARIOS[str(state.sample_id)].get("tools", True):
            state.tools = [add(), read_file(), flaky()]
        return await generate(state, tool_calls="loop")

    return solve


@scorer(metrics=[mean()])
def outcome() -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        return Score(value="C" if SCENARIOS[str(state.sample_id)]["C"] else "I")

    return score


def scripted_output(messages: list[ChatMessage], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
    scenario = str(messages[0].text).split(":", 1)[1].strip()
    index = sum(1 for m in messages if isinstance(m, ChatMessageAssistant))
    kind, payload = SCENARIOS[scenario]["steps"][index]
    if kind == "crash":
        raise RuntimeError(payload)
    if kind == "answer":
        output = ModelOutput.from_content(model=MODEL, content=payload)
    else:
        if kind == "parse_error":
            calls = [
                ToolCall(id=f"{scenario}-{index}-0", function=payload, arguments={}, parse_error="bad JSON")
            ]
        else:
            calls = [
                ToolCall(id=f"{scenario}-{index}-{n}", function=name, arguments=arguments)
                for n, (name, arguments) in enumerate(payload)
            ]
        message = ChatMessageAssistant(content="", tool_calls=calls, model=MODEL, source="generate")
        output = ModelOutput(
            model=MODEL, choices=[ChatCompletionChoice(message=message, stop_reason="tool_calls")]
        )
    # a fixed usage keeps the mock model from counting tokens with tiktoken (a download)
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return output


def run(tmp_path: Path, names: tuple[str, ...], log_format: str, **kwargs: Any) -> Path:
    task = Task(
        name="tiny_tools",
        dataset=[Sample(id=name, input=f"scenario: {name}", target="") for name in names],
        solver=scripted_agent(),
        scorer=kwargs.pop("scorers", [outcome(), prefix_executability()]),
    )
    logs = eval(
        task,
        model=get_model(MODEL, custom_outputs=scripted_output),
        log_dir=str(tmp_path),
        log_format=log_format,
        display="none",
        max_samples=1,
        **kwargs,
    )
    assert logs[0].status == "success" or kwargs.get("fail_on_error") is False, logs[0].error
    return Path(logs[0].location)


def cli_score(path: Path, *extra: str) -> dict[str, Any]:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "prefixexec",
            "score",
            "--adapter",
            "inspect",
            "--scorer",
            "outcome",
            "--json",
            *extra,
            str(path),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    conditions = json.loads(done.stdout)["conditions"]
    assert len(conditions) == 1
    return dict(conditions[0])


def log_metrics(path: Path) -> dict[str, float]:
    log = read_eval_log(str(path))
    assert log.results is not None
    (found,) = [s for s in log.results.scores if s.name == "prefix_executability"]
    return {name: m.value for name, m in found.metrics.items()}


#: Every scenario whose sample ends without an error (inspect scores those).
SCORED = tuple(name for name in SCENARIOS if name != "crash")


@pytest.fixture(scope="module")
def eval_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run(tmp_path_factory.mktemp("eval"), SCORED, "eval")


@pytest.mark.spec("INSP-SCORER-SAME", "INSP-SCORER-METRICS", "INSP-SCORER-FLOAT")
@pytest.mark.parametrize("log_format", ["eval", "json"])
def test_metrics_in_the_log_equal_prefixexec_score(log_format: str, eval_log: Path, tmp_path: Path) -> None:
    path = eval_log if log_format == "eval" else run(tmp_path, SCORED, "json")
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
    log = read_eval_log(str(eval_log))
    assert log.samples is not None and len(log.samples) == len(SCORED)
    labels = set()
    for sample in log.samples:
        score = sample.scores["prefix_executability"]  # type: ignore[index]  # scored samples
        rollout = rollouts[str(sample.id)]
        o = rollout.outcome
        assert score.value == {"T": o.T, "fed": o.fed, "Y": int(rollout.success)}
        assert score.answer == (None if o.label is None else o.label.value)
        assert score.explanation == o.reason
        labels.add(score.answer)
    # the scenarios reach every inspect label they script: file_not_found (dependency), parsing
    # (schema), unknown (state_consistency), and a sample without one
    assert labels == {None, "dependency", "schema", "state_consistency"}


@pytest.mark.spec("INSP-SCORER-SUCCESS")
def test_without_a_success_scorer_rr_is_undefined(tmp_path: Path) -> None:
    path = run(tmp_path, ("ok", "recovered"), "eval", scorers=[prefix_executability()])
    metrics = log_metrics(path)
    assert metrics["rr_eligible"] == 1  # "recovered" fails at its first call
    assert metrics["rr"] != metrics["rr"]  # NaN: Y unknown
    log = read_eval_log(str(path))
    assert log.samples is not None
    assert all(s.scores["prefix_executability"].value["Y"] is None for s in log.samples)  # type: ignore[index,union-attr]  # dict values


@pytest.mark.spec("INSP-SCORER-EPOCHS")
def test_epochs_pooled_count_each_epoch_as_a_rollout(tmp_path: Path) -> None:
    from inspect_ai import Epochs

    path = run(tmp_path, SCORED, "eval", epochs=Epochs(2, "prefixexec/pool"))
    metrics = log_metrics(path)
    expected = cli_score(path)
    assert expected["N"] == 2 * len(SCORED)  # 10 scenarios x 2 epochs, as the run made them
    assert metrics["ter"] == float(Fraction(expected["exact"]["TER"]))
    assert metrics["auc_pec"] == float(Fraction(expected["exact"]["AUC_PEC"]))
    assert metrics["mean_fed"] == float(Fraction(expected["exact"]["mean_FED"]))
    assert metrics["rr"] == float(Fraction(expected["exact"]["RR"]))
    assert metrics["rr_eligible"] == expected["RR_eligible"]


@pytest.mark.spec("INSP-SCORER-ERRORS")
def test_a_sample_that_errors_is_not_scored_by_inspect(tmp_path: Path) -> None:
    path = run(tmp_path, ("ok", "recovered", "crash"), "eval", fail_on_error=False)
    log = read_eval_log(str(path))
    assert log.samples is not None
    scored = sorted(str(s.id) for s in log.samples if s.scores and "prefix_executability" in s.scores)
    assert scored == ["ok", "recovered"]  # inspect ran no scorer on "crash"
    # prefixexec score counts the errored sample (T=1, FED=2, Y=0); on the scored ones it agrees
    assert cli_score(path)["N"] == 3
    expected = cli_score(path, "--select", "task_id=[or]*")  # "ok" and "recovered"
    assert expected["N"] == 2
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
    rescored = read_eval_log(str(out))
    assert rescored.results is not None
    names = [s.name for s in rescored.results.scores]
    # appended next to the run's own prefix_executability scores, under a fresh name
    (added,) = [n for n in names if n.startswith("prefix_executability") and n != "prefix_executability"]
    again = {k: m.value for s in rescored.results.scores if s.name == added for k, m in s.metrics.items()}
    assert again == log_metrics(eval_log)


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
    assert "pip install 'prefix-executability[inspect]'" in done.stdout


# --- the approver (INSP-APPROVER) ------------------------------------------------------------


@pytest.mark.spec("INSP-APPROVER")
def test_approver_rejects_calls_not_executable_at_the_schema_level(tmp_path: Path) -> None:
    policy = tmp_path / "approval.yaml"
    policy.write_text("approvers:\n  - name: prefixexec/schema_approver\n    tools: '*'\n")
    names = ("ok", "bad_args", "unknown_tool", "parallel")
    path = run(tmp_path, names, "eval", approval=str(policy))
    log = read_eval_log(str(path))
    assert log.samples is not None
    errors: dict[str, list[tuple[str, str | None, str]]] = {}
    for sample in log.samples:
        errors[str(sample.id)] = [
            (
                m.function or "",
                None if m.error is None else m.error.type,
                "" if m.error is None else m.error.message,
            )
            for m in sample.messages
            if m.role == "tool"
        ]
    assert errors["ok"] == [("add", None, "")]
    (bad,) = errors["bad_args"]
    assert bad[:2] == ("add", "approval")
    assert (
        "prefixexec: [schema]" in bad[2]
        and "arguments.x" in bad[2]
        and "'two' is not of type 'integer'" in bad[2]
    )
    # inspect answers a call to a tool it does not have before asking any approver ("parsing")
    assert [e[:2] for e in errors["unknown_tool"]] == [("delete_everything", "parsing")]
    # the approver judges the schema only: read_file's missing file still fails when it runs
    assert [e[:2] for e in errors["parallel"]] == [("add", None), ("read_file", "file_not_found")]


@pytest.mark.spec("INSP-APPROVER")
def test_approver_object_in_a_policy(tmp_path: Path) -> None:
    path = run(tmp_path, ("bad_args",), "eval", approval=[ApprovalPolicy(schema_approver(), "*")])
    log = read_eval_log(str(path))
    assert log.samples is not None
    (message,) = [m for m in log.samples[0].messages if m.role == "tool"]
    assert message.error is not None and message.error.type == "approval"  # type: ignore[union-attr]  # a tool message
