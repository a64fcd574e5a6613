"""``--adapter auto``: format detection over every fixture, stdin, mixtures and hints (spec: DETECT-*)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from prefixexec.adapters.detect import detect, last_part, resolve
from prefixexec.adapters.errors import InputError
from prefixexec.cli import main

from conftest import REAL, REPO

SUMMARY = "result_summary.json"

#: Every input under tests/data (relative to the checkout's parent; tests/data/real: the real
#: runs) and the adapter that reads it (gzip-compressed logs too: INPUT-COMPRESSED); None: not an
#: input (documentation, licences, a table, a server log), refused with one error line. Written
#: by hand from each file's documentation (SOURCE.md / README.md of its folder), not from the
#: detector's output.
EXPECTED: dict[str, str | None] = {
    # agentrx-tau-retail/SOURCE.md: two tau-bench v1 retail result lists; the human labels, the
    # tool structure and the policy are not runs.
    "main/tests/data/real/agentrx-tau-retail/LICENSE.txt": None,
    "main/tests/data/real/agentrx-tau-retail/SOURCE.md": None,
    "main/tests/data/real/agentrx-tau-retail/data/ground_truth/tau_ground_truth.json": None,
    "main/tests/data/real/agentrx-tau-retail/data/policies/retail_policy.txt": None,
    "main/tests/data/real/agentrx-tau-retail/data/tau_retail/tau_dataset_failed.json": "taubench",
    "main/tests/data/real/agentrx-tau-retail/data/tau_retail/tau_dataset_full.json.zst": "taubench",
    "main/tests/data/real/agentrx-tau-retail/data/tool_schemas/tools_structure.json": None,
    # bfcl-v4/SOURCE.md: BFCL result files (by name), BFCL's own score file and leaderboard CSVs.
    "main/tests/data/real/bfcl-v4/LICENSE": None,
    "main/tests/data/real/bfcl-v4/SOURCE.md": None,
    "main/tests/data/real/bfcl-v4/claude-sonnet-4-5-FC/BFCL_v4_multi_turn_base_result.json": "bfcl",
    "main/tests/data/real/bfcl-v4/claude-sonnet-4-5-FC/data_multi_turn.csv": None,
    "main/tests/data/real/bfcl-v4/deepseek-v3.1-terminus-FC/BFCL_v4_multi_turn_base_result.json": "bfcl",
    "main/tests/data/real/bfcl-v4/deepseek-v3.1-terminus-FC/BFCL_v4_multi_turn_base_score.json": None,
    "main/tests/data/real/bfcl-v4/deepseek-v3.1-terminus-FC/data_multi_turn.csv": None,
    # bfcl-glyphh-ada/SOURCE.md: BFCL result files (by name); BFCL's score files are refused.
    "main/tests/data/real/bfcl-glyphh-ada/LICENSE": None,
    "main/tests/data/real/bfcl-glyphh-ada/SOURCE.md": None,
    "main/tests/data/real/bfcl-glyphh-ada/result/glyphh-ada-1.1/multi_turn/"
    "BFCL_v4_multi_turn_base_result.json": "bfcl",
    "main/tests/data/real/bfcl-glyphh-ada/result/glyphh-ada-1.1/multi_turn/"
    "BFCL_v4_multi_turn_miss_param_result.json": "bfcl",
    "main/tests/data/real/bfcl-glyphh-ada/score/glyphh-ada-1.1/multi_turn/"
    "BFCL_v4_multi_turn_base_score.json.zst": None,
    "main/tests/data/real/bfcl-glyphh-ada/score/glyphh-ada-1.1/multi_turn/"
    "BFCL_v4_multi_turn_miss_param_score.json.zst": None,
    # tau2-voice/SOURCE.md: a tau2 directory-format run; its simulation files are refused one by one.
    "main/tests/data/real/tau2-voice/LICENSE": None,
    "main/tests/data/real/tau2-voice/SOURCE.md": None,
    "main/tests/data/real/tau2-voice/experiment/results.json": "taubench",
    "main/tests/data/real/tau2-voice/experiment/simulations/"
    "49b22f0c-4a56-41c5-922f-bc2a56e53a23.json.zst": None,
    "main/tests/data/real/tau2-voice/experiment/simulations/"
    "7c6a3e3e-ac3f-406f-aea9-8cacb0a2e680.json.zst": None,
    "main/tests/data/real/tau2-voice/experiment/simulations/"
    "cd9c5ed2-9751-4c86-8dac-8a895a332e41.json.zst": None,
    # tau2-sft/SOURCE.md: OpenAI fine-tuning lines (messages + tools): chat transcripts.
    "main/tests/data/real/tau2-sft/LICENSE": None,
    "main/tests/data/real/tau2-sft/SOURCE.md": None,
    "main/tests/data/real/tau2-sft/test_sft-v1-small.jsonl.zst": "chat",
    "main/tests/data/real/tau2-leaderboard/"
    "adaptive-agent_airline_claude-opus-4-6_1trial.json.zst": "taubench",
    # tau2-leaderboard/SOURCE.md: tau2 results files; submission.json claims are not inputs.
    "main/tests/data/real/tau2-leaderboard/LICENSE": None,
    "main/tests/data/real/tau2-leaderboard/SOURCE.md": None,
    "main/tests/data/real/tau2-leaderboard/claude-sonnet-4-5_aide-platform.submission.json": None,
    "main/tests/data/real/tau2-leaderboard/"
    "claude-sonnet-4-5_airline_default_gpt4.1_1trials.json.zst": "taubench",
    "main/tests/data/real/tau2-leaderboard/"
    "ft-gpt-4.1-2025-04-14-sierra-tau2-full-sft-BzrYdMNm_retail_default_gpt-4.1_1trials.json.zst": "taubench",
    "main/tests/data/real/tau2-leaderboard/gpt-4.1_retail_defautl_gpt-4.1_1trials.json.zst": "taubench",
    "main/tests/data/real/tau2-leaderboard/gpt-oss-120b_openai.submission.json": None,
    "main/tests/data/real/tau2-leaderboard/langchain_agent_airline_2025-11-26_00-37-06.json.zst": "taubench",
    "main/tests/data/real/tau2-leaderboard/toolorchestra_airline_gpt-5_1trial.json.zst": "taubench",
    "main/tests/data/real/tau2-leaderboard/toolorchestra_nvidia.submission.json": None,
    "main/tests/data/real/tau2-leaderboard/toolorchestra_retail_gpt-5_1trial.json.zst": "taubench",
    # tau2-submissions/SOURCE.md: tau2's own layout; submission.json claims are not inputs; the
    # "medical" file is a tau2 simulation list of a domain tau2 does not have (detected, not read).
    "main/tests/data/real/tau2-submissions/LICENSE": None,
    "main/tests/data/real/tau2-submissions/SOURCE.md": None,
    "main/tests/data/real/tau2-submissions/adaptive-agent_ironshell-ui_2026-03-22/submission.json": None,
    "main/tests/data/real/tau2-submissions/adaptive-agent_ironshell-ui_2026-03-22/trajectories/"
    "adaptive-agent_airline_claude-opus-4-6_1trial.json.zst": "taubench",
    "main/tests/data/real/tau2-submissions/adaptive-agent_ironshell-ui_2026-03-22/trajectories/"
    "adaptive-agent_medical_claude-opus-4-6_1trial.json.zst": "taubench",
    "main/tests/data/real/tau2-submissions/button-claude-opus-4-6_distyl-ai_2026-03-04/submission.json": None,
    "main/tests/data/real/tau2-submissions/button-claude-opus-4-6_distyl-ai_2026-03-04/trajectories/"
    "airline.json.zst": "taubench",
    "main/tests/data/real/tau2-submissions/claude-sonnet-4-5_aide-platform_2025-10-31/submission.json": None,
    "main/tests/data/real/tau2-submissions/claude-sonnet-4-5_aide-platform_2025-10-31/trajectories/"
    "claude-sonnet-4-5_airline_default_gpt4.1_1trials.json.zst": "taubench",
    "main/tests/data/real/tau2-submissions/gpt-oss-120b_openai_2025-11-26/submission.json": None,
    "main/tests/data/real/tau2-submissions/gpt-oss-120b_openai_2025-11-26/trajectories/"
    "langchain_agent_airline_2025-11-26_00-37-06.json.zst": "taubench",
    "main/tests/data/real/tau2-submissions/kimi-k2_moonshot-ai_2025-07-11/submission.json": None,
    "main/tests/data/real/tau2-submissions/toolorchestra_nvidia_2025-12-02/submission.json": None,
    "main/tests/data/real/tau2-submissions/toolorchestra_nvidia_2025-12-02/trajectories/"
    "toolorchestra_airline_gpt-5_1trial.json.zst": "taubench",
    "main/tests/data/real/tau2-submissions/toolorchestra_nvidia_2025-12-02/trajectories/"
    "toolorchestra_retail_gpt-5_1trial.json.zst": "taubench",
    # claude-code/SOURCE.md: a Claude Code session log, a format no adapter reads (DETECT-UNKNOWN).
    "main/tests/data/real/claude-code/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl": None,
    "main/tests/data/real/claude-code/LICENSE": None,
    "main/tests/data/real/claude-code/SOURCE.md": None,
    # tau2-runs/SOURCE.md: tau2 results files (three runs of one system, a telecom run).
    "main/tests/data/real/tau2-runs/LICENSE": None,
    "main/tests/data/real/tau2-runs/SOURCE.md": None,
    "main/tests/data/real/tau2-runs/"
    "2025-08-10T02-44-06.496849_telecom_llm_agent_gpt-4o_user_simulator_gpt-4o.json.zst": "taubench",
    "main/tests/data/real/tau2-runs/"
    "2025-10-13T12-29-03.637000_airline_llm_agent_grok-3_user_simulator_grok-3_task_24.json.zst": "taubench",
    "main/tests/data/real/tau2-runs/"
    "2025-10-13T12-51-16.285465_airline_llm_agent_grok-3_user_simulator_"
    "grok-3_task_24_2.json.zst": "taubench",
    "main/tests/data/real/tau2-runs/"
    "2025-10-13T12-55-31.634034_airline_llm_agent_grok-3_user_simulator_"
    "grok-3_task_24_3.json.zst": "taubench",
    "main/tests/data/real/inspect/"
    "2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval": "inspect",
    "main/tests/data/real/inspect/"
    "2025-09-23T08-09-58-04-00_theory-of-mind_bbB4eRCx2rFJLyPH42Cj9r.eval": "inspect",
    "main/tests/data/real/inspect/LICENSE": None,
    "main/tests/data/real/inspect/SOURCE.md": None,
    "main/tests/data/real/inspect/"
    "inst-logs_2025-04-07T11-00-30-05-00_arithmetic-with-tool_gKECTBvzvzgtPqQCd3cirF.json": "inspect",
    "main/tests/data/real/inspect/log_formats.json": "inspect",
    "main/tests/data/real/inspect/log_tool_call_error.json": "inspect",
    "main/tests/data/real/tau-bench-v1/LICENSE": None,
    "main/tests/data/real/tau-bench-v1/SOURCE.md": None,
    "main/tests/data/real/tau-bench-v1/gpt-4o-airline.json": "taubench",
    "main/tests/data/real/tau-bench-v1-retail/LICENSE": None,
    "main/tests/data/real/tau-bench-v1-retail/SOURCE.md": None,
    "main/tests/data/real/tau-bench-v1-retail/"
    "assertions-agent-none-0.1_range_0-100_6_18_2025.json.zst": "taubench",
    "main/tests/data/real/tau-bench-v1-retail/"
    "tool-calling-with-preconditions-and-python-none-0.1_range_0--1_user-none-llm_062"
    "7144318.json": "taubench",
    "main/tests/data/real/tau2/2025-10-05T07-52-52.930199_telecom_llm_agent_grok-3_user_si"
    "mulator_grok-3.json": "taubench",
    "main/tests/data/real/tau2/"
    "2025-10-05T22-49-27.854079_telecom-workflow_llm_agent_grok-4_user_simulator_grok-4.json": "taubench",
    "main/tests/data/real/tau2/"
    "2025-10-13T11-33-36.494859_airline_llm_agent_grok-3-mini_user_simulator_grok-3-mini.json": "taubench",
    "main/tests/data/real/tau2/LICENSE": None,
    "main/tests/data/real/tau2/SOURCE.md": None,
    "main/tests/data/real/tau2/hotel_calle_full_10_tasks.json": "taubench",
    "main/tests/data/bfcl/README.md": None,
    "main/tests/data/real/README.md": None,
    "main/tests/data/real/bfcl-gpt-oss-20b/LICENSE": None,
    "main/tests/data/real/bfcl-gpt-oss-20b/SOURCE.md": None,
    "main/tests/data/real/bfcl-gpt-oss-20b/"
    "openai_gpt-oss-20b/multi_turn/BFCL_v4_multi_turn_base_result.json": "bfcl",
    "main/tests/data/bfcl/result/demo-model/multi_turn/BFCL_v4_multi_turn_miss_func_result.json": "bfcl",
    "main/tests/data/bfcl/result/demo-model-FC/multi_turn/BFCL_v4_multi_turn_base_result.json": "bfcl",
    "main/tests/data/chat/transcripts.jsonl": "chat",
    # chat-bfcl/SOURCE.md: BFCL's own answers to a real agent's calls, as chat transcripts.
    "main/tests/data/chat-bfcl/SOURCE.md": None,
    "main/tests/data/chat-bfcl/glyphh-base-error-objects.jsonl": "chat",
    "main/tests/data/real/inspect_ai/LICENSE": None,
    "main/tests/data/real/inspect_ai/SOURCE.md": None,
    "main/tests/data/real/inspect_ai/log_message_deduplication.eval": "inspect",
    "main/tests/data/real/inspect_scout/"
    "2025-11-07T10-59-47-05-00_websearch-addition-problem_LqPDntDnkk4h2fSqQ8i6CE.eval": "inspect",
    "main/tests/data/real/inspect_scout/LICENSE": None,
    "main/tests/data/real/inspect_scout/SOURCE.md": None,
    "main/tests/data/inspect/tiny_tools.eval": "inspect",
    "main/tests/data/inspect/tiny_tools.json": "inspect",
    "main/tests/data/real/vitals/"
    "2025-04-29T14-37-34-05-00_An-R-Eval_1da30c33406baede90d819.json.gz": "inspect",
    "main/tests/data/real/vitals/"
    "2025-04-29T14-38-09-05-00_An-R-Eval_db267f5e7251238aac6d76.json.gz": "inspect",
    "main/tests/data/real/vitals/LICENSE.md": None,
    "main/tests/data/real/vitals/SOURCE.md": None,
    "main/tests/data/paper_table2.csv": None,
    "main/tests/data/taubench/README.md": None,
    "main/tests/data/taubench/hotel-es.json": "taubench",
    "main/tests/data/taubench/spanish-rules.toml": None,
    # traces/SOURCE.md: agent traces written by the real SDKs (tests/make_agent_traces.py); the
    # scripted model's log and the version list are not inputs.
    "main/tests/data/traces/SOURCE.md": None,
    "main/tests/data/traces/agents-openinference.jsonl": "openinference",
    "main/tests/data/traces/agents-otel-genai.jsonl": "otel",
    "main/tests/data/traces/agents-sdk.jsonl": "agents",
    "main/tests/data/traces/langgraph-langsmith.jsonl": "langsmith",
    "main/tests/data/traces/langgraph-openinference.jsonl": "openinference",
    "main/tests/data/traces/server.log": None,
    "main/tests/data/traces/versions.txt": None,
    "main/tests/data/traces-atif/SOURCE.md": None,
    "main/tests/data/traces-atif/atif-invented-id.json": "atif",
    "main/tests/data/traces-atif/atif-no-tool.json": "atif",
    "main/tests/data/traces-atif/atif-parallel.json": "atif",
    "main/tests/data/traces-atif/atif-recovered.json": "atif",
    "main/tests/data/traces-atif/atif-schema-error.json": "atif",
    "main/tests/data/traces-atif/atif-unknown-tool.json": "atif",
    "main/tests/data/traces-atif/versions.txt": None,
    "main/tests/data/traces-mlflow/SOURCE.md": None,
    "main/tests/data/traces-mlflow/mlflow-recovered.json": "mlflow",
    "main/tests/data/traces-mlflow/mlflow-traces.jsonl": "mlflow",
    "main/tests/data/traces-mlflow/versions.txt": None,
    "main/tests/data/traces-otlp/SOURCE.md": None,
    "main/tests/data/traces-otlp/genai-compact.json.gz": "otel",
    "main/tests/data/traces-otlp/genai-pretty.json": "otel",
    "main/tests/data/traces-otlp/genai-stream.pb": "otel",
    "main/tests/data/traces-otlp/genai.pb": "otel",
    "main/tests/data/traces-otlp/versions.txt": None,
    "main/tests/data/toolsandbox/agent_gpt-4o-2024-05-13_user_gpt-4o-2024-05-13_12_02"
    "_2026_10_00_00": "toolsandbox",
    "main/tests/data/toolsandbox/agent_gpt-4o-2024-05-13_user_gpt-4o-2024-05-13_12_02_2026_10_00_00/"
    "result_summary.json": "toolsandbox",
    "main/tests/data/toolsandbox/hostile_run": "toolsandbox",
    "main/tests/data/toolsandbox/hostile_run/result_summary.json": "toolsandbox",
    "main/tests/data/toolsandbox-real/SOURCE.md": None,
    "main/tests/data/toolsandbox-real/server.log": None,
    "main/tests/data/toolsandbox-real/agent_NousResearch/"
    "Hermes-2-Pro-Mistral-7B_user_cli_user_12_03_2026_02_02_51": "toolsandbox",
    "main/tests/data/toolsandbox-real/agent_NousResearch/Hermes-2-Pro-Mistral-7B_user_cli_user_12_03_2026_02_02_51/"
    "result_summary.json": "toolsandbox",
    "main/tests/data/toolsandbox-real/agent_Unhelpful_user_cli_user_12_03_2026_02_03_19": "toolsandbox",
    "main/tests/data/toolsandbox-real/agent_Unhelpful_user_cli_user_12_03_2026_02_03_19/"
    "result_summary.json": "toolsandbox",
    "main/tests/data/toolsandbox-real/agent_cli_agent_user_cli_user_12_03_2026_02_03_36": "toolsandbox",
    "main/tests/data/toolsandbox-real/agent_cli_agent_user_cli_user_12_03_2026_02_03_36/"
    "result_summary.json": "toolsandbox",
}

PARENT = REPO.parent
# The keys name the checkout "main/"; a clone in another folder (CI) has another name.
EXPECTED = {
    (f"{REPO.name}/{key.removeprefix('main/')}" if key.startswith("main/") else key): value
    for key, value in EXPECTED.items()
}


def fixture_inputs() -> list[Path]:
    """Every file under tests/data, a ToolSandbox run counted as its directory (and
    its result_summary.json); the files inside a run's trajectories belong to the run."""
    found: list[Path] = []
    for base in (REPO / "tests" / "data",):
        assert base.is_dir(), f"fixture folder missing: {base}"
        for path in sorted(base.rglob("*")):
            inside_run = any((p / SUMMARY).is_file() for p in path.parents)
            if path.is_dir():
                if (path / SUMMARY).is_file():
                    found.append(path)
            elif not inside_run or path.name == SUMMARY:
                found.append(path)
    return found


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.spec("DETECT-MAGIC", "DETECT-NAME", "DETECT-JSON", "DETECT-LINES", "DETECT-UNKNOWN")
def test_the_expected_list_is_every_fixture() -> None:
    assert sorted(str(p.relative_to(PARENT)) for p in fixture_inputs()) == sorted(EXPECTED)


@pytest.mark.slow
@pytest.mark.spec(
    "DETECT-MAGIC", "DETECT-NAME", "DETECT-JSON", "DETECT-LINES", "DETECT-UNKNOWN", "DETECT-ONE"
)
@pytest.mark.parametrize("relative", sorted(EXPECTED))
def test_score_picks_the_right_adapter_for_every_fixture(
    relative: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(PARENT / relative)
    expected = EXPECTED[relative]
    code, out, err = run(["score", "--bootstrap", "0", path], capsys)
    if expected is None:
        assert code == 2 and out == ""
        assert err.count("\n") == 1 and err.startswith(f"prefixexec: error: {path}: "), err
        return
    notice = f"prefixexec: reading {path} as {expected} (detected; --adapter to choose)\n"
    assert err.startswith(notice), err
    # The same run as with the adapter named: same output, same status, same messages.
    chosen = run(["score", "--bootstrap", "0", "--adapter", expected, path], capsys)
    assert (code, out, err[len(notice) :]) == chosen


@pytest.mark.spec("DETECT-NOTICE")
def test_records_are_read_without_a_notice_and_quiet_silences_it(capsys: pytest.CaptureFixture[str]) -> None:
    example = str(REPO / "examples" / "demo.jsonl")
    code, out, err = run(["score", "--bootstrap", "0", example], capsys)
    assert code == 0 and err == ""
    assert (code, out) == run(["score", "--bootstrap", "0", "--adapter", "records", example], capsys)[:2]
    chat = str(REPO / "tests" / "data" / "chat" / "transcripts.jsonl")
    code, _, err = run(["score", "--bootstrap", "0", "--quiet", chat], capsys)
    assert code == 0 and err == ""


@pytest.mark.spec("DETECT-STDIN")
@pytest.mark.parametrize(
    ("source", "adapter", "extra"),
    [
        (REPO / "examples" / "demo.jsonl", "records", []),
        (REPO / "tests" / "data" / "chat" / "transcripts.jsonl", "chat", []),
        # a document over many lines; on stdin there is no file name to take the model from
        (REAL / "tau-bench-v1" / "gpt-4o-airline.json", "taubench", ["--model", "gpt-4o"]),
    ],
)
def test_stdin_is_detected_from_its_first_line_and_read_whole(
    source: Path,
    adapter: str,
    extra: list[str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = source.read_text(encoding="utf-8")
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    code, out, err = run(["score", "--bootstrap", "0", *extra, "-"], capsys)
    assert code == 0, err
    if adapter != "records":
        assert err.startswith(f"prefixexec: reading - as {adapter} (detected; --adapter to choose)\n")
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    assert (code, out) == run(["score", "--bootstrap", "0", *extra, "--adapter", adapter, "-"], capsys)[:2]
    assert out.count("\n") > 3  # a table was printed


@pytest.mark.spec("DETECT-MAGIC")
def test_parquet_is_detected_by_its_magic_whatever_its_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = tmp_path / "runs.data"  # no telling extension: the first bytes decide
    assert (
        main(["convert", str(REPO / "examples" / "demo.jsonl"), "--output", str(tmp_path / "t.parquet")]) == 0
    )
    (tmp_path / "t.parquet").rename(table)
    capsys.readouterr()
    assert detect(str(table)).adapter == "parquet"
    code, out, err = run(["score", "--bootstrap", "0", str(table)], capsys)
    assert code == 0 and err.startswith(f"prefixexec: reading {table} as parquet")
    assert out == run(["score", "--bootstrap", "0", str(REPO / "examples" / "demo.jsonl")], capsys)[
        1
    ].replace("adapter:records", "adapter:parquet")


@pytest.mark.spec("DETECT-ONE")
def test_files_of_different_formats_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    a = str(REPO / "examples" / "demo.jsonl")
    b = str(REPO / "tests" / "data" / "chat" / "transcripts.jsonl")
    code, out, err = run(["score", a, b], capsys)
    assert code == 2 and out == ""
    assert err == (
        f"prefixexec: error: input: the files are of different formats ({a}: records; {b}: chat): "
        "score each format on its own, or choose --adapter\n"
    )


@pytest.mark.spec("DETECT-EMPTY")
def test_empty_files_take_the_format_of_the_others(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    chat = str(REPO / "tests" / "data" / "chat" / "transcripts.jsonl")
    adapter, found = resolve([str(empty), chat])
    assert adapter == "chat" and [p for p, _ in found] == [chat]
    assert resolve([str(empty)])[0] == "records"


@pytest.mark.spec("DETECT-HINT")
def test_a_chosen_adapter_that_cannot_read_a_file_names_the_one_that_can(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = str(REAL / "tau-bench-v1" / "gpt-4o-airline.json")
    code, out, err = run(["score", "--adapter", "records", path], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"prefixexec: error: {path}:")
    assert err.endswith(
        f"; {path} looks like a tau-bench results file, a JSON list of results with 'task_id' "
        "and 'reward' (tau-bench v1): use --adapter taubench\n"
    )


@pytest.mark.spec("DETECT-JSON", "DETECT-LINES", "DETECT-UNKNOWN")
@pytest.mark.parametrize(
    ("text", "adapter"),
    [
        ('{"dataset": "d", "outcome": {"T": 1, "fed": 2}}\n', "records"),
        ('{"task_id": "t", "messages": []}\n', "chat"),
        ('{"id": "multi_turn_base_0", "result": []}\n', "bfcl"),
        (json.dumps({"info": {}, "tasks": [], "simulations": []}, indent=1), "taubench"),
        (json.dumps({"simulations": []}) + "\n", "taubench"),
        (json.dumps([{"task_id": 0, "reward": 1.0, "traj": []}], indent=2), "taubench"),
        (json.dumps({"version": 2, "status": "success", "eval": {}, "samples": []}, indent=2), "inspect"),
        ('{"something": "else"}\n', "records"),  # the records reader then says what is missing
        (json.dumps({"something": "else"}, indent=2), None),  # a document of no known shape
        ("[1, 2, 3]\n", None),
        ("dataset,model\n", None),
    ],
)
def test_text_rules(text: str, adapter: str | None, tmp_path: Path) -> None:
    path = tmp_path / "input.json"
    path.write_text(text, encoding="utf-8")
    if adapter is None:
        with pytest.raises(InputError):
            detect(str(path))
    else:
        assert detect(str(path)).adapter == adapter


@pytest.mark.spec("DETECT-LINES")
def test_a_bad_record_line_gets_the_record_readers_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        '{"dataset": "d", "task_id": "t", "model": "m", "method": "x", "success": true}\n', encoding="utf-8"
    )
    code, out, err = run(["score", str(path)], capsys)
    assert (code, out) == (2, "")
    assert err == f"prefixexec: error: {path}:1: missing field: one of 'actions' or 'outcome' is required\n"


@pytest.mark.spec("DETECT-NAME")
@given(
    st.lists(st.sampled_from(["/", "//", ".", "..", "a", "b c", SUMMARY, f"{SUMMARY}.bak", "./"]), max_size=8)
)
def test_the_last_part_of_a_path_is_what_pathlib_names(pieces: list[str]) -> None:
    # detect() tells a ToolSandbox summary by its name without importing pathlib (start-up):
    # last_part must agree with pathlib on every path, e.g. "x/result_summary.json/." and "x//".
    path = "".join(pieces)
    assert last_part(path) == Path(path).name


@pytest.mark.spec("DETECT-NOT-JSON")
@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("{{{\n", "line 1, column 2"),
        ("[1,\n", "line 2, column 1"),
        ('{"a":\n', "line 2, column 1"),
        ("[}\n", "column 2"),
    ],
)
def test_text_that_only_starts_like_json_is_not_called_json(
    text: str, where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Issue 30: `echo "{{{" | prefixexec score -` said "is JSON, but of no format an adapter reads".
    path = tmp_path / "x.json"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    for source in ("-", str(path)):
        assert main(["score", source]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "is not valid JSON (" in err and where in err, err
        assert "is JSON" not in err and "is a JSON list" not in err
    # The head of a long document that is cut off at HEAD_BYTES is not a syntax error.
    from prefixexec.adapters.detect import HEAD_BYTES, detect_text

    long = '{"simulations": [' + "1, " * HEAD_BYTES
    assert detect_text("f", long[:HEAD_BYTES]).adapter == "taubench"
