"""``prefixexec sample``: the paper's stratified task sampler (spec: SAMPLE-*)."""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from prefixexec import api
from prefixexec.cli import main
from prefixexec.sampling import order_key, sample

from conftest import REAL, REPO

TOOLSANDBOX = REPO / "tests" / "data" / "toolsandbox-real"
RUNS = sorted(str(p.parent) for p in TOOLSANDBOX.rglob("result_summary.json"))
TAU = REAL / "tau-bench-v1" / "gpt-4o-airline.json"

task_ids = st.text(alphabet="abcdefgh0123456789_", min_size=1, max_size=6)
single = st.dictionaries(task_ids, st.sampled_from(["A", "B", "C", "D"]), min_size=1, max_size=40)
multi = st.dictionaries(
    task_ids,
    st.frozensets(st.sampled_from(["A", "B", "C", "D", "E"]), min_size=1, max_size=3),
    min_size=1,
    max_size=40,
)


def hash_order(seed: int, tasks: list[str]) -> list[str]:
    """SAMPLE-ORDER written out independently: sha256 of "<seed>:<task>" in hex, then the id."""
    return sorted(tasks, key=lambda t: (hashlib.sha256(f"{seed}:{t}".encode()).hexdigest(), t))


@pytest.mark.spec("SAMPLE-ORDER")
@given(multi, st.integers(0, 2**32), st.integers(1, 5), st.randoms(use_true_random=False))
def test_deterministic_and_independent_of_input_order(
    labels: dict[str, frozenset[str]], seed: int, n: int, rnd: random.Random
) -> None:
    shuffled = list(labels.items())
    rnd.shuffle(shuffled)
    for how in ({"per_category": n}, {"size": n}):
        a = sample(labels, seed=seed, **how)
        b = sample(dict(shuffled), seed=seed, **how)
        assert a == b == sample(labels, seed=seed, **how)
        assert list(a.tasks) == sorted(a.tasks) and len(set(a.tasks)) == len(a.tasks)


@pytest.mark.spec("SAMPLE-ORDER")
def test_order_key_is_sha256_of_seed_and_id() -> None:
    # The digest of b"7:multi_turn_base_3", as `printf 7:multi_turn_base_3 | sha256sum` prints it.
    assert order_key(7, "multi_turn_base_3") == hashlib.sha256(b"7:multi_turn_base_3").hexdigest()
    assert order_key(0, "t") != order_key(1, "t")


@pytest.mark.spec("SAMPLE-PER-CATEGORY")
@given(single, st.integers(0, 1000), st.integers(1, 6))
def test_per_category_with_one_label_is_the_first_n_of_each_stratum(
    labels: dict[str, str], seed: int, n: int
) -> None:
    drawn = sample({t: {c} for t, c in labels.items()}, seed=seed, per_category=n)
    expected: list[str] = []
    for stratum in sorted(set(labels.values())):
        members = [t for t, c in labels.items() if c == stratum]
        expected += hash_order(seed, members)[:n]
        assert (
            drawn.picked[stratum]
            == min(n, len(members))
            == sum(1 for t in drawn.tasks if labels[t] == stratum)
        )
    assert list(drawn.tasks) == sorted(expected)


@pytest.mark.spec("SAMPLE-PER-CATEGORY")
@given(multi, st.integers(0, 1000), st.integers(1, 6))
def test_per_category_with_many_labels_covers_every_quota(
    labels: dict[str, frozenset[str]], seed: int, n: int
) -> None:
    drawn = sample(labels, seed=seed, per_category=n)
    have = Counter(c for ls in labels.values() for c in ls)
    got = Counter(c for t in drawn.tasks for c in labels[t])
    for c, k in have.items():
        assert got[c] >= min(n, k)
        assert drawn.available[c] == k and drawn.picked[c] == got[c]
    # Greedy: every picked task helped a label that was still short when it was picked, so
    # no more tasks are picked than the quotas sum to.
    assert len(drawn.tasks) <= sum(min(n, k) for k in have.values())


@pytest.mark.spec("SAMPLE-SIZE")
@given(single, st.integers(0, 1000), st.integers(1, 50))
def test_size_with_one_label_gives_each_stratum_its_share_rounded(
    labels: dict[str, str], seed: int, size: int
) -> None:
    drawn = sample({t: {c} for t, c in labels.items()}, seed=seed, size=size)
    m = len(labels)
    assert len(drawn.tasks) == min(size, m)
    for stratum, k in Counter(labels.values()).items():
        target = Fraction(min(size, m) * k, m) if size <= m else Fraction(k)
        assert math.floor(target) <= drawn.picked[stratum] <= math.ceil(target)


@pytest.mark.spec("SAMPLE-SIZE")
@given(multi, st.integers(0, 1000), st.integers(1, 50))
def test_size_with_many_labels_draws_size_tasks(
    labels: dict[str, frozenset[str]], seed: int, size: int
) -> None:
    drawn = sample(labels, seed=seed, size=size)
    assert len(drawn.tasks) == min(size, len(labels)) and set(drawn.tasks) <= set(labels)


@pytest.mark.spec("SAMPLE-STRATA", "SAMPLE-PER-CATEGORY")
def test_toolsandbox_is_stratified_by_scenario_categories(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sample", "--per-category", "1", "--seed", "4", *RUNS]) == 0
    out, err = capsys.readouterr()
    rollouts = api.read("toolsandbox", RUNS)
    categories: dict[str, set[str]] = {}
    for r in rollouts:
        cats = r.meta["categories"]
        assert isinstance(cats, list)
        categories.setdefault(r.task_id, set()).update(cats)
    picked = out.split()
    for c in {c for cs in categories.values() for c in cs}:  # every category is covered
        assert any(c in categories[t] for t in picked), c
    # the summary, then the reader's held notices (HOSTILE-NOTICE: the 3 ToolSandbox aborts)
    summary = f"prefixexec: sampled {len(picked)} of {len(categories)} tasks of "
    assert [line for line in err.splitlines() if line.startswith(summary) and " (seed 4): " in line], err


@pytest.mark.spec("SAMPLE-STRATA", "SAMPLE-PER-CATEGORY")
def test_a_sample_file_selects_the_same_tasks_for_score(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = tmp_path / "ids.txt"
    assert (
        main(["sample", "--per-category", "7", "--seed", "11", "--output", str(ids), "--quiet", str(TAU)])
        == 0
    )
    out, err = capsys.readouterr()
    assert out == "" and err == ""
    picked = ids.read_text(encoding="utf-8").split()
    # tau-bench v1 airline: one domain, 50 tasks (jq 'map(.task_id) | unique | length' on the file)
    assert len(picked) == 7 and picked == sorted(
        hash_order(11, sorted({r.task_id for r in api.read("auto", TAU)}))[:7]
    )
    assert main(["score", "--json", "--bootstrap", "0", "--select", f"task_id=@{ids}", str(TAU)]) == 0
    document = json.loads(capsys.readouterr().out)
    # 4 trials of each task (the file's 200 rollouts are 50 tasks x 4 trials)
    assert [c["N"] for c in document["conditions"]] == [28]


@pytest.mark.spec("SAMPLE-STRATA")
def test_a_task_id_in_two_datasets_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.jsonl"
    rows = [
        {
            "dataset": d,
            "task_id": "t1",
            "model": "m",
            "method": "x",
            "success": True,
            "outcome": {"T": 1, "fed": 2},
        }
        for d in ("a", "b")
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert main(["sample", "--size", "1", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert "task id 't1' is in datasets 'a' and 'b'" in err and err.startswith("prefixexec: error: ")


# ------------------------------------------------------------------------ benchmarks' own task lists


def bfcl_data() -> Path:
    """The installed bfcl-eval's data folder (the README's set-up installs it; no skip without it)."""
    import bfcl_eval

    return Path(bfcl_eval.__file__).parent / "data"


def bfcl_ids(category: str) -> list[str]:
    """Task ids of one installed BFCL data file, read here with json, independently of the sampler."""
    lines = (bfcl_data() / f"BFCL_v4_{category}.json").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["id"] for line in lines if line.strip()]


CATEGORIES = ("multi_turn_base", "multi_turn_long_context", "multi_turn_miss_func", "multi_turn_miss_param")


@pytest.mark.spec("SAMPLE-TASKLIST-BFCL", "SAMPLE-FORMAT", "SAMPLE-PER-CATEGORY")
def test_bfcl_sample_from_the_installed_benchmark_is_its_run_ids_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = tmp_path / "test_case_ids_to_generate.json"
    assert main(["sample", "--benchmark", "bfcl", "--per-category", "50", "--output", str(ids)]) == 0
    out, err = capsys.readouterr()
    written = json.loads(ids.read_text(encoding="utf-8"))
    # BFCL's own id file: category -> ids (bfcl_eval.utils.load_test_entries_from_id_file reads it).
    assert sorted(written) == list(CATEGORIES)
    for category in CATEGORIES:
        every = bfcl_ids(category)
        assert len(every) == 200  # 200 tasks a category in bfcl-eval 2026.3.23 (wc -l of each file)
        assert written[category] == sorted(hash_order(0, every)[:50], key=lambda t: int(t.rsplit("_", 1)[1]))
    import importlib.metadata

    assert out == ""
    assert f"of bfcl-eval {importlib.metadata.version('bfcl-eval')} (BFCL_v4: " in err  # its version
    assert "bfcl generate --model MODEL --run-ids" in err
    # What BFCL's loader (bfcl_eval/utils.py, load_test_entries_from_id_file; it imports filelock,
    # which its --no-deps install lacks) does with the file: for each category key, the entries of
    # that category's data file whose id is listed. Every listed id must be one of them.
    for category, listed in written.items():
        assert set(listed) <= set(bfcl_ids(category)) and len(set(listed)) == len(listed) == 50


@pytest.mark.spec("SAMPLE-TASKLIST-BFCL", "OUT-SELECT")
def test_the_bfcl_id_file_selects_the_same_tasks_of_the_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Results of every installed BFCL task (records with an outcome, one trial each, made here):
    # sampled from results or from the benchmark's task list, the same seed gives the same ids,
    # and --select task_id=@FILE reads the BFCL id file.
    records = tmp_path / "runs.jsonl"
    rows = [
        {"dataset": f"bfcl-multi-turn/{c}", "model": "m", "method": "x", "task_id": t, "success": True,
         "outcome": {"T": 2, "fed": 3}}
        for c in CATEGORIES for t in bfcl_ids(c)
    ]  # fmt: skip
    records.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    ids, lines = tmp_path / "ids.json", tmp_path / "ids.txt"
    args = ["--per-category", "50", "--seed", "9", "--quiet"]
    assert main(["sample", "--benchmark", "bfcl", *args, "--output", str(ids)]) == 0
    assert main(["sample", str(records), *args, "--output", str(lines)]) == 0
    from_list = sorted(t for v in json.loads(ids.read_text(encoding="utf-8")).values() for t in v)
    assert from_list == lines.read_text(encoding="utf-8").split()
    capsys.readouterr()
    assert main(["score", "--json", "--bootstrap", "0", "--select", f"task_id=@{ids}", str(records)]) == 0
    assert [c["N"] for c in json.loads(capsys.readouterr().out)["conditions"]] == [50, 50, 50, 50]


@pytest.mark.spec("SAMPLE-TASKLIST-BFCL")
def test_bfcl_data_files_by_name_are_task_lists(capsys: pytest.CaptureFixture[str]) -> None:
    # Issue 30: bfcl-eval's own task file was refused ("missing field 'result' ... records").
    base = bfcl_data() / "BFCL_v4_multi_turn_base.json"
    assert main(["sample", str(base), "--size", "5", "--format", "lines"]) == 0
    out, err = capsys.readouterr()
    assert out.split() == sorted(hash_order(0, bfcl_ids("multi_turn_base"))[:5])
    assert "of BFCL data files (BFCL_v4)" in err


def tau2_tasks_file(tmp_path: Path, split: dict[str, list[str]] | None = None) -> Path:
    """A tau2 domain folder holding the tasks of a real tau2 run (the results file's own "tasks",
    which is the domain's tasks.json content)."""
    run = (
        REAL
        / "tau2"
        / "2025-10-13T11-33-36.494859_airline_llm_agent_grok-3-mini_user_simulator_grok-3-mini.json"
    )
    folder = tmp_path / "domains" / "airline"
    folder.mkdir(parents=True)
    tasks = json.loads(run.read_text(encoding="utf-8"))["tasks"]
    (folder / "tasks.json").write_text(json.dumps(tasks), encoding="utf-8")
    if split is not None:
        (folder / "split_tasks.json").write_text(json.dumps(split), encoding="utf-8")
    return folder / "tasks.json"


@pytest.mark.spec("SAMPLE-TASKLIST-TAU2")
def test_tau2_tasks_json_and_its_split(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tau2_tasks_file(tmp_path, {"base": ["8", "11", "24"], "test": ["32"]})
    assert main(["sample", str(path), "--size", "2", "--seed", "3"]) == 0
    out, err = capsys.readouterr()
    # The run's tasks are 8, 11, 24, 32 (jq '.tasks[].id'); split base leaves 8, 11, 24.
    assert out.split() == sorted(hash_order(3, ["8", "11", "24"])[:2])
    assert "tau-bench/airline 2/3" in err and ", split base)" in err
    assert "tau2 run --domain airline --task-ids $(cat FILE)" in err
    assert main(["sample", str(path), "--per-category", "5", "--split", "test"]) == 0
    assert capsys.readouterr().out.split() == ["32"]
    assert main(["sample", str(path), "--per-category", "5", "--split", "dev"]) == 2
    assert "has no split 'dev' (splits: base, test)" in capsys.readouterr().err


def v1_module(tmp_path: Path) -> Path:
    """A tau-bench v1 task module written from the real run's own tasks (info.task of its first
    trial of each task), in v1's form: ``TASKS = [Task(...), ...]`` with ``Action(...)`` calls."""
    rollouts = json.loads(TAU.read_text(encoding="utf-8"))
    tasks = {r["task_id"]: r["info"]["task"] for r in rollouts}
    lines = ["from tau_bench.types import Action, Task", "", "TASKS = ["]
    for task_id in sorted(tasks):
        t = tasks[task_id]
        actions = ", ".join(f"Action(name={a['name']!r}, kwargs={a['kwargs']!r})" for a in t["actions"])
        lines.append(f"    Task(annotator='0', user_id={t['user_id']!r}, instruction={t['instruction']!r}, "
                     f"actions=[{actions}], outputs={t['outputs']!r}),")  # fmt: skip
    lines.append("]")
    folder = tmp_path / "envs" / "airline"
    folder.mkdir(parents=True)
    (folder / "tasks_test.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder / "tasks_test.py"


@pytest.mark.spec("SAMPLE-TASKLIST-TAUBENCH")
def test_tau_bench_v1_task_modules_are_parsed_not_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = v1_module(tmp_path)
    assert main(["sample", str(module), "--per-category", "7", "--seed", "11"]) == 0
    out, err = capsys.readouterr()
    # The ids are list indices 0..49 (the run's 50 airline tasks), as run.py --task-ids takes them;
    # they are the task_id values of the run's results, so the sample selects from them too.
    assert out.split() == sorted(hash_order(11, [str(i) for i in range(50)])[:7])
    assert "python run.py --env airline --task-split test --task-ids $(cat FILE)" in err
    ids = tmp_path / "ids.txt"
    ids.write_text(out, encoding="utf-8")
    assert main(["score", "--json", "--bootstrap", "0", "--select", f"task_id=@{ids}", str(TAU)]) == 0
    assert [c["N"] for c in json.loads(capsys.readouterr().out)["conditions"]] == [28]  # 7 tasks x 4 trials
    # Never imported: a module that would raise when run is still only parsed.
    boom = tmp_path / "envs" / "retail" / "tasks_dev.py"
    boom.parent.mkdir(parents=True)
    boom.write_text(
        "raise SystemExit('ran')\nTASKS = [Task(user_id='u'), {'user_id': 'v'}]\n", encoding="utf-8"
    )
    assert main(["sample", str(boom), "--size", "1", "--quiet"]) == 0
    assert capsys.readouterr().out.split() == [hash_order(0, ["0", "1"])[0]]
    boom.write_text("x = 1\n", encoding="utf-8")
    assert main(["sample", str(boom), "--size", "1"]) == 2
    assert "one top-level list of Task(...) calls or dicts (found 0)" in capsys.readouterr().err


@pytest.mark.spec("SAMPLE-TASKLIST-TOOLSANDBOX", "SAMPLE-STRATA")
def test_toolsandbox_summaries_and_plain_lists(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    summaries = [str(Path(run) / "result_summary.json") for run in RUNS]
    assert main(["sample", *summaries, "--per-category", "1", "--seed", "4"]) == 0
    from_summaries, err = capsys.readouterr()
    assert "tool_sandbox --scenarios $(cat FILE)" in err
    assert main(["sample", "--per-category", "1", "--seed", "4", "--quiet", *RUNS]) == 0
    assert capsys.readouterr().out == from_summaries  # the same strata as the run folders give
    listed = tmp_path / "scenarios.tsv"
    names = {}
    for path in summaries:
        for row in json.loads(Path(path).read_text(encoding="utf-8"))["per_scenario_results"]:
            names[row["name"]] = row["categories"]
    listed.write_text("".join(f"{n}\t" + "\t".join(c) + "\n" for n, c in names.items()), encoding="utf-8")
    assert main(["sample", "--tasks", str(listed), "--per-category", "1", "--seed", "4", "--quiet"]) == 0
    assert capsys.readouterr().out == from_summaries
    assert main(["sample", "--tasks", str(listed), str(TAU), "--size", "1"]) == 2
    assert "give only one of FILE, --tasks" in capsys.readouterr().err


@pytest.mark.spec("SAMPLE-JSON")
def test_sample_json_names_the_source_and_strata(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sample", "--benchmark", "bfcl", "--size", "8", "--seed", "2", "--json", "--quiet"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["seed"] == 2 and doc["format"] == "bfcl" and len(doc["tasks"]) == 8 and doc["available"] == 800
    assert doc["source"].startswith("bfcl-eval ")
    assert {k: v["available"] for k, v in doc["strata"].items()} == {
        f"bfcl-multi-turn/{c}": 200 for c in CATEGORIES
    }
    assert sum(v["picked"] for v in doc["strata"].values()) == 8  # one label a task: 2 of each category
    assert "--run-ids" in doc["runner"]


@pytest.mark.spec("SAMPLE-TASKLIST-BFCL")
def test_task_lists_refuse_result_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sample", "--benchmark", "bfcl", "--size", "1", "--model", "m"]) == 2
    assert "--model: applies to result files, not to a benchmark's task list" in capsys.readouterr().err
    assert main(["sample", "--size", "1"]) == 2
    assert "give one of FILE..., --benchmark or --tasks" in capsys.readouterr().err
