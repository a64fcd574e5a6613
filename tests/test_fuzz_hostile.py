"""Fuzzing every reader through the command line (spec HOSTILE-FUZZ, HOSTILE-ERROR).

Hypothesis mutates a valid input of each adapter (records, chat, tau-bench, inspect ``.json``,
BFCL, Parquet bytes) with hostile edits: random text spliced in, slices cut out, numbers replaced
by extreme ones, deep nesting, lone surrogates, repeated lines. Each case runs
``prefixexec score`` in this process and must end with exit 0 and a result, or exit 2 and
exactly one ``prefixexec: error:`` line on stderr and nothing on stdout; any other exception
fails the test. Each case must also stay within a time bound and a bound on the memory that
Python allocates while it runs (tracemalloc's peak).

The number of examples follows the Hypothesis profile (a quarter of it: 25 in ``dev``, 75 in
``ci``), so the default test command spends a few seconds here.
"""

from __future__ import annotations

import contextlib
import io
import json
import time
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prefixexec.cli import main

from conftest import REPO

DATA = REPO / "tests" / "data"
#: Wall-clock bound of one case (generous for a shared 2-core machine; a case takes well under 1 s).
TIME_BOUND_S = 20.0
#: Bound on the peak of memory allocated by Python during one case.
MEMORY_BOUND = 200 * 2**20

RECORD = json.dumps(
    {
        "dataset": "d",
        "task_id": 7,
        "model": "m",
        "method": "x",
        "trial": 1,
        "success": True,
        "actions": [
            {"tool": "a", "arguments": {"q": 1.5}, "executable": True},
            {"tool": "b", "executable": False, "label": "schema", "reason": "r"},
        ],
        "meta": {"k": [1, {"z": None}]},
    }
)
OUTCOME = json.dumps(
    {
        "dataset": "d",
        "task_id": "t",
        "model": "m",
        "method": "y",
        "success": False,
        "outcome": {"T": 4, "fed": 2},
    }
)

SEEDS: dict[str, tuple[str, str]] = {
    "records": ("r.jsonl", RECORD + "\n" + OUTCOME + "\n"),
    "chat": (
        "c.jsonl",
        (DATA / "chat" / "transcripts.jsonl").read_text(encoding="utf-8").splitlines()[0] + "\n",
    ),
    "taubench": ("results.json", (DATA / "taubench" / "hotel-es.json").read_text(encoding="utf-8")),
    "inspect": (
        "log.json",
        json.dumps(
            {
                "eval": {"task": "t", "model": "m", "solver": "s", "scorers": [{"name": "match"}]},
                "samples": [
                    {
                        "id": 1,
                        "epoch": 1,
                        "messages": [{"role": "user", "content": "hi"}],
                        "scores": {"match": {"value": "C"}},
                    }
                ],
            }
        ),
    ),
    "bfcl": (
        "result/m/multi_turn/BFCL_v4_multi_turn_base_result.json",
        '{"id": "multi_turn_base_0", "result": [["[ls(a=True)]", "done"], [], [], []]}\n',
    ),
}

EXTREME = st.sampled_from(
    ["9223372036854775808", "1e308", "-1", "0", "4611686018427387904", "2.0", "1e-400", "7" * 5000, "100001"]
)
NOISE = st.sampled_from(
    [
        "[" * 3000,
        "{",
        "}",
        '"',
        "\\ud800",
        '"\\udfff"',
        ",",
        ":",
        "null",
        "\n",
        "\r",
        "\x00",
        "\ufeff",
        "é",
        "\\",
    ]
)


@st.composite
def mutated(draw: st.DrawFn, seed: str) -> str:
    """``seed`` after one to four hostile edits."""
    text = seed
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["splice", "cut", "number", "deep", "repeat", "text"]))
        at = draw(st.integers(0, len(text)))
        if kind == "splice":
            text = text[:at] + draw(NOISE) + text[at:]
        elif kind == "cut":
            text = text[:at] + text[at + draw(st.integers(1, 40)) :]
        elif kind == "number":
            digits = [i for i, c in enumerate(text) if c.isdigit()]
            if digits:
                i = digits[draw(st.integers(0, len(digits) - 1))]
                text = text[:i] + draw(EXTREME) + text[i + 1 :]
        elif kind == "deep":
            depth = draw(st.sampled_from([10, 900, 5000, 50_000]))
            text = text[:at] + "[" * depth + "]" * depth + text[at:]
        elif kind == "repeat":
            text = text + text
        else:
            text = text[:at] + draw(st.text(max_size=20)) + text[at:]
    return text


def check_case(path: Path, adapter: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["score", "--bootstrap", "0", "--json", "--adapter", adapter, str(path)])
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    elapsed = time.perf_counter() - start
    lines = [line for line in err.getvalue().splitlines() if not line.startswith("prefixexec: reading ")]
    assert code in (0, 2), err.getvalue()
    if code == 2:
        assert out.getvalue() == ""
        assert len(lines) == 1 and lines[0].startswith("prefixexec: error: "), err.getvalue()
    else:
        assert json.loads(out.getvalue())["conditions"]
    assert elapsed < TIME_BOUND_S
    assert peak < MEMORY_BOUND


EXAMPLES = max(10, settings.default.max_examples // 4)


@pytest.mark.spec("HOSTILE-FUZZ", "HOSTILE-ERROR")
@pytest.mark.parametrize("adapter", sorted(SEEDS))
def test_fuzzed_input_gives_a_result_or_one_error_line(adapter: str, tmp_path: Path) -> None:
    name, seed = SEEDS[adapter]

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(text=mutated(seed))
    def case(text: str) -> None:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        check_case(path, adapter)

    case()


@pytest.mark.spec("HOSTILE-FUZZ")
@settings(max_examples=EXAMPLES, deadline=None)
@given(data=st.binary(max_size=400))
def test_random_bytes_as_parquet_and_eval(data: bytes) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        for adapter, name in (("parquet", "x.parquet"), ("inspect", "x.eval")):
            path = Path(directory) / name
            path.write_bytes(b"PAR1" + data + b"PAR1" if adapter == "parquet" else b"PK\x03\x04" + data)
            check_case(path, adapter)
