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

from conftest import REPO, SHARED

TOOLSANDBOX = REPO / "tests" / "data" / "toolsandbox-real"
RUNS = sorted(str(p.parent) for p in TOOLSANDBOX.rglob("result_summary.json"))
TAU = SHARED / "fixtures" / "tau-bench-v1" / "gpt-4o-airline.json"

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
    summary = f"prefixexec: sampled {len(picked)} of {len(categories)} tasks (seed 4): "
    assert [line for line in err.splitlines() if line.startswith(summary)], err


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
