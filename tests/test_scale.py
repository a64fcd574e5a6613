"""The bootstrap at scale from the command line (#27): blocks, memory refusal, progress, and the
memory reproducers of #28 (one record with T = 100000; 2,000 one-rollout models)."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from prefixexec.adapters import InputError
from prefixexec.cli import main
from prefixexec.inference import evaluate_accumulators
from prefixexec.kernel import ConditionKey, Outcome, Rollout
from prefixexec.kernel.accumulator import AccumulatorSet
from prefixexec.kernel.bootstrap import BootstrapSettings
from prefixexec.scale import available_memory
from prefixexec.scoring import half_up


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def record(model: str, task: str, T: int, fed: int, success: bool = False) -> dict[str, Any]:
    outcome: dict[str, Any] = {"T": T, "fed": fed}
    if fed <= T:
        outcome["label"] = "schema"
    return {
        "dataset": "d",
        "model": model,
        "method": "x",
        "task_id": task,
        "success": success,
        "outcome": outcome,
    }


def some_tasks(n: int = 40, models: int = 2) -> list[dict[str, Any]]:
    out = []
    for m in range(models):
        for j in range(n):
            T = 1 + (j * 7 + m) % 5
            out.append(record(f"m{m}", f"t{j:03d}", T, 1 + (j * 3 + m) % (T + 1), (j + m) % 3 == 0))
    return out


@pytest.mark.spec("BOOT-BLOCK", "OUT-CI")
def test_every_block_size_prints_the_same_document(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(write_jsonl(tmp_path / "r.jsonl", some_tasks()))
    outputs = []
    for block in (None, 1, 7, 300, 10_000):
        argv = ["score", path, "--json", "--bootstrap", "300", "--seed", "5"]
        argv += [] if block is None else ["--bootstrap-block", str(block)]
        assert main(argv) == 0
        out, err = capsys.readouterr()
        assert err == ""  # piped: no progress
        outputs.append(out)
    assert len(set(outputs)) == 1 and '"ci"' in outputs[0]


@pytest.mark.spec("BOOT-BLOCK")
def test_bootstrap_block_must_be_positive(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(write_jsonl(tmp_path / "r.jsonl", some_tasks(5)))
    with pytest.raises(SystemExit) as info:
        main(["score", path, "--bootstrap-block", "0"])
    assert info.value.code == 2
    assert "--bootstrap-block: must be >= 1" in capsys.readouterr().err


@pytest.mark.spec("BOOT-MEMORY", "REC-ERRORS")
def test_too_many_resamples_are_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 10^12 resamples need 17 TB for the replicates of one interval: refused before drawing.
    path = str(write_jsonl(tmp_path / "r.jsonl", some_tasks(5)))
    assert main(["score", path, "--bootstrap", str(10**12)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith("prefixexec: error: --bootstrap: 1000000000000 resamples of ")
    assert "available; use --bootstrap " in err and err.rstrip().endswith("or less")


@pytest.mark.spec("BOOT-MEMORY")
def test_a_forced_block_that_cannot_fit_names_the_largest_that_can(tmp_path: Path) -> None:
    # 20,000 tasks: a block of 10,000 resamples is 10^4 x 2 10^4 x 16 bytes = 3.2 GB, more than
    # the 1.5 GB address space this child may use (ulimit -v): refused, naming a block that fits.
    path = write_jsonl(tmp_path / "r.jsonl", [record("m", f"t{j}", 2, 1 + j % 3) for j in range(20_000)])
    limit = 1_500 * 2**20

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    done = subprocess.run(
        [sys.executable, "-m", "prefixexec", "score", str(path), "--bootstrap-block", "10000"],
        capture_output=True,
        text=True,
        preexec_fn=cap,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout == "" and done.stderr.count("\n") == 1
    assert "--bootstrap-block: a block of 10000 resamples x 20000 tasks needs about 3.2 GB" in done.stderr
    suggested = int(done.stderr.split("use --bootstrap-block ")[1].split()[0])
    assert 1 <= suggested < 10_000 and suggested * 20_000 * 16 < limit


@pytest.mark.spec("BOOT-MEMORY")
def test_the_library_refuses_with_the_same_line() -> None:
    key = ConditionKey("d", "m", "x")
    accs = AccumulatorSet.from_rollouts([Rollout(key, f"t{j}", 0, Outcome(2, 1), False) for j in range(100)])
    with pytest.raises(InputError) as info:
        evaluate_accumulators(
            accs, BootstrapSettings(B=10_000), keep_replicates=False, block=10_000, memory_limit=2**20
        )
    assert info.value.where == "--bootstrap-block" and "use --bootstrap-block" in info.value.what
    assert available_memory() is None or available_memory() > 0  # type: ignore[operator]  # checked for None first


@pytest.mark.spec("BOOT-PROGRESS", "PROGRESS-COUNT")
def test_progress_shows_blocks_and_time_left() -> None:
    from prefixexec.ttyprogress import Work

    now = [0.0]
    work = Work(True, "prefixexec score", delay=0.0, clock=lambda: now[0])
    work.phase("bootstrap (10000 resamples)", None, "blocks")
    shown = []
    for done in (1, 2, 3, 4):
        now[0] += 10.0  # 10 s a block
        work.progress(done, 4)
        shown.append(work.line())
    # After 1 block in 10 s, 3 are left: 30 s; at the end no time left is shown.
    assert shown == [
        "prefixexec score: bootstrap (10000 resamples)  1/4 blocks  ~30 s left  10 s elapsed",
        "prefixexec score: bootstrap (10000 resamples)  2/4 blocks  ~20 s left  20 s elapsed",
        "prefixexec score: bootstrap (10000 resamples)  3/4 blocks  ~10 s left  30 s elapsed",
        "prefixexec score: bootstrap (10000 resamples)  4/4 blocks  40 s elapsed",
    ]
    assert not work.enabled  # --quiet: nothing is drawn


@pytest.mark.spec("REP-ROUND")
@given(st.fractions() | st.floats(allow_nan=False, allow_infinity=False, width=64), st.integers(0, 6))
def test_half_up_in_integers_equals_the_fraction_formula(value: Fraction | float, digits: int) -> None:
    # The formula half_up had before #27, on exact Fractions: floor(|x| 10^d + 1/2).
    import math

    exact_value = Fraction(value)
    units = math.floor(abs(exact_value) * 10**digits + Fraction(1, 2))
    sign = "-" if exact_value < 0 and units != 0 else ""
    whole, part = divmod(units, 10**digits)
    expected = f"{sign}{whole}.{part:0{digits}d}" if digits > 0 else f"{sign}{whole}"
    assert half_up(value, digits) == expected


#: Run the command line in a child and print its peak resident memory (bytes) on stderr's last
#: line: VmHWM of /proc/self/status, this process's own high-water mark (ru_maxrss would carry
#: the forking pytest worker's, which Linux keeps across exec).
_PEAK = (
    "import sys\n"
    "from prefixexec.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "sys.stdout.flush()\n"
    "kb = [l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')][0]\n"
    "sys.stderr.write(f'{int(kb) * 1024}\\n')\n"
    "sys.exit(code)\n"
)


def _peak_rss(argv: list[str]) -> tuple[int, str]:
    """The peak resident memory (bytes) of a child running ``prefixexec ARGV``, and its stdout."""
    done = subprocess.run([sys.executable, "-c", _PEAK, *argv], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return int(done.stderr.splitlines()[-1]), done.stdout


@pytest.mark.spec("BOOT-DEDUP", "BOOT-MEMORY", "HOSTILE-CELLS")
def test_one_record_with_the_longest_horizon_scores_in_bounded_memory(tmp_path: Path) -> None:
    # #28: one record with T = 100000 (the documented maximum) took 23.8 GB with the default
    # bootstrap. Its 200,008 per-task columns hold 4 distinct ones; the replicates of 8 distinct
    # ratios are computed, not 200,005.
    path = write_jsonl(tmp_path / "one.jsonl", [record("m", "t", 100_000, 5)])
    peak, out = _peak_rss(["score", str(path)])
    assert peak < 400 * 2**20, peak  # an interpreter with numpy alone is about 60 MB
    assert "0.00 [0.00, 0.00]  5.00 [5.00, 5.00]" in out  # TER and mean FED with their intervals


@pytest.mark.spec("BOOT-DEDUP", "BOOT-MEMORY")
def test_two_thousand_models_score_in_bounded_memory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # #28: 2,000 one-rollout models in 230 KB took 2.6-4.9 GB with the default bootstrap (every
    # condition's 10 columns x 10,000 replicates kept at once).
    records = [record(f"m{i:04d}", "t1", 3, 1 + i % 4, i % 5 == 0) for i in range(2000)]
    path = write_jsonl(tmp_path / "models.jsonl", records)
    peak, out = _peak_rss(["score", str(path)])
    assert peak < 400 * 2**20, peak
    assert out.count(" / m") == 2000  # one block per model


@pytest.mark.spec("BOOT-MEMORY", "CMP-BASELINE")
def test_compare_refuses_replicates_that_cannot_fit() -> None:
    # A comparison keeps both sides' replicates for their paired differences: with T = 100000,
    # 10,000 resamples of 2 x (5 + 2 x 100000) rows, and as much again for the differences, take
    # 64 GB: refused in one line naming how many resamples fit; a few resamples are scored.
    from prefixexec.inference import compare_conditions

    accs = AccumulatorSet.from_rollouts(
        [
            Rollout(ConditionKey("d", "m", m), "t", 0, Outcome(100_000, f), False)
            for m, f in (("x", 5), ("y", 7))
        ]
    )
    with pytest.raises(InputError) as info:
        compare_conditions(accs, BootstrapSettings(B=10_000), "x", 0.95, memory_limit=2 * 10**9)
    assert info.value.where == "--bootstrap" and info.value.what.endswith("use --bootstrap 312 or less")
    assert "need about 64.0 GB, more than the 2.0 GB available" in info.value.what
    # 2 sides x 8 bytes x (5 + 2 x 100000) rows x 2 (the differences) a resample: 2 GB hold 312.
    assert (2 * 10**9) // (2 * 8 * (5 + 200_000) * 2) == 312
    found, skipped = compare_conditions(accs, BootstrapSettings(B=5), "x", 0.95, memory_limit=2 * 10**9)
    assert len(found) == 1 and skipped == [] and found[0]["shared_tasks"] == 1
