"""The Python API: score, metrics, bootstrap, read (spec: API-SCORE, API-SOURCES, API-TABLES,
API-ARRAYS, API-METRICS, API-BOOTSTRAP, API-READ)."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pytest
import scipy.stats
from hypothesis import given
from hypothesis import strategies as st

import prefixexec
import prefixexec.kernel as kernel
from prefixexec.adapters.errors import InputError
from prefixexec.cli import main

from conftest import REAL, REPO

DEMO = REPO / "examples" / "demo.jsonl"
TAU = REAL / "tau-bench-v1" / "gpt-4o-airline.json"
CHAT = REPO / "tests" / "data" / "chat" / "transcripts.jsonl"


def cli_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["score", "--json", *args]) == 0
    return capsys.readouterr().out


@pytest.mark.spec("API-SCORE")
@pytest.mark.parametrize(
    ("source", "cli", "kwargs"),
    [
        (DEMO, [], {}),
        (TAU, [], {}),
        (
            CHAT,
            ["--bootstrap", "300", "--seed", "7", "--level", "0.9"],
            {"bootstrap": 300, "seed": 7, "level": 0.9},
        ),
        (TAU, ["--adapter", "taubench", "--method", "m"], {"adapter": "taubench", "method": "m"}),
        (DEMO, ["--select", "method=react", "--bootstrap", "0"], {"select": "method=react", "bootstrap": 0}),
    ],
)
def test_to_json_is_byte_identical_to_the_command_line(
    source: Path, cli: list[str], kwargs: dict[str, object], capsys: pytest.CaptureFixture[str]
) -> None:
    scores = prefixexec.score(source, **kwargs)  # type: ignore[arg-type]  # test parameters
    capsys.readouterr()
    assert scores.to_json() == cli_json([*cli, str(source)], capsys)
    assert scores.signature == json.loads(scores.to_json())["signature"]


@pytest.mark.spec("API-SCORE")
def test_conditions_are_exact_and_carry_their_intervals(capsys: pytest.CaptureFixture[str]) -> None:
    scores = prefixexec.score([DEMO], bootstrap=500)
    document = json.loads(cli_json(["--bootstrap", "500", str(DEMO)], capsys))
    assert len(scores.conditions) == len(document["conditions"]) == 2
    for c, d in zip(scores.conditions, document["conditions"], strict=True):
        assert (c.dataset, c.model, c.method, c.N) == (d["dataset"], d["model"], d["method"], d["N"])
        assert isinstance(c.TER, Fraction) and str(c.TER) == d["exact"]["TER"]
        assert [str(p) for p in c.PEC] == d["exact"]["PEC"]
        assert c.ci["TER"] is not None and [c.ci["TER"].low, c.ci["TER"].high] == d["ci"]["TER"]
        assert (
            c.ci["RR_wilson"] is not None
            and [c.ci["RR_wilson"].low, c.ci["RR_wilson"].high] == d["ci"]["RR_wilson"]
        )
        assert [None if i is None else [i.low, i.high] for i in c.PEC_ci] == d["ci"]["PEC"]
    # The rollouts it was computed from: hand count of examples/demo.jsonl, 8 lines, 8 rollouts.
    assert len(scores.rollouts) == 8


@pytest.mark.spec("API-SOURCES")
def test_record_dicts_and_data_frames_score_as_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = cli_json(["--bootstrap", "200", str(DEMO)], capsys)
    records = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert prefixexec.score(records, bootstrap=200).to_json() == expected
    table = tmp_path / "demo.parquet"
    assert main(["convert", str(DEMO), "--output", str(table)]) == 0
    frame = pd.read_parquet(table)
    assert prefixexec.score(frame, bootstrap=200).to_json() == expected
    assert prefixexec.score(pl.read_parquet(table), bootstrap=200).to_json() == expected


@pytest.mark.spec("API-SOURCES")
def test_a_bad_record_names_its_position() -> None:
    records = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines() if line.strip()]
    del records[2]["success"]
    with pytest.raises(InputError, match=r"^<records>:3: "):
        prefixexec.score(records)
    with pytest.raises(TypeError):
        prefixexec.score(records, adapter="chat")


@pytest.mark.spec("API-TABLES")
def test_tables_hold_the_condition_values(capsys: pytest.CaptureFixture[str]) -> None:
    scores = prefixexec.score(TAU, bootstrap=300)
    frame = scores.to_pandas()
    (c,) = scores.conditions
    assert list(frame["method"]) == [c.method]
    assert frame["TER"].iloc[0] == float(c.TER) and frame["TER_exact"].iloc[0] == str(c.TER)
    assert c.ci["RR_wilson"] is not None and frame["RR_low"].iloc[0] == c.ci["RR_wilson"].low
    curve = scores.to_polars("pec")
    assert curve.height == len(c.PEC) and curve["k"].to_list() == list(range(1, len(c.PEC) + 1))
    assert curve["PEC"].to_list() == [float(p) for p in c.PEC]
    assert curve["n_k"].to_list() == list(c.n_k)
    with pytest.raises(ValueError, match="'table'"):
        scores.rows("nope")


@pytest.mark.spec("API-ARRAYS")
def test_any_array_like_is_accepted() -> None:
    # Hand count: T = (3, 4), FED = (2, 3): both fail within their horizon, so TER = 0.
    assert prefixexec.ter([3, 4], [2, 3]) == 0
    assert prefixexec.ter((3, 4), (4, 3)) == Fraction(1, 2)  # the first has FED = T + 1
    assert prefixexec.ter(pd.Series([3, 4]), pl.Series([4, 5])) == 1
    assert prefixexec.ter(np.array([3.0, 4.0]), [4, 5]) == 1  # integral floats are integers
    assert prefixexec.pec([2, 5], 1) == 1 and prefixexec.pec([2, 5], 2) == Fraction(1, 2)
    assert prefixexec.n_k([1, 2, 3], 2) == 2
    assert prefixexec.success([True, 0, 1, 1]) == Fraction(3, 4)


@pytest.mark.spec("API-ARRAYS")
@pytest.mark.parametrize(
    ("args", "name"),
    [
        (([3, 4], [2]), "'fed' has 1 entries"),
        (([[3, 4]], [[2, 3]]), "'T' must be 1-dimensional"),
        (([3, 4.5], [2, 3]), "'T' must hold integers"),
        ((["a", "b"], [2, 3]), "'T' must hold integers"),
        (([3, 0], [2, 1]), "'T' must be >= 1"),
        (([3, 4], [2, 0]), "'fed' must be >= 1"),
        (([3, 4], [2, 6]), r"'fed' must be in \[1, T\+1\]"),
        (([], []), "'T' is empty"),
        (("34", [2, 3]), "'T' must be an array-like"),
        (([True, False], [1, 1]), "'T' must hold integers"),
    ],
)
def test_bad_arrays_raise_value_error_naming_the_argument(args: tuple[object, object], name: str) -> None:
    with pytest.raises(ValueError, match=name):
        prefixexec.ter(*args)


@pytest.mark.spec("API-ARRAYS")
def test_success_must_be_boolean() -> None:
    with pytest.raises(ValueError, match="'success' must hold booleans"):
        prefixexec.metrics([2, 2], [3, 1], [0, 2])
    with pytest.raises(ValueError, match="'success' has 1 entries"):
        prefixexec.metrics([2, 2], [3, 1], [1])


outcomes = st.lists(st.integers(1, 12), min_size=1, max_size=40).flatmap(
    lambda T: st.tuples(
        st.just(T),
        st.tuples(*[st.integers(1, t + 1) for t in T]).map(list),
        st.lists(st.booleans(), min_size=len(T), max_size=len(T)),
    )
)


@pytest.mark.spec("API-ARRAYS", "API-METRICS")
@given(outcomes)
def test_lists_give_the_kernels_values(data: tuple[list[int], list[int], list[bool]]) -> None:
    T, fed, Y = data
    t, f, y = np.array(T, dtype=np.int64), np.array(fed, dtype=np.int64), np.array(Y, dtype=np.bool_)
    assert prefixexec.ter(T, fed) == kernel.ter(t, f)
    assert prefixexec.auc_pec(T, fed) == kernel.auc_pec(t, f)
    assert prefixexec.rr(T, fed, Y) == kernel.rr(t, f, y)
    assert prefixexec.pec_elig_curve(T, fed) == kernel.pec_elig_curve(t, f)
    m = prefixexec.metrics(T, fed, Y)
    assert (m.N, m.TER, m.AUC_PEC, m.mean_FED, m.RR, m.success) == (
        len(T),
        kernel.ter(t, f),
        kernel.auc_pec(t, f),
        kernel.mean_fed(f),
        kernel.rr(t, f, y),
        kernel.success(y),
    )


@pytest.mark.spec("API-BOOTSTRAP")
def test_bootstrap_interval_is_the_one_score_reports() -> None:
    scores = prefixexec.score(TAU, bootstrap=2000, seed=3)
    (c,) = scores.conditions
    T = [r.outcome.T for r in scores.rollouts]
    fed = [r.outcome.fed for r in scores.rollouts]
    Y = [r.success for r in scores.rollouts]
    tasks = [r.task_id for r in scores.rollouts]
    for metric, ci in (
        ("TER", "TER"),
        ("AUC_PEC", "AUC_PEC"),
        ("success", "success"),
        ("RR", "RR_bootstrap"),
    ):
        result = prefixexec.bootstrap(
            T, fed, Y, metric=metric, tasks=tasks, B=2000, seed=3, distribution=True
        )
        interval = c.ci[ci]
        assert interval is not None
        assert (result.confidence_interval.low, result.confidence_interval.high) == (
            interval.low,
            interval.high,
        )
        dist = result.bootstrap_distribution
        assert dist is not None and dist.shape == (2000,)
        defined = dist[~np.isnan(dist)]
        assert result.standard_error == float(np.std(defined, ddof=1))  # scipy's definition (ddof=1)
        assert result.dropped == 2000 - defined.shape[0]


@pytest.mark.spec("API-BOOTSTRAP")
def test_bootstrap_result_has_scipys_shape() -> None:
    theirs = scipy.stats.bootstrap(([0, 1, 1, 0, 1],), np.mean, n_resamples=50, method="percentile", rng=0)
    ours = prefixexec.bootstrap([1, 1, 1, 1, 1], [1, 2, 2, 1, 2], [0, 1, 1, 0, 1], B=50)
    for name in ("confidence_interval", "standard_error", "bootstrap_distribution"):
        assert hasattr(theirs, name) and hasattr(ours, name)
    assert ours.bootstrap_distribution is None  # only on request
    assert hasattr(ours.confidence_interval, "low") and hasattr(ours.confidence_interval, "high")
    undefined = prefixexec.bootstrap([1, 1], [2, 2], [1, 1], metric="RR", B=20)  # no eligible rollout
    assert math.isnan(undefined.confidence_interval.low) and undefined.dropped == 20
    with pytest.raises(ValueError, match="'metric'"):
        prefixexec.bootstrap([1], [1], [0], metric="AUC")


@pytest.mark.spec("API-READ")
def test_read_takes_keyword_options() -> None:
    detected = prefixexec.read("auto", TAU)
    chosen = prefixexec.read("taubench", [str(TAU)])
    assert [r.task_id for r in detected] == [r.task_id for r in chosen] and len(chosen) == 200
    renamed = prefixexec.read("taubench", TAU, method="m", model="x")
    assert {r.condition.method for r in renamed} == {"m"} and {r.condition.model for r in renamed} == {"x"}
    with pytest.raises(TypeError, match="unknown adapter option"):
        prefixexec.read("taubench", TAU, colour="red")
    with pytest.raises(InputError, match="--scorer"):  # CLI-NO-EFFECT: no effect with taubench
        prefixexec.read("taubench", TAU, scorer="x")
    with pytest.raises(InputError, match="unknown adapter"):
        prefixexec.read("nope", TAU)


@pytest.mark.spec("API-ARRAYS")
def test_every_kernel_name_is_public_from_the_package() -> None:
    # The package re-exports the kernel (its module docstring): every name of the kernel's
    # __all__ is in prefixexec.__all__ and resolves, to the kernel's own object unless the
    # Python API replaces it (estimators taking any array-like, API-ARRAYS).
    import prefixexec
    import prefixexec.api
    import prefixexec.kernel

    missing = sorted(set(prefixexec.kernel.__all__) - set(prefixexec.__all__))
    assert missing == []
    for name in prefixexec.kernel.__all__:
        owner = prefixexec.api if hasattr(prefixexec.api, name) else prefixexec.kernel
        assert getattr(prefixexec, name) is getattr(owner, name), name
