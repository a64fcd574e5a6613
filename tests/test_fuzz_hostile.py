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
from test_hostile import Listener

from prefixexec.adapters.text import CONTROL
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

#: An xLAM step: JSON tool calls written as text (BFCL's SalesforceLlama handler decodes it).
XLAM_STEP = '[{"name": "ls", "arguments": {"a": true}}]'


def _first_lines(path: Path, n: int) -> list[str]:
    return [*path.read_text(encoding="utf-8").split("\n")[:n], ""]


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
    # BFCL-DECODERS: a local handler's JSON calls written as text (xLAM, by the folder's model name)
    "bfcl-xlam": (
        "result/Salesforce_xLAM-2-70b-fc-r/multi_turn/BFCL_v4_multi_turn_base_result.json",
        json.dumps({"id": "multi_turn_base_0", "result": [[XLAM_STEP], [], [], []]}) + "\n",
    ),
    # TRACE-*: the first lines of the real traces of tests/make_agent_traces.py (tests/data/traces),
    # as many as make the first whole trace (found by scoring growing heads of each file)
    **{
        adapter: (name, "\n".join(_first_lines(DATA / "traces" / name, lines)))
        for adapter, name, lines in (
            ("otel", "agents-otel-genai.jsonl", 10),
            ("openinference", "agents-openinference.jsonl", 10),
            ("agents", "agents-sdk.jsonl", 8),
            ("langsmith", "langgraph-langsmith.jsonl", 6),
        )
    },
    # TRACE-OTLP-DOCUMENT, TRACE-MLFLOW, TRACE-ATIF: one pretty document each (issue 39): the OTLP
    # document of tests/data/traces-otlp, an MLflow trace and an ATIF trajectory of
    # tests/data/traces-mlflow and traces-atif
    "otel-document": (
        "trace.json",
        json.dumps(json.loads((DATA / "traces-otlp" / "genai-pretty.json").read_text()), indent=1),
    ),
    "mlflow": ("trace.json", (DATA / "traces-mlflow" / "mlflow-recovered.json").read_text(encoding="utf-8")),
    "atif": ("trajectory.json", (DATA / "traces-atif" / "atif-recovered.json").read_text(encoding="utf-8")),
    # HOSTILE-BFCL-COST: numbers the model chose, in a task whose classes compute with them.
    "bfcl-math": (
        "result/m/multi_turn/BFCL_v4_multi_turn_base_result.json",
        '{"id": "multi_turn_base_15", "result": [["[round_number(number=5, decimal_places=2)]",'
        ' "[mean(numbers=[1, 2, 3])]"], [], [], [], []]}\n',
    ),
}

EXTREME = st.sampled_from(
    [
        "9223372036854775808",
        "1e308",
        "-1",
        "0",
        "4611686018427387904",
        "2.0",
        "1e-400",
        "7" * 5000,
        "100001",
        "-1000000000",  # HOSTILE-BFCL-COST: round(5, -10**9)
        "-99999",
        "0x" + "f" * 5000,  # a hexadecimal literal passes the parser's digit limit
    ]
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
        "\u2028",  # HOSTILE-LINES: not a line break
        "\u0085",
        "\x0c",
        "\x1b]0;t\x07\x1b[2J",  # HOSTILE-CONTROL: a terminal escape in a name or a reason
        "\u202e",
        "\\u001b[31m",
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


def check_case(path: Path, adapter: str, *extra: str, command: tuple[str, ...] = ("score", "--json")) -> str:
    out, err = io.StringIO(), io.StringIO()
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            boot = ["--bootstrap", "0"] if command[0] == "score" else []
            code = main([*command, *boot, "--adapter", adapter, *extra, str(path)])
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    elapsed = time.perf_counter() - start
    lines = [line for line in err.getvalue().splitlines() if not line.startswith("prefixexec: reading ")]
    assert code in (0, 2), err.getvalue()
    if code == 2:
        assert out.getvalue() == ""
        assert len(lines) == 1 and lines[0].startswith("prefixexec: error: "), err.getvalue()
    elif "--json" in command:
        assert json.loads(out.getvalue())["conditions"]
    # HOSTILE-CONTROL: nothing a terminal acts on, on either stream, whatever the input held
    # (JSON is data: JSON escapes its C0 controls, other characters are kept).
    json_out = "--json" in command and code == 0
    for text, is_json in ((out.getvalue(), json_out), (err.getvalue(), False)):
        raw = {c for c in text if c != "\n" and (ord(c) < 0x20 if is_json else ord(c) in CONTROL)}
        assert not raw, text[:200]
    assert elapsed < TIME_BOUND_S
    assert peak < MEMORY_BOUND
    return out.getvalue()


EXAMPLES = max(10, settings.default.max_examples // 4)


@pytest.mark.spec("HOSTILE-FUZZ", "HOSTILE-ERROR")
@pytest.mark.parametrize("adapter", sorted(SEEDS))
def test_fuzzed_input_gives_a_result_or_one_error_line(adapter: str, tmp_path: Path) -> None:
    name, seed = SEEDS[adapter]
    adapter = adapter.split("-")[0]

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


# ---------------------------------------------------------------------------------------------
# Patterns, schemas and names from the input (issue 28)

#: Patterns that backtrack exponentially in Python's re, that RE2 lacks, or that are not patterns.
PATTERNS = st.sampled_from(
    ["^(a+)+$", "(a|aa)+$", "(a*)*b", "(?<=a)b", "(a)\\1", "(", "[", "a{1001}", "x*+", "\\Z", "(?i)é", "\\d+"]
) | st.text(alphabet="a()+*?|[]^$\\{}.", max_size=12)
VICTIMS = st.sampled_from(["a" * 40 + "!", "aaaa", "", "b", "é" * 30 + "!"])


@st.composite
def hostile_schema(draw: st.DrawFn, port: int) -> tuple[object, dict[str, object]]:
    """A tool schema built from hostile pieces, and arguments for it."""
    victim = draw(VICTIMS)
    kind = draw(st.sampled_from(["pattern", "patternProperties", "ref", "uniqueItems", "draft4", "cycle"]))
    pattern = draw(PATTERNS)
    if kind == "pattern":
        return {"type": "object", "properties": {"q": {"type": "string", "pattern": pattern}}}, {"q": victim}
    if kind == "patternProperties":
        schema = {
            "type": "object",
            "patternProperties": {pattern: {"type": "integer"}},
            "additionalProperties": False,
        }
        return schema, {victim: 1}
    if kind == "draft4":
        return {"$schema": "http://json-schema.org/draft-04/schema#", "patternProperties": {pattern: {}}}, {
            victim: 1
        }
    if kind == "ref":
        target = draw(
            st.sampled_from([f"http://127.0.0.1:{port}/s.json", f"https://127.0.0.1:{port}/", "#", "#/x"])
        )
        where = draw(st.booleans())
        schema = {"$ref": target} if where else {"type": "object", "properties": {"q": {"$ref": target}}}
        return schema, {"q": victim}
    if kind == "cycle":
        return {
            "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}},
            "$ref": "#/$defs/a",
        }, {}
    n = draw(st.sampled_from([0, 1, 50, 5000]))
    items = [[i % 97, {"k": i % 89}] for i in range(n)]
    return {"type": "object", "properties": {"xs": {"type": "array", "uniqueItems": True}}}, {"xs": items}


@pytest.mark.spec(
    "HOSTILE-FUZZ", "HOSTILE-REGEX", "HOSTILE-NETWORK", "HOSTILE-SCHEMA-COST", "CHAT-SCHEMA-CYCLE"
)
def test_fuzzed_schemas_patterns_and_rules(tmp_path: Path) -> None:
    listener = Listener()  # tests/test_hostile.py's (HOSTILE-NETWORK)

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(data=st.data())
    def case(data: st.DataObject) -> None:
        schema, arguments = data.draw(hostile_schema(listener.port))
        result = data.draw(VICTIMS)
        line = {
            "task_id": "t",
            "model": data.draw(st.text(max_size=8)) or "m",
            "method": "x",
            "success": True,
            "messages": [
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c",
                            "type": "function",
                            "function": {"name": "t", "arguments": json.dumps(arguments)},
                        }
                    ],
                },
                {
                    "role": "tool",
                    "tool_call_id": "c",
                    "content": result,
                    "is_error": data.draw(st.booleans()),
                },
            ],
            "tools": [{"type": "function", "function": {"name": "t", "parameters": schema}}],
        }
        path = tmp_path / "c.jsonl"
        path.write_text(json.dumps(line) + "\n", encoding="utf-8")
        extra: list[str] = []
        option = data.draw(st.sampled_from(["none", "rules", "error-pattern"]))
        if option == "rules":
            rules = tmp_path / "rules.toml"
            rules.write_text(
                f'[[chat]]\npattern = {json.dumps(data.draw(PATTERNS))}\nlabel = "schema"\n', encoding="utf-8"
            )
            extra = ["--label-rules", str(rules)]
        elif option == "error-pattern":
            extra = ["--error-pattern", data.draw(PATTERNS)]
        check_case(
            path, "chat", *extra, command=data.draw(st.sampled_from([("score", "--json"), ("explain",)]))
        )

    try:
        case()
    finally:
        assert listener.close() == 0, "a schema's $ref made prefixexec connect"


@pytest.mark.spec("HOSTILE-FUZZ", "HOSTILE-CONTROL")
@settings(max_examples=EXAMPLES, deadline=None)
@given(
    names=st.lists(
        st.text(
            alphabet=st.sampled_from([*sorted(chr(c) for c in CONTROL), "a", "[", "$", " "]),
            min_size=1,
            max_size=6,
        ),
        min_size=4,
        max_size=4,
    ),
    command=st.sampled_from([("score",), ("explain",), ("score", "--json")]),
)
def test_fuzzed_names_never_reach_the_terminal_raw(names: list[str], command: tuple[str, ...]) -> None:
    import tempfile

    dataset, model, method, task = names
    line = {
        "dataset": dataset,
        "task_id": task,
        "model": model,
        "method": method,
        "success": False,
        "outcome": {"T": 2, "fed": 1, "label": "schema", "reason": "".join(names)},
    }
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "r.jsonl"
        path.write_text(json.dumps(line) + "\n", encoding="utf-8")
        check_case(path, "records", command=command)


@pytest.mark.spec("HOSTILE-FUZZ", "HOSTILE-PSEUDO", "HOSTILE-FIFO", "HOSTILE-OPTION-FILE")
@settings(max_examples=max(4, EXAMPLES // 3), deadline=None)
@given(
    kind=st.sampled_from(["fifo", "proc", "device", "dangling"]),
    slot=st.sampled_from(["input", "label-rules", "select"]),
)
def test_fuzzed_special_files_in_every_slot(kind: str, slot: str) -> None:
    import os
    import subprocess
    import sys
    import tempfile

    if kind == "proc" and not os.path.exists("/proc/kmsg"):
        return  # not Linux: no procfs to test with (the other kinds still run)
    with tempfile.TemporaryDirectory() as directory:
        special = Path(directory) / "special"
        if kind == "fifo":
            os.mkfifo(special)
        else:
            special.symlink_to(
                {"proc": "/proc/kmsg", "device": "/dev/zero", "dangling": "/nonexistent/x"}[kind]
            )
        records = Path(directory) / "r.jsonl"
        records.write_text(OUTCOME + "\n", encoding="utf-8")
        argv = {
            "input": ["score", "--adapter", "records", str(special)],
            "label-rules": ["score", "--adapter", "chat", "--label-rules", str(special), str(records)],
            "select": ["score", "--adapter", "records", "--select", f"task_id=@{special}", str(records)],
        }[slot]
        # A subprocess with a time limit: a read of any of these could block the suite forever.
        proc = subprocess.run(
            [sys.executable, "-m", "prefixexec", *argv],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        lines = [line for line in proc.stderr.splitlines() if line]
        assert proc.returncode == 2 and proc.stdout == "", proc.stderr
        assert len(lines) == 1 and lines[0].startswith("prefixexec: error: ") and "special" in lines[0], (
            proc.stderr
        )


# ---------------------------------------------------------------------------------------------
# Issue 40: cost that follows a count, not the bytes (HOSTILE-COUNT-COST), and numbers of any
# size (HOSTILE-BIGINT). Cost is counted in operations, never timed.


@pytest.mark.spec("HOSTILE-COUNT-COST", "PASSK-HAT", "PASSK-AT")
@settings(max_examples=EXAMPLES, deadline=None)
@given(
    trials=st.lists(st.integers(1, 60), min_size=1, max_size=6),
    data=st.data(),
    at_least_one=st.booleans(),
)
def test_pass_k_columns_cost_binomials_per_task_not_per_trial(
    trials: list[int], data: st.DataObject, at_least_one: bool
) -> None:
    # A leaderboard's curve asks task_columns for every k up to the smallest n; each k took a
    # binomial for every a up to the largest n (n^3 over the curve: 1,600 trials 70 s). Now at
    # most two binomials per task (C(n_j, k) and C(c_j, k) or C(n_j - c_j, k)) per k; the values
    # are checked against math.comb directly, task by task.
    import math
    from fractions import Fraction
    from unittest import mock

    from prefixexec.kernel import passk

    successes = [data.draw(st.integers(0, n)) for n in trials]
    calls = 0
    real = math.comb

    def counted(a: int, b: int) -> int:
        nonlocal calls
        calls += 1
        return real(a, b)

    for k in range(1, min(trials) + 1):
        calls = 0
        with mock.patch.object(passk.math, "comb", counted):
            num, den = passk.task_columns(trials, successes, k, at_least_one)
        assert calls <= 2 * len(trials)
        for j, (n, c) in enumerate(zip(trials, successes, strict=True)):
            want = (
                1 - Fraction(real(n - c, k), real(n, k)) if at_least_one else Fraction(real(c, k), real(n, k))
            )
            assert Fraction(int(num[j]), int(den[j])) == want


INTERVAL_TEXT = st.text(alphabet=" [()]a0.,\n\t", max_size=40)


@pytest.mark.spec("HOSTILE-COUNT-COST", "HOSTILE-FUZZ")
@settings(max_examples=EXAMPLES * 4, deadline=None)
@given(text=INTERVAL_TEXT)
def test_the_trailing_interval_is_cut_as_the_pattern_did(text: str) -> None:
    # The one-pass cut of audit-table and crosscheck (prefixexec.audit_table.without_interval)
    # against the pattern it replaces, which is quadratic on long cells of brackets.
    import re

    from prefixexec.audit_table import without_interval

    assert without_interval(text) == re.sub(r"\s*[\[(][^\])]*[\])]\s*$", "", text)


@pytest.mark.spec("HOSTILE-COUNT-COST", "TRACE-ORDER")
@settings(max_examples=EXAMPLES, deadline=None)
@given(n=st.integers(1, 400), tools=st.integers(1, 3), data=st.data())
def test_tool_spans_without_ids_are_matched_in_linear_work(n: int, tools: int, data: st.DataObject) -> None:
    # OpenInference tool spans carry no tool_call.id: each is matched to the first free request
    # of its tool with the same arguments. Counted: canonical forms made, at most one per request
    # and one per span (before: one per free candidate per span, calls^2 / 2; 5,000 calls 48 s).
    from unittest import mock

    from prefixexec.adapters import spans

    order = data.draw(st.permutations(range(n)))
    asked = tuple(spans.Requested(None, f"t{i % tools}", json.dumps({"i": i}), i) for i in range(n))
    llm = spans.Span("w", "tr", "llm", None, "chat", 0, 1, kind=spans.LLM, requested=asked)
    tool_spans = [
        spans.Span(
            "w",
            "tr",
            f"s{j}",
            None,
            "tool",
            2 + j,
            3 + j,
            kind=spans.TOOL,
            tool=f"t{i % tools}",
            arguments=json.dumps({"i": i}),
        )
        for j, i in enumerate(order)
    ]
    made = 0
    real = spans._canonical

    def counted(arguments: object) -> str:
        nonlocal made
        made += 1
        return real(arguments)

    with mock.patch.object(spans, "_canonical", counted):
        calls = spans._calls([llm, *tool_spans])
    assert made <= 2 * n
    # every span answered its own request: no request is left over as an unanswered call
    assert len(calls) == n and all(call.executed for call in calls)


@pytest.mark.spec("HOSTILE-COUNT-COST", "TRACE-UNANSWERED")
def test_unanswered_requests_share_one_bounded_reason() -> None:
    # Many unanswered requests of one tool and many failed spans with long errors that name it:
    # each request kept its own join of every error (1.84 GB from a 2 MB trace). Now one text per
    # tool, of at most MAX_SAID_ERRORS errors of at most MAX_SAID characters each.
    from prefixexec.adapters import spans

    asked = tuple(spans.Requested(None, "lookup", "{}", i) for i in range(2000))
    llm = spans.Span("w", "tr", "llm", None, "chat", 0, 1, kind=spans.LLM, requested=asked)
    failed = [
        spans.Span(
            "w", "tr", f"f{i}", None, "step", 2, 3, failed=True, error="lookup failed: " + "x" * 50_000
        )
        for i in range(50)
    ]
    calls = spans._calls([llm, *failed])
    assert len(calls) == 2000
    texts = {id(call.error) for call in calls}
    assert len(texts) == 1
    bound = spans.MAX_SAID_ERRORS * (spans.MAX_SAID + len("...; "))
    assert all(len(call.error) <= bound for call in calls)


@pytest.mark.spec("HOSTILE-COUNT-COST", "LB-FLIPS")
@settings(max_examples=max(5, EXAMPLES // 2), deadline=None)
@given(counts=st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=2, max_size=60))
def test_leaderboard_counts_every_flip_and_lists_the_largest(counts: list[tuple[int, int]]) -> None:
    # System i: 4 tasks, s_i of them successes and e_i fully executable (FED = T + 1), so success
    # is s_i / 4 and TER e_i / 4; the pairs whose two orders differ are counted here directly.
    # Before: every flipped pair was listed (300 systems: 5.1 MB of text, 1,000: 1.8 GB).
    import tempfile

    from prefixexec.ranking.core import MAX_FLIPS

    lines = []
    for i, (s, e) in enumerate(counts):
        for t in range(4):
            fed = 3 if t < e else 1
            lines.append(
                json.dumps(
                    {
                        "dataset": "d",
                        "task_id": t,
                        "model": f"m{i:03d}",
                        "method": "x",
                        "success": t < s,
                        "outcome": {"T": 2, "fed": fed},
                    }
                )
            )
    sign = lambda d: (d > 0) - (d < 0)  # noqa: E731
    want = sum(
        1
        for a in range(len(counts))
        for b in range(a + 1, len(counts))
        if sign(counts[a][0] - counts[b][0]) != sign(counts[a][1] - counts[b][1])
    )
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "r.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = main(
                ["leaderboard", "--quiet", "--json", "--bootstrap", "0", "--metric", "TER", str(path)]
            )
    assert code == 0
    (dataset,) = json.loads(out.getvalue())["datasets"]
    assert dataset["flipped_pairs"]["TER"] == want
    listed = [f for f in dataset["flips"] if f["metric"] == "TER"]
    assert len(listed) == min(want, MAX_FLIPS)
    assert len(out.getvalue()) < 4000 * len(counts) + 20_000  # a fixed multiple of the systems


@pytest.mark.spec("HOSTILE-COUNT-COST", "CHAT-EXEC")
@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(
    names=st.lists(st.sampled_from("abcdefgh"), min_size=0, max_size=8, unique=True),
    required=st.lists(st.sampled_from("abcdefgh"), max_size=5, unique=True),
    arguments=st.dictionaries(
        st.sampled_from("abcdefghij"), st.sampled_from([1, "x", None, [1]]), max_size=6
    ),
)
def test_schema_checks_visit_the_call_and_agree_with_jsonschema(
    names: list[str], required: list[str], arguments: dict[str, object]
) -> None:
    # properties and required are checked from the call's side (a schema of 60,000 names cost
    # names x calls); the verdict and message are still jsonschema's own, keyword for keyword.
    import jsonschema

    from prefixexec.adapters.chat import semantics

    schema = {
        "type": "object",
        "properties": {n: {"type": "integer" if i % 2 else "string"} for i, n in enumerate(names)},
        "required": required,
    }
    ours = jsonschema.exceptions.best_match(semantics.compile_schema(schema).iter_errors(arguments))
    theirs = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(arguments))
    assert (ours and (ours.message, list(ours.path))) == (theirs and (theirs.message, list(theirs.path)))


@pytest.mark.spec("HOSTILE-COUNT-COST", "CHAT-EXEC")
def test_a_schema_of_many_names_is_ordered_once_for_every_call() -> None:
    # 20,000 names, 500 calls of two arguments each: the names' order is made once (for the
    # schema), and no call walks the 20,000 names (counted through the order's look-ups).
    from prefixexec.adapters.chat import semantics

    schema = {"type": "object", "properties": {f"p{i}": {"type": "integer"} for i in range(20_000)}}
    validator = semantics.compile_schema(schema)
    before = len(semantics._ORDERS)
    looked = 0
    real = semantics._order

    def counted(properties: dict[str, object]) -> dict[str, int]:
        nonlocal looked
        order = real(properties)
        looked += 1
        return order

    from unittest import mock

    with mock.patch.object(semantics, "_order", counted):
        for i in range(500):
            assert validator.is_valid({f"p{i}": i, f"p{i + 1}": "x"}) is False
    assert len(semantics._ORDERS) <= before + 1  # made at most once (compile_schema's probes may make it)
    assert sum(1 for held, _ in semantics._ORDERS.values() if len(held) == 20_000) == 1
    assert looked == 500  # one look-up per call, each of a dict of the call's own size


# Generators of issue 40's other classes: each case one error line and exit 2, or the answer.


@pytest.mark.spec("HOSTILE-FUZZ", "HOSTILE-BIGINT")
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    digits=st.integers(4_290, 6_000),
    surface=st.sampled_from(["select", "tau2", "split", "bfcl-data", "records", "chat"]),
)
def test_fuzzed_huge_integers_in_every_json_reader(digits: int, surface: str, tmp_path: Path) -> None:
    number = "9" * digits
    records = tmp_path / "r.jsonl"
    records.write_text(OUTCOME + "\n", encoding="utf-8")
    tasks = tmp_path / "domains" / "airline" / "tasks.json"
    tasks.parent.mkdir(parents=True, exist_ok=True)
    tasks.write_text(
        '[{"id": "1", "user_scenario": {}, "n": ' + (number if surface == "tau2" else "1") + "}]", "utf-8"
    )
    split = tasks.parent / "split_tasks.json"
    split.unlink(missing_ok=True)
    if surface == "split":
        split.write_text('{"base": ["1", ' + number + "]}", encoding="utf-8")
    files = {
        "select": ("ids.json", f"[{number}]"),
        "bfcl-data": ("BFCL_v4_multi_turn_base.json", '{"id": "multi_turn_base_0", "n": ' + number + "}\n"),
        "records": ("h.jsonl", OUTCOME.replace('"t"', number) + "\n"),
        "chat": ("c.jsonl", SEEDS["chat"][1].replace("{", '{"n": ' + number + ", ", 1)),
    }
    name, text = files.get(surface, ("unused", ""))
    (tmp_path / name).write_text(text, encoding="utf-8")
    argv = {
        "select": ["score", "--select", f"task_id=@{tmp_path / name}", str(records)],
        "tau2": ["sample", "--size", "1", str(tasks)],
        "split": ["sample", "--size", "1", str(tasks)],
        "bfcl-data": ["sample", "--size", "1", str(tmp_path / name)],
        "records": ["score", "--adapter", "records", str(tmp_path / name)],
        "chat": ["score", "--adapter", "chat", str(tmp_path / name)],
    }[surface]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    lines = err.getvalue().splitlines()
    if digits > 4300:
        assert code == 2 and out.getvalue() == "" and len(lines) == 1, err.getvalue()
        assert "more than 4300 digits" in lines[0]
    else:
        assert code in (0, 2) and "Traceback" not in err.getvalue()


@pytest.mark.spec("HOSTILE-FUZZ", "HOSTILE-DIGITS")
@settings(max_examples=EXAMPLES, deadline=None)
@given(text=st.text(alphabet=st.characters(whitelist_categories=("Nd", "No", "Nl")), min_size=1, max_size=4))
def test_fuzzed_unicode_digits_where_text_becomes_a_number(text: str) -> None:
    import tempfile

    head, first, *_ = (DATA / "paper_table2.csv").read_text(encoding="utf-8").split("\n")
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "t.csv"
        path.write_text(f"{head}\n{first.replace(',200,', f',{text},', 1)}\n", encoding="utf-8")
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["audit-table", str(path)])
    if text.isascii():
        assert code in (0, 1, 2)
    else:  # not 0-9: refused, naming the column
        assert code == 2 and "column N: not an integer" in err.getvalue() and out.getvalue() == ""


@pytest.mark.spec("HOSTILE-FUZZ", "HOSTILE-LINES", "HOSTILE-SHELL")
@settings(max_examples=EXAMPLES, deadline=None)
@given(
    ids=st.lists(
        st.text(
            alphabet=st.sampled_from(["a", "b", "\u2028", "\u0085", "\x0c", "\r", "\x0b", "\x1c", " "]),
            min_size=1,
            max_size=5,
        ).map(lambda s: "x" + s + "y"),
        min_size=1,
        max_size=5,
        unique=True,
    ),
    domain=st.text(alphabet=st.sampled_from(list("a$()`;'\"\\ |&<>*?~!#")), min_size=1, max_size=10),
)
def test_fuzzed_task_lists_and_runner_hints(ids: list[str], domain: str) -> None:
    import shlex

    # a task list's lines are its ids, whatever other line breaks they hold
    import tempfile

    from prefixexec import tasklists

    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "tasks.txt"
        path.write_text("".join(f"{i}\n" for i in ids), encoding="utf-8")
        assert sorted(tasklists.plain_list(str(path)).tasks) == sorted(ids)
    # a domain from the input comes back whole from the printed command, as one word
    listed = tasklists.TaskList({"1": frozenset({"s"})}, "t", "tau2", domain)
    hint = tasklists.runner_hint(listed, ["1"], None, "lines")
    assert hint is not None and shlex.split(hint)[3] == domain


@pytest.mark.spec("HOSTILE-FUZZ", "HOSTILE-ZIP-OVERLAP")
@settings(max_examples=max(5, EXAMPLES // 2), deadline=None)
@given(copies=st.integers(1, 50), data=st.data())
def test_fuzzed_overlapping_eval_members(copies: int, data: st.DataObject) -> None:
    import struct
    import tempfile
    import zipfile

    real = DATA / "inspect" / "tiny_tools.eval"
    raw = real.read_bytes()
    with zipfile.ZipFile(real) as archive:
        infos = archive.infolist()
    target = data.draw(st.sampled_from(infos))
    eocd = raw.rindex(b"PK\x05\x06")
    disk, cd_disk, here, total, size, offset = struct.unpack("<HHHHII", raw[eocd + 4 : eocd + 20])
    entry = struct.pack(
        "<4sHHHHHHIIIHHHHHII",
        b"PK\x01\x02",
        20,
        20,
        0,
        target.compress_type,
        0,
        0,
        target.CRC,
        target.compress_size,
        target.file_size,
        0,
        0,
        0,
        0,
        0,
        0,
        target.header_offset,
    )
    extra = b"".join(
        entry[:28] + struct.pack("<H", len(n)) + entry[30:] + n for n in (b"x%d" % i for i in range(copies))
    )
    # the extra entries' name-length field is written above; fields 28-30 hold it
    directory = raw[offset : offset + size] + extra
    tail = struct.pack(
        "<4sHHHHIIH", b"PK\x05\x06", disk, cd_disk, here + copies, total + copies, len(directory), offset, 0
    )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "log.eval"
        path.write_bytes(raw[:offset] + directory + tail)
        check_case(path, "inspect")
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["score", "--adapter", "inspect", "--bootstrap", "0", str(path)])
        assert code == 2 and ("HOSTILE-ZIP-OVERLAP" in err.getvalue()), err.getvalue()
