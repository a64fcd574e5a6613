"""`prefixexec demo`: BFCL multi-turn gold and simulated agents, end to end.

The end-to-end tests need the benchmark package (``pip install --no-deps bfcl-eval==2026.3.23
mpmath``, as the README's set-up does); without it they fail, they are not skipped. The
perturbation rules themselves are tested on hand-made tasks first.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from prefixexec import demo
from prefixexec.cli import main
from prefixexec.demo import (
    AGENTS,
    GOLD,
    NOTE,
    TaskInfo,
    calls_before_offered,
    invents_id,
    retries_after_error,
    selected,
    skips_precondition,
)

GOLD_TURNS = (
    ("ls()", "cd(folder='document')", "mkdir(dir_name='temp')"),
    ("send_message(receiver_id='USR002', message='hi')", "get_ticket(ticket_id=7)"),
    (),
    ("mv(source='a.txt', destination='temp')",),
)


def task(missed: dict[str, int] | None = None, gold: tuple[tuple[str, ...], ...] = GOLD_TURNS) -> TaskInfo:
    return TaskInfo("multi_turn_base_0", gold, missed or {})


# ------------------------------------------------------------------------ the rules, by hand


@pytest.mark.spec("REP-DEMO")
def test_skips_precondition_drops_the_first_setup_call() -> None:
    got = skips_precondition(task())
    assert got == (("ls()", "mkdir(dir_name='temp')"), *GOLD_TURNS[1:])
    assert skips_precondition(task(gold=(("ls()",), ("mean(numbers=[1, 2])",)))) is None


@pytest.mark.spec("REP-DEMO")
def test_invents_id_replaces_the_first_id_argument() -> None:
    got = invents_id(task())
    assert got is not None
    assert got[1] == ("send_message(receiver_id='ID-404-INVENTED', message='hi')", "get_ticket(ticket_id=7)")
    ints = invents_id(task(gold=(("get_ticket(ticket_id=7)",),)))
    assert ints == (("get_ticket(ticket_id=404404)",),)
    assert invents_id(task(gold=(("ls()",),))) is None


@pytest.mark.spec("REP-DEMO")
def test_calls_before_offered_moves_a_held_out_call_one_turn_early() -> None:
    gold = (("ls()",), ("cd(folder='x')",), ("tail(file_name='f.txt')", "wc(file_name='f.txt')"))
    got = calls_before_offered(task({"tail": 2}, gold))
    assert got == (("ls()",), ("cd(folder='x')", "tail(file_name='f.txt')"), ("wc(file_name='f.txt')",))
    assert calls_before_offered(task({}, gold)) is None


@pytest.mark.spec("REP-DEMO")
def test_retries_after_error_inserts_a_misspelt_call_before_the_middle_call() -> None:
    got = retries_after_error(task())
    # 6 calls; the middle one (index 6 // 2 = 3, counting from 0) is the send_message call: a
    # copy with its first keyword misspelt ('receiver_i') comes first, then the correct call.
    assert got is not None
    assert got[1] == (
        "send_message(receiver_i='USR002', message='hi')",
        "send_message(receiver_id='USR002', message='hi')",
        "get_ticket(ticket_id=7)",
    )
    # A middle call without keyword arguments is passed over for the next one that has them.
    later = retries_after_error(task(gold=(("ls()", "pwd()", "ls()", "cd(folder='x')"),)))
    assert later == (("ls()", "pwd()", "ls()", "cd(folde='x')", "cd(folder='x')"),)
    assert [t for i, t in enumerate(got) if i != 1] == [t for i, t in enumerate(GOLD_TURNS) if i != 1]


@pytest.mark.spec("REP-DEMO")
def test_selection_is_deterministic_and_about_half() -> None:
    ids = [f"multi_turn_base_{i}" for i in range(200)]
    for agent in AGENTS:
        chosen = [selected(agent, t) for t in ids]
        assert chosen == [selected(agent, t) for t in ids]
        assert 70 <= sum(chosen) <= 130
    assert all(a.method.endswith(" (simulated)") for a in AGENTS) and GOLD == "gold"


# ------------------------------------------------------------------------ end to end (bfcl-eval)


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, float]:
    out = tmp_path_factory.mktemp("demo") / "report"
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "prefixexec", "demo", "--out", str(out), "--quiet"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    elapsed = time.monotonic() - start
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stderr == ""
    return out, done.stdout, elapsed


@pytest.mark.spec("REP-DEMO-RUN")
def test_demo_prints_the_table_and_the_page_within_a_minute(demo_run: tuple[Path, str, float]) -> None:
    out, stdout, elapsed = demo_run
    assert elapsed < 60, f"the demo took {elapsed:.1f} s"
    assert stdout.startswith((out / "table.md").read_text(encoding="utf-8"))
    assert stdout.rstrip().endswith(f"open {out / 'report.html'}")
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted([*demo_files(), "agents.md", "records.jsonl"])


def demo_files() -> list[str]:
    from prefixexec.report import FILES

    return list(FILES)


def records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "records.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.mark.spec("REP-DEMO")
def test_demo_is_labelled_simulated_everywhere(demo_run: tuple[Path, str, float]) -> None:
    out, _, _ = demo_run
    for name in ("table.md", "checkpoints.md", "labels.md", "decomposition.md", "report.html", "agents.md"):
        text = (out / name).read_text(encoding="utf-8")
        assert NOTE.replace("'", "&#x27;") in text or NOTE in text, name
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["note"] == NOTE
    methods = {c["method"] for c in summary["conditions"]}
    assert methods == {GOLD, *(a.method for a in AGENTS)}
    assert {c["model"] for c in summary["conditions"]} == {"simulated-agents"}
    assert "SIMULATED" in (out / "table.tex").read_text(encoding="utf-8")
    for r in records(out):
        assert r["meta"]["simulated"] == (r["method"] != GOLD)


@pytest.mark.spec("REP-DEMO")
def test_demo_sample_and_perturbations(demo_run: tuple[Path, str, float]) -> None:
    out, _, _ = demo_run
    recs = records(out)
    gold = {r["task_id"]: r for r in recs if r["method"] == GOLD}
    assert len(gold) == 200
    categories = {"base", "miss_func", "miss_param", "long_context"}
    for category in categories:
        ids = sorted(int(t.rsplit("_", 1)[1]) for t in gold if t.startswith(f"multi_turn_{category}_"))
        assert ids == list(range(0, 200, 4))
    rules = {a.method: a for a in AGENTS}
    for r in recs:
        if r["method"] == GOLD:
            continue
        agent = rules[r["method"]]
        g = gold[r["task_id"]]
        if not r["meta"]["perturbed"]:
            assert r["meta"]["calls"] == g["meta"]["calls"]  # unperturbed: the gold calls
            assert r["outcome"] == g["outcome"] and r["success"] == g["success"]
            continue
        assert selected(agent, r["task_id"]) and r["meta"]["calls"] != g["meta"]["calls"]
        if agent.rule == "retries-after-error":
            # The misspelt copy is rejected (schema) and the retry restores the gold state: the
            # rollout fails at the inserted call and ends as the gold one does (a recovery).
            position = first_difference(r["meta"]["calls"], g["meta"]["calls"])
            assert r["outcome"]["fed"] == position + 1 and r["outcome"]["label"] == "schema"
            assert r["success"] == g["success"]
        if agent.rule == "skips-precondition":
            assert r["outcome"]["T"] == g["outcome"]["T"] - 1


def first_difference(calls: list[list[str]], gold: list[list[str]]) -> int:
    flat, flat_gold = [c for t in calls for c in t], [c for t in gold for c in t]
    return next(i for i, (a, b) in enumerate(zip(flat, flat_gold, strict=False)) if a != b)


@pytest.mark.spec("REP-DEMO-RUN", "REP-SUMMARY")
def test_rollouts_file_reproduces_the_numbers(
    demo_run: tuple[Path, str, float], capsys: pytest.CaptureFixture[str]
) -> None:
    out, _, _ = demo_run
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert main(["score", "--json", str(out / "records.jsonl")]) == 0
    scored = json.loads(capsys.readouterr().out)
    for mine, theirs in zip(summary["conditions"], scored["conditions"], strict=True):
        assert {k: mine[k] for k in theirs} == theirs
    import importlib.metadata

    version = importlib.metadata.version("bfcl-eval")
    assert summary["signature"] == scored["signature"].replace(
        "adapter:records", f"adapter:bfcl-demo[bfcl-eval={version}]"
    )


@pytest.mark.spec("REP-DEMO")
def test_demo_without_bfcl_eval_is_an_input_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    from prefixexec.adapters import InputError

    def missing() -> None:
        raise InputError("bfcl-eval", "the BFCL adapter needs the benchmark package: pip install ...")

    monkeypatch.setattr(demo, "sample_tasks", missing)
    assert main(["demo", "--out", str(tmp_path / "d"), "--quiet"]) == 2
    assert "prefixexec: error: bfcl-eval:" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()


@pytest.mark.spec("REP-DEMO-RUN")
def test_the_demo_table_in_the_docs_is_the_one_the_demo_prints(demo_run: tuple[Path, str, float]) -> None:
    # docs/demo.md's block is written by tests/doc_blocks.py from a demo run (issue 30: the README's
    # table had drifted to 6.62 and 0.74 where the demo prints 6.63 and 0.75).
    import doc_blocks

    out, _, _ = demo_run
    want = doc_blocks.demo_table((out / "table.md").read_text(encoding="utf-8"))
    pages = doc_blocks.used()["demo-table"]
    assert pages
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for name, start, end in doc_blocks.blocks(text):
            if name == "demo-table":
                assert doc_blocks.block_text(text, start, end) == want, (
                    f"{page.name}: the demo table is out of date; run python tests/doc_blocks.py demo-table"
                )
