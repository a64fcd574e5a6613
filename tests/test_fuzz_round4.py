"""Fuzz campaign, round four (issue 40; spec HOSTILE-FUZZ, HOSTILE-ERROR, HOSTILE-GUARD-INPUT):
the formats added since round three, each from its real file with hostile edits.

* OTLP protobuf: one request (``genai.pb``), length-delimited (``genai-stream.pb``) and gzip
  compressed; bytes flipped, cut, huge varints and lengths spliced in, size prefixes changed;
* OTLP JSON: the pretty document mutated, and a huge one (its spans repeated);
* tau2 folders (``results.json`` beside ``simulations/``, the voice experiment of tests/data/real)
  with either file mutated, and bare lists of tau2 simulations (TAU-BARE-LIST);
* OpenAI fine-tuning JSONL (CHAT-FINETUNE, tau2's SFT file);
* the guard's JSON-RPC input on stdin (tests/test_guard_fuzz below): malformed JSON, huge lines,
  deep nesting, giant ids, unknown methods, wrong types.

Each reader case runs ``score`` in this process and must end with exit 0 and a result, or exit 2
and exactly one error line; the memory Python allocates (tracemalloc's peak) must stay within
a fixed multiple of the input's size plus a constant. No wall-clock bound: the work is bounded
by counts and memory (the guard's cases run in a subprocess, each answer awaited with a time
limit only so that a hang fails instead of blocking the suite).
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import re
import shutil
import socket
import struct
import tracemalloc
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_fuzz_hostile import EXAMPLES, mutated

from prefixexec.cli import main

from conftest import REAL, REPO

DATA = REPO / "tests" / "data"
OTLP = DATA / "traces-otlp"
VOICE = REAL / "tau2-voice" / "experiment"
TAU2_RUN = (
    REAL / "tau2" / "2025-10-13T11-33-36.494859_airline_llm_agent_grok-3-mini_user_simulator_grok-3-mini.json"
)
SFT = REAL / "tau2-sft" / "test_sft-v1-small.jsonl.zst"

#: HOSTILE-FUZZ's memory property: the peak Python allocates while reading and scoring an input
#: is at most this many times its size, plus MEMORY_BASE. The base covers what a run allocates
#: whatever its input: a document is read with one ``read(limit + 1)`` (HOSTILE-LINE's 64 MiB),
#: for which CPython allocates the asked size before shrinking it to what was read (pages never
#: touched, so not resident, but tracemalloc counts them), twice through gzip (measured: 67 MB
#: for a 24 KB protobuf request, 134 MB gzip-compressed).
MEMORY_PER_BYTE = 64
MEMORY_BASE = 160 * 2**20

FUZZ = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def input_size(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size


def check(path: Path, adapter: str, *extra: str) -> tuple[int, str]:
    """``score --json`` on ``path``: a result, or exit 2 with one error line; bounded memory."""
    out, err = io.StringIO(), io.StringIO()
    tracemalloc.start()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["score", "--json", "--bootstrap", "0", "--adapter", adapter, *extra, str(path)])
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    lines = [line for line in err.getvalue().splitlines() if not line.startswith("prefixexec: reading ")]
    assert code in (0, 2), err.getvalue()[-2000:]
    if code == 2:
        assert out.getvalue() == "", out.getvalue()[:200]
        assert len(lines) == 1 and lines[0].startswith("prefixexec: error: "), err.getvalue()[-2000:]
    else:
        assert json.loads(out.getvalue())["conditions"]
    assert peak <= MEMORY_PER_BYTE * input_size(path) + MEMORY_BASE, (peak, input_size(path))
    return code, err.getvalue()


# ------------------------------------------------------------------------------ protobuf


@st.composite
def mutated_bytes(draw: st.DrawFn, seed: bytes) -> bytes:
    """``seed`` after one to four hostile edits of its bytes."""
    data = bytearray(seed)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "cut", "varint", "length", "repeat", "splice"]))
        at = draw(st.integers(0, len(data)))
        if kind == "flip" and data:
            i = min(at, len(data) - 1)
            data[i] ^= draw(st.integers(1, 255))
        elif kind == "cut":
            del data[at : at + draw(st.integers(1, 64))]
        elif kind == "varint":  # a varint of 10 bytes (2^64 - 1) or an overlong one
            data[at:at] = draw(st.sampled_from([b"\xff" * 9 + b"\x01", b"\x80" * 12 + b"\x00", b"\xff" * 20]))
        elif kind == "length":  # a length-delimited field claiming 2 GiB, or a deep nest of them
            field = draw(st.integers(1, 15)) << 3 | 2
            body = draw(st.sampled_from([b"\xff\xff\xff\xff\x07", b"\x02" + bytes([field, 0]) * 1]))
            data[at:at] = bytes([field]) + body
        elif kind == "repeat":
            data += data[: draw(st.integers(1, 4096))]
        else:
            data[at:at] = draw(st.binary(max_size=32))
    return bytes(data)


@pytest.mark.spec("HOSTILE-FUZZ", "HOSTILE-ERROR", "TRACE-OTLP-PROTOBUF")
@FUZZ
@given(data=st.data(), form=st.sampled_from(["single", "stream", "single.gz", "stream.gz"]))
def test_fuzzed_otlp_protobuf(
    data: st.DataObject, form: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    seed = (OTLP / ("genai.pb" if form.startswith("single") else "genai-stream.pb")).read_bytes()
    body = data.draw(mutated_bytes(seed))
    if form.startswith("stream") and data.draw(st.booleans()):  # a size prefix changed
        sizes = [0, 1, 2**31 - 1, 2**32 - 1, len(body)]
        body = struct.pack(">I", data.draw(st.sampled_from(sizes))) + body[4:]
    name = "trace.pb"
    if form.endswith(".gz"):
        body = gzip.compress(body, mtime=0)
        if data.draw(st.booleans()):  # the compressed stream itself damaged
            cut = data.draw(st.integers(10, len(body)))
            body = body[:cut]
        name += ".gz"
    path = tmp_path_factory.mktemp("pb") / name
    path.write_bytes(body)
    check(path, "otel")


# ------------------------------------------------------------------------------ OTLP JSON


@pytest.mark.spec("HOSTILE-FUZZ", "TRACE-OTLP-DOCUMENT")
@FUZZ
@given(data=st.data())
def test_fuzzed_otlp_json_documents(data: st.DataObject, tmp_path_factory: pytest.TempPathFactory) -> None:
    seed = (OTLP / "genai-pretty.json").read_text(encoding="utf-8")
    path = tmp_path_factory.mktemp("otlp") / "trace.json"
    path.write_text(data.draw(mutated(seed)), encoding="utf-8")
    check(path, "otel")


@pytest.mark.spec("HOSTILE-FUZZ", "TRACE-OTLP-DOCUMENT")
@pytest.mark.parametrize("copies", [1, 40])
def test_a_huge_otlp_json_document_is_read_in_memory_bounded_by_its_size(copies: int, tmp_path: Path) -> None:
    document = json.loads((OTLP / "genai-pretty.json").read_text(encoding="utf-8"))
    base = json.dumps(document["resourceSpans"])
    spans: list[object] = []
    for n in range(copies):  # the same spans under new trace ids: more rollouts, not repeats
        spans += json.loads(re.sub(r'"traceId": "[0-9a-f]{4}', f'"traceId": "{n:04x}', base))
    document["resourceSpans"] = spans
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    assert check(path, "otel")[0] == 0  # 7 traces a copy, all read


# ------------------------------------------------------------------------------ tau2


def tau2_folder(root: Path) -> Path:
    """A tau2 run in tau2's folder form (DETECT-TAU2-DIR): the real airline run of tests/data/real
    split into ``results.json`` (its info and tasks) and ``simulations/<id>.json`` (its first
    three simulations). The real voice experiment has this form too, but its simulations keep
    ticks only and are not scored, so mutations of it reach only that error."""
    run = json.loads(TAU2_RUN.read_text(encoding="utf-8"))
    folder = root / "experiment"
    (folder / "simulations").mkdir(parents=True)
    head = {key: value for key, value in run.items() if key != "simulations"}
    (folder / "results.json").write_text(json.dumps(head), encoding="utf-8")
    for simulation in run["simulations"][:3]:
        (folder / "simulations" / f"{simulation['id']}.json").write_text(
            json.dumps(simulation), encoding="utf-8"
        )
    return folder


def voice_folder(root: Path) -> Path:
    """The real tau2 voice experiment (results.json + simulations/), its simulations decompressed."""
    folder = root / "voice"
    (folder / "simulations").mkdir(parents=True)
    shutil.copy(VOICE / "results.json", folder / "results.json")
    for sim in sorted((VOICE / "simulations").iterdir()):
        plain = zstandard.ZstdDecompressor().decompress(sim.read_bytes(), max_output_size=1 << 28)
        (folder / "simulations" / sim.name.removesuffix(".zst")).write_bytes(plain)
    return folder


@pytest.mark.spec("HOSTILE-FUZZ", "DETECT-TAU2-DIR")
@FUZZ
@given(data=st.data(), which=st.sampled_from(["results", "simulation", "voice results", "voice simulation"]))
def test_fuzzed_tau2_folders(
    data: st.DataObject, which: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = voice_folder(tmp_path_factory.mktemp("tau2"))
    target = (
        folder / "results.json"
        if which.endswith("results")
        else sorted((folder / "simulations").iterdir())[0]
    )
    target.write_text(data.draw(mutated(target.read_text(encoding="utf-8"))), encoding="utf-8")
    check(folder, "taubench")


#: TAU-BARE-LIST: the file name says the domain (<agent>_<domain>_<model>_<n>trial(s).json).
BARE_NAME = "llm_agent_airline_grok-3-mini_1trial.json"


def bare_list() -> str:
    """TAU-BARE-LIST: the first two simulations of a real tau2 run, as a bare list."""
    run = json.loads(TAU2_RUN.read_text(encoding="utf-8"))
    return json.dumps(run["simulations"][:2])


@pytest.mark.spec("HOSTILE-FUZZ", "TAU-BARE-LIST")
@FUZZ
@given(data=st.data())
def test_fuzzed_tau2_bare_lists(data: st.DataObject, tmp_path_factory: pytest.TempPathFactory) -> None:
    path = tmp_path_factory.mktemp("bare") / BARE_NAME
    path.write_text(data.draw(mutated(bare_list())), encoding="utf-8")
    check(path, "taubench", "--model", "m", "--method", "x")


# ------------------------------------------------------------------------------ fine-tuning


def sft_lines(n: int) -> str:
    text = zstandard.ZstdDecompressor().decompress(SFT.read_bytes(), max_output_size=1 << 28).decode()
    return "".join(line + "\n" for line in text.split("\n")[:n])


@pytest.mark.spec("HOSTILE-FUZZ", "CHAT-FINETUNE")
@FUZZ
@given(data=st.data())
def test_fuzzed_fine_tuning_lines(data: st.DataObject, tmp_path_factory: pytest.TempPathFactory) -> None:
    path = tmp_path_factory.mktemp("sft") / "train.jsonl"
    path.write_text(data.draw(mutated(sft_lines(2))), encoding="utf-8")
    check(path, "chat", "--model", "m", "--method", "x")


@pytest.mark.spec("HOSTILE-FUZZ")
def test_every_seed_unmutated_is_scored(tmp_path: Path) -> None:
    """The mutations start from valid input: every seed scores (exit 0)."""
    seeds = {
        "a.pb": ("otel", (OTLP / "genai.pb").read_bytes()),
        "b.pb": ("otel", (OTLP / "genai-stream.pb").read_bytes()),
        "c.pb.gz": ("otel", gzip.compress((OTLP / "genai.pb").read_bytes(), mtime=0)),
        "d.json": ("otel", (OTLP / "genai-pretty.json").read_bytes()),
        BARE_NAME: ("taubench", bare_list().encode()),
        "f.jsonl": ("chat", sft_lines(2).encode()),
    }
    for name, (adapter, body) in seeds.items():
        (tmp_path / name).write_bytes(body)
        extra = ("--model", "m", "--method", "x") if adapter != "otel" else ()
        assert check(tmp_path / name, adapter, *extra)[0] == 0, name
    assert check(tau2_folder(tmp_path), "taubench")[0] == 0
    assert check(voice_folder(tmp_path), "taubench")[0] == 2  # ticks only: one error line


# ------------------------------------------------------------------------------ the guard

#: (case, the line, how many answers the guard gives it). Requests and unreadable lines get one
#: answer each; ``unknown method`` is forwarded and answered by the server.
GUARD_CASES: list[tuple[str, bytes, int]] = [
    ("not JSON", b"not json", 1),
    ("cut short", b'{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "echo"', 1),
    ("invalid UTF-8", b'{"jsonrpc": "2.0", "id": 5, "method": "\xff\xfe"}', 1),
    ("deep nesting", b"[" * 100_000 + b"]" * 100_000, 1),
    ("a 20 MB line", b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":'
     b'{"text":"' + b"a" * (20 << 20) + b'"}}}', 1),
    ("a 20 MB line that is not JSON", b"{" + b"x" * (20 << 20), 1),
    ("a 5,000-digit id", b'{"jsonrpc":"2.0","id":' + b"7" * 5000 + b',"method":"tools/call","params":{}}', 1),
    ("an id of 1e400", b'{"jsonrpc":"2.0","id":1e400,"method":"tools/call","params":{"name":"nope"}}', 1),
    ("an id of NaN", b'{"jsonrpc":"2.0","id":NaN,"method":"tools/call","params":{"name":"nope"}}', 1),
    ("an id with a lone surrogate", b'{"jsonrpc":"2.0","id":"\\ud800","method":"tools/call","params":{}}', 1),
    ("an object id", b'{"jsonrpc":"2.0","id":{"a":[1]},"method":"tools/call","params":{"name":"nope"}}', 1),
    ("a batch with an id of -Infinity", b'[{"jsonrpc":"2.0","id":-Infinity,"method":"tools/call"}]', 1),
    ("unknown method", b'{"jsonrpc":"2.0","id":10,"method":"no/such"}', 1),
    ("params a list", b'{"jsonrpc":"2.0","id":11,"method":"tools/call","params":[1,2]}', 1),
    ("arguments a string",
     b'{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"echo","arguments":"x"}}', 1),
    ("a name of 1e400", b'{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":1e400}}', 1),
    ("a surrogate tool name",
     b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"\\udfff"}}', 1),
]  # fmt: skip


def strict_json(line: bytes) -> object:
    """A line read as strict JSON (no NaN or Infinity), in UTF-8."""

    def refuse(constant: str) -> object:
        raise ValueError(constant)

    return json.loads(line.decode("utf-8"), parse_constant=refuse)


@pytest.mark.spec("HOSTILE-GUARD-INPUT", "GUARD-PROXY", "HOSTILE-FUZZ")
def test_the_guard_answers_each_hostile_line_once_and_goes_on() -> None:
    from test_guard_mcp import FAULT_SERVER, GUARD, Raw, call

    client = Raw([*GUARD, "--", *FAULT_SERVER]).initialized()
    assert client.process.stdin is not None
    for n, (case, line, answers) in enumerate(GUARD_CASES):
        client.process.stdin.write(line + b"\n")
        client.process.stdin.flush()
        got = [strict_json(client.answer()) for _ in range(answers)]  # valid JSON, each of them
        assert all(isinstance(a, dict) and ("error" in a or "result" in a) for a in got), (case, got)
        probe = client.ask(call(f"probe-{n}", "echo", {"text": case}))  # the session goes on
        assert probe == {"jsonrpc": "2.0", "id": f"probe-{n}", "result": probe["result"]}, (case, probe)
        assert probe["result"]["content"][0]["text"] == case
    assert client.lines.empty()  # nothing more than one answer a line
    assert client.close() == 0


@pytest.mark.spec("HOSTILE-GUARD-INPUT", "HOSTILE-FUZZ")
@settings(max_examples=1, deadline=None)
@given(lines=st.lists(mutated(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                                          "params": {"name": "echo", "arguments": {"text": "x"}}})),
                      min_size=EXAMPLES, max_size=EXAMPLES))  # fmt: skip
def test_fuzzed_guard_lines_never_end_the_session(lines: list[str]) -> None:
    """Mutated calls, all in one session: every answer is strict JSON, the guard never stops, and
    a call after them is answered."""
    from test_guard_mcp import FAULT_SERVER, GUARD, Raw, call

    client = Raw([*GUARD, "--", *FAULT_SERVER]).initialized()
    assert client.process.stdin is not None
    for line in lines:
        client.process.stdin.write(line.replace("\n", " ").encode("utf-8", "surrogatepass") + b"\n")
    client.process.stdin.flush()
    client.send(call("last", "echo", {"text": "last"}))
    while True:  # answers of the mutated lines (their number depends on the mutations), then ours
        answer = strict_json(client.answer())
        if isinstance(answer, dict) and answer.get("id") == "last":
            break
    assert answer["result"]["content"][0]["text"] == "last"
    assert client.close() == 0


# ------------------------------------------------------------------------------ the guard's long lines


def proc_counter(pid: int, file: str, key: str) -> int:
    """A counter the kernel keeps for process ``pid`` (``/proc/PID/io``'s ``syscr``: read system
    calls; ``/proc/PID/status``'s ``VmHWM``: the peak resident memory, in kB)."""
    for row in Path(f"/proc/{pid}/{file}").read_text(encoding="ascii").splitlines():
        name, _, value = row.partition(":")
        if name == key:
            return int(value.split()[0])
    raise AssertionError(f"no {key} in /proc/{pid}/{file}")


def guard_session(*options: str) -> Any:
    """The stdio guard in front of the SDK's FastMCP server (tests/guard_fault_server.py), the
    session initialized."""
    from test_guard_mcp import FAULT_SERVER, GUARD, Raw

    return Raw([*GUARD, *options, "--", *FAULT_SERVER]).initialized()


@pytest.mark.spec("HOSTILE-GUARD-LINE", "GUARD-PROXY", "GUARD-FAULTS")
def test_a_41_mb_answer_passes_whole_and_the_next_call_is_answered() -> None:
    """Issue 40: a 20 MB ``echo`` call comes back from the server as a valid 41 MB answer (its
    text twice: content and structuredContent). Before the fix the guard read the server's
    unbuffered pipe one byte per system call (41 million ``read`` calls, 25 s on the test machine):
    the call and the one queued behind it outlived ``--timeout`` and got timeout errors. Counted,
    not timed: the guard's read system calls (``/proc/PID/io``) stay under 1,000,000 for the
    41 MB (in 64 KiB pieces: about 640, plus its start)."""
    from test_guard_mcp import call

    client = guard_session()
    text = "a" * (20 << 20)
    client.send(call(5, "echo", {"text": text}), call(6, "echo", {"text": "next"}))
    big = client.answer(timeout=120)
    assert len(big) > 40 << 20  # the server's answer, byte for byte: the text twice
    answer = strict_json(big)
    assert isinstance(answer, dict) and answer["id"] == 5
    assert answer["result"]["content"][0]["text"] == text
    assert answer["result"]["structuredContent"] == {"result": text}
    after = strict_json(client.answer(timeout=120))
    assert isinstance(after, dict) and after["id"] == 6
    assert after["result"]["content"][0]["text"] == "next"
    reads = proc_counter(client.process.pid, "io", "syscr")
    assert reads < 1_000_000, reads
    assert client.close() == 0


@pytest.mark.spec("HOSTILE-GUARD-LINE", "GUARD-FAULTS", "HOSTILE-GUARD-INPUT")
def test_lines_longer_than_the_bound_get_one_error_and_the_session_goes_on() -> None:
    """``--max-line-bytes 1048576``: a server answer of 1.2 MB (a 600 KB ``echo``) fails its call with
    one error naming the bound; a client line of 64 MB gets one invalid-request error (id null) and
    is not forwarded, and the guard's peak resident memory stays far below the line (the rest of a
    long line is skipped in pieces, never held); calls after each are answered."""
    from test_guard_mcp import call

    limit = 1 << 20
    client = guard_session("--max-line-bytes", str(limit))
    client.send(call(5, "echo", {"text": "b" * (600 << 10)}))  # 600 KB in, 1.2 MB out
    failed = strict_json(client.answer(timeout=120))
    assert isinstance(failed, dict) and failed["id"] == 5, failed
    assert failed["error"]["code"] == -32000
    assert f"the MCP server wrote a line longer than {limit} bytes" in failed["error"]["message"]
    assert client.ask(call(6, "echo", {"text": "after the server's"}))["result"]["content"][0]["text"] == (
        "after the server's"
    )
    assert client.process.stdin is not None
    huge = 64 << 20
    head = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"'
    client.process.stdin.write(head + b"c" * (huge - len(head) - 4) + b'"}}}\n')
    client.process.stdin.flush()
    refused = strict_json(client.answer(timeout=120))
    assert refused == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32600,
            "message": f"prefixexec guard: invalid request: a line longer than {limit} bytes "
            "(--max-line-bytes)",
        },
    }
    assert client.ask(call(8, "echo", {"text": "after the client's"}))["result"]["content"][0]["text"] == (
        "after the client's"
    )
    peak_kb = proc_counter(client.process.pid, "status", "VmHWM")
    assert peak_kb * 1024 < huge, peak_kb  # the 64 MB line was never held
    assert client.lines.empty()  # one answer each
    assert client.close() == 0


@pytest.mark.spec("HOSTILE-GUARD-LINE", "GUARD-HTTP")
@pytest.mark.parametrize("form", ["event stream", "json"])
def test_large_bodies_through_the_http_guard(form: str, tmp_path: Path) -> None:
    """The HTTP guard with the same large bodies: a 3.9 MB call (the SDK server's own bound is
    4 MB) comes back as an 8 MB answer, byte for byte as from the server alone, and a 20 MB call
    gets the server's own refusal (413) relayed; under ``--max-line-bytes 1048576`` a 1.2 MB answer
    is relayed whole and unchanged (one answer, no error added), its call recorded as failed with
    the reason; every next call is answered."""
    from test_guard_http import SERVER, Raw, Running, guard_of, listening

    log = tmp_path / "reached.jsonl"
    server = Running([*SERVER, str(log), *(["--json"] if form == "json" else [])], url_on_stderr=False)
    url = f"http://127.0.0.1:{server.first}/mcp"
    trace = tmp_path / "trace.jsonl"
    guard, small = guard_of(url), guard_of(url, "--max-line-bytes", str(1 << 20), "--trace", str(trace))
    alone, behind, bounded = Raw(url), Raw(listening(guard)), Raw(listening(small))
    try:
        for client in (alone, behind, bounded):
            client.connection.timeout = 120
            client.start()
        text = "a" * (3900 << 10)
        direct = alone.call(1, "echo", {"text": text})
        assert behind.call(1, "echo", {"text": text}) == direct and len(direct) > 2 * len(text)
        huge = {"name": "echo", "arguments": {"text": "a" * (20 << 20)}}
        status, _, _ = behind.post({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": huge})
        assert status == 413  # the server's, relayed
        assert b'"text":"next"' in behind.call(3, "echo", {"text": "next"})
        middle = "m" * (600 << 10)
        assert bounded.call(4, "echo", {"text": middle}) == alone.call(4, "echo", {"text": middle})
        assert b'"text":"after"' in bounded.call(5, "echo", {"text": "after"})
    finally:
        for client in (alone, behind, bounded):
            client.close()
        guard.stop()
        small.stop()
        server.stop()
    spans = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    said = json.dumps(spans)
    reason = f"the MCP server's answer is longer than {1 << 20} bytes (--max-line-bytes): relayed, not read"
    assert reason in said


# ------------------------------------------------------------------------------ the HTTP guard's input


def http_exchange(port: int, data: bytes, *, timeout: float = 30.0) -> bytes:
    """Send raw bytes to 127.0.0.1:port, half-close, and read everything the guard answers."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        got = b""
        while piece := sock.recv(1 << 16):
            got += piece
        return got


def http_request(path: str, body: bytes, *headers: str, length: str | None = None) -> bytes:
    head = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json",
            "Accept: application/json, text/event-stream", "Connection: close", *headers]  # fmt: skip
    head.append(f"Content-Length: {len(body) if length is None else length}")
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body  # as HTTP reads headers


def one_answer(raw: bytes) -> tuple[int, object]:
    """The status and JSON body (``None`` without one) of exactly one HTTP answer."""
    if not raw.startswith(b"HTTP/"):  # an answer to an HTTP/0.9 request: its body alone
        return 0, strict_json(raw)
    head, _, body = raw.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    assert raw.count(b"HTTP/1.") == 1, raw[:300]
    if not body:
        return status, None
    if b"text/event-stream" in head.lower():  # the server's event stream, relayed chunked
        (data,) = [line[5:].strip() for line in body.split(b"\n") if line.startswith(b"data:")]
        return status, strict_json(data)
    if b"transfer-encoding: chunked" in head.lower():
        size, _, rest = body.partition(b"\r\n")
        body = rest[: int(size, 16)]
    return status, strict_json(body)


def call_bytes(request_id: str, name: str = "list_orders", arguments: str = "{}") -> bytes:
    return (f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call",'
            f'"params":{{"name":"{name}","arguments":{arguments}}}}}').encode()  # fmt: skip


#: (case, the request's bytes after the path, the statuses allowed). Each gets one answer with
#: a strict-JSON body (or none), and a valid call is answered after it.
HTTP_CASES: list[tuple[str, Any, tuple[int, ...]]] = [
    ("Content-Length not a number", lambda p: http_request(p, b"{}", length="abc"), (400,)),
    ("Content-Length negative", lambda p: http_request(p, b"{}", length="-1"), (400,)),
    ("Content-Length of 30 digits", lambda p: http_request(p, b"{}", length="9" * 30), (413,)),
    ("Content-Length a superscript two", lambda p: http_request(p, b"{}", length="\u00b2"), (400,)),
    ("Content-Length twice", lambda p: http_request(p, b"{}", "Content-Length: 99"), (400,)),
    ("Content-Length longer than the body", lambda p: http_request(p, b"{}", length="50"), (400,)),
    ("a chunked body", lambda p: http_request(p, b"2\r\n{}\r\n0\r\n\r\n", "Transfer-Encoding: chunked"),
     (411,)),
    ("a header of 70,000 bytes", lambda p: http_request(p, b"{}", "X-Big: " + "x" * 70_000), (431,)),
    ("200 headers", lambda p: http_request(p, b"{}", *(f"X-{i}: {i}" for i in range(200))), (431,)),
    ("not JSON", lambda p: http_request(p, b"not json"), (400,)),
    ("invalid UTF-8", lambda p: http_request(p, b'{"id": "\xff\xfe"}'), (400,)),
    ("deep nesting", lambda p: http_request(p, b"[" * 100_000 + b"]" * 100_000), (400,)),
    ("a 5,000-digit id", lambda p: http_request(p, call_bytes("7" * 5000)), (400,)),
    ("an id of 1e400", lambda p: http_request(p, call_bytes("1e400")), (400,)),
    ("an id of NaN", lambda p: http_request(p, call_bytes("NaN")), (400,)),
    ("an id with a lone surrogate", lambda p: http_request(p, call_bytes('"\\ud800"')), (400,)),
    ("an object id", lambda p: http_request(p, call_bytes('{"a":[1]}')), (400,)),
    ("a blocked call with a huge id", lambda p: http_request(p, call_bytes("1" * 4000, "nope")), (200,)),
    ("a batch with a call", lambda p: http_request(p, b"[" + call_bytes("1") + b",1,null]"), (200,)),
    ("a batch with an id of -Infinity", lambda p: http_request(p, b"[" + call_bytes("-Infinity") + b"]"),
     (400,)),
    ("an empty batch", lambda p: http_request(p, b"[]"), (200, 400)),
    ("a request line of garbage", lambda p: b"\x00\xff GARBAGE\r\n\r\n", (0, 400)),  # read as HTTP/0.9
    ("HTTP/0.9", lambda p: f"GET {p}\r\n".encode(), (0, 400)),
]  # fmt: skip


@pytest.mark.spec("HOSTILE-GUARD-HTTP", "GUARD-HTTP", "HOSTILE-FUZZ")
def test_the_http_guard_answers_each_hostile_request_once_and_goes_on() -> None:
    """Malformed HTTP and JSON-RPC at the HTTP guard (in front of the SDK's FastMCP over
    streamable HTTP): each request gets exactly one answer with a strict-JSON body (or none),
    the guard never ends, and a valid call on a new connection is answered after each."""
    from test_guard_http import SERVER, Raw, Running, guard_of, listening

    server = Running([*SERVER, os.devnull, "--json"], url_on_stderr=False)
    guard = guard_of(f"http://127.0.0.1:{server.first}/mcp")
    url = urllib.parse.urlsplit(listening(guard))
    assert url.port is not None
    try:
        for case, make, statuses in HTTP_CASES:
            status, body = one_answer(http_exchange(url.port, make(url.path)))
            assert status in statuses, (case, status, body)
            if status == 200:
                assert isinstance(body, dict | list), (case, body)
            probe = Raw(listening(guard))
            probe.start()
            answer = json.loads(probe.call(1, "list_orders", {}))
            probe.close()
            assert answer["result"]["isError"] is False, (case, answer)
        assert guard.process.poll() is None
    finally:
        err = guard.stop()
        server.stop()
    assert "Traceback" not in err, err[-3000:]
    assert err == "prefixexec: terminated\n", err[-3000:]


@pytest.mark.spec("HOSTILE-GUARD-HTTP", "GUARD-HTTP")
def test_slow_and_partial_requests_do_not_block_other_clients() -> None:
    """Slowloris: 20 connections that send half a request line, half the headers, or a body
    shorter than its Content-Length and then wait; meanwhile a client on a new connection gets
    its answer, and the guard closes the idle connections after its --timeout (here 2 s)."""
    from test_guard_http import SERVER, Raw, Running, answer_of, guard_of, listening

    server = Running([*SERVER, os.devnull], url_on_stderr=False)
    guard = guard_of(f"http://127.0.0.1:{server.first}/mcp", "--timeout", "2")
    url = urllib.parse.urlsplit(listening(guard))
    assert url.port is not None
    partial = [b"POST /m", b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le",
               http_request(url.path, b'{"jsonrpc":', length="500")]  # fmt: skip
    slow = []
    try:
        for n in range(20):
            sock = socket.create_connection(("127.0.0.1", url.port), timeout=30)
            sock.sendall(partial[n % 3])
            slow.append(sock)
        probe = Raw(listening(guard))
        probe.start()
        assert answer_of(probe.call(1, "list_orders", {}))["result"]["isError"] is False
        probe.close()
        for sock in slow:  # each is closed by the guard (an answer or none, then end of stream)
            sock.settimeout(30)
            while sock.recv(1 << 16):
                pass
    finally:
        for sock in slow:
            sock.close()
        err = guard.stop()
        server.stop()
    assert "Traceback" not in err, err[-3000:]


# ------------------------------------------------------------------------------ tau2 submissions

#: A real tau2 leaderboard submission (submission.json and one trajectory file, zstd-compressed).
SUBMISSION = REAL / "tau2-submissions" / "gpt-oss-120b_openai_2025-11-26"


def tree(root: Path) -> set[str]:
    """Every path under ``root`` (links not followed), relative."""
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def check_leaderboard(root: Path, folder: Path, site: bool) -> tuple[int, str]:
    """``leaderboard FOLDER --json`` (and ``--site``): a document, or exit 2 with one error line and
    nothing written; the site's files only inside its folder; nothing else written under
    ``root``; memory bounded by the input's size."""
    out, err = io.StringIO(), io.StringIO()
    before = tree(root)
    target = root / "site"
    extra = ["--site", str(target)] if site else []
    tracemalloc.start()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["leaderboard", str(folder), "--json", "--bootstrap", "0", "--quiet", *extra])
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert code in (0, 2), err.getvalue()[-2000:]
    written = tree(root) - before
    if code == 2:
        assert out.getvalue() == "" and not written, (out.getvalue()[:200], written)
        lines = err.getvalue().splitlines()
        assert len(lines) == 1 and lines[0].startswith("prefixexec: error: "), err.getvalue()[-2000:]
    else:
        assert err.getvalue() == "", err.getvalue()[-2000:]
        assert json.loads(out.getvalue())["format"] == "prefixexec-leaderboard"
        assert all(w == "site" or w.startswith("site/") for w in written), written
        assert (target / "index.html").is_file() == site
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())
    assert peak <= MEMORY_PER_BYTE * size + MEMORY_BASE, (peak, size)
    return code, err.getvalue()


def submission_copy(root: Path) -> Path:
    folder = root / "submissions" / SUBMISSION.name
    shutil.copytree(SUBMISSION, folder)
    return folder


def edit_json(key_path: tuple[str, ...], value: object) -> Any:
    """A case that sets (``value`` not ``...``) or removes a key of submission.json."""

    def edit(folder: Path) -> None:
        doc = json.loads((folder / "submission.json").read_text(encoding="utf-8"))
        *parents, last = key_path
        node = doc
        for key in parents:
            node = node[key]
        if value is ...:
            del node[last]
        else:
            node[last] = value
        (folder / "submission.json").write_text(json.dumps(doc), encoding="utf-8")

    return edit


def replace_text(old: str, new: str) -> Any:
    def edit(folder: Path) -> None:
        path = folder / "submission.json"
        text = path.read_text(encoding="utf-8")
        assert old in text
        path.write_text(text.replace(old, new, 1), encoding="utf-8")

    return edit


def add_file(name: str, make: Any) -> Any:
    def edit(folder: Path) -> None:
        make(folder / "trajectories" / name)

    return edit


#: (case, edit of the copied submission, the exit status, what the error names). Statuses and
#: names from the rules: HOSTILE-BIGINT, HOSTILE-DEPTH, HOSTILE-TEXT, HOSTILE-FIFO, HOSTILE-LOOP,
#: HOSTILE-COMPRESSED, HOSTILE-SUBMISSION-LINK; LB-LISTED for trajectory_files.
SUBMISSION_CASES: list[tuple[str, Any, int, str]] = [
    ("a 5,000-digit integer", replace_text("38.0", "1" + "0" * 5000), 2, "more than 4300 digits"),
    ("a 5,000-digit decimal", replace_text("38.0", "0." + "3" * 5000), 0, ""),
    ("NaN", replace_text("38.0", "NaN"), 2, "NaN is not valid JSON"),
    ("1e400", replace_text("38.0", "1e400"), 2, "results.airline.pass_1"),
    ("a percentage of 101", replace_text("38.0", "101"), 2, "results.airline.pass_1"),
    ("a percentage as text", replace_text("38.0", '"38.0"'), 2, "results.airline.pass_1"),
    ("a percentage true", replace_text("38.0", "true"), 2, "results.airline.pass_1"),
    ("results a list", edit_json(("results",), [1]), 2, "'results'"),
    ("results absent", edit_json(("results",), ...), 2, "'results'"),
    ("a domain's results a string", edit_json(("results", "airline"), "38"), 2, "results.airline"),
    ("pass_k of 5,000 digits", edit_json(("results", "airline"), {"pass_" + "9" * 5000: 38}), 2,
     "pass_999999999"),
    ("pass_k in unicode digits", edit_json(("results",), {"airline": {"pass_\u0663": 38}}), 2, "no pass_k"),
    ("pass_0 only", edit_json(("results",), {"airline": {"pass_0": 38}}), 2, "no pass_k"),
    ("pass_999999999", edit_json(("results", "airline"), {"pass_999999999": 38}), 0, ""),
    ("model_name a number", edit_json(("model_name",), 5), 0, ""),
    ("model_name of 1 MB", edit_json(("model_name",), "x" * (1 << 20)), 0, ""),
    ("model_name with escapes", edit_json(("model_name",), "\x1b[31mred\u202e"), 0, ""),
    ("model_name a lone surrogate", replace_text('"gpt-oss-120b"', '"\\ud800"'), 2, "model_name"),
    ("submission_date an object", edit_json(("submission_date",), {"a": [1]}), 0, ""),
    ("nesting 50,000 deep", replace_text('"Nori"', "[" * 50_000 + "]" * 50_000), 2, "nested too deeply"),
    ("trajectory_files escaping the folder",
     edit_json(("trajectory_files",), {"airline": "../../../etc/passwd"}), 0, ""),
    ("trajectory_files absolute", edit_json(("trajectory_files",), {"airline": "/etc/passwd"}), 0, ""),
    ("trajectory_files a list", edit_json(("trajectory_files",), ["x"]), 0, ""),
    ("trajectories_available text", edit_json(("trajectories_available",), "yes"), 0, ""),
    ("a trajectory linking outside", add_file("evil.json", lambda p: p.symlink_to("/etc/passwd")), 2,
     "outside the submission's folder"),
    ("a trajectory linking to /dev/zero", add_file("zero.json", lambda p: p.symlink_to("/dev/zero")), 2,
     "outside the submission's folder"),
    ("trajectories/ linking outside", lambda f: (shutil.rmtree(f / "trajectories"),
     (f / "trajectories").symlink_to(f.parent.parent)), 2, "outside the submission's folder"),
    ("a link inside the folder",
     add_file("again.json", lambda p: p.symlink_to(p.parent.parent / "submission.json")),
     2, "again.json"),
    ("a link loop", add_file("loop.json", lambda p: p.symlink_to("loop.json")), 2, "loop.json"),
    ("a FIFO among the trajectories", add_file("pipe.json", os.mkfifo), 0, ""),
    ("submission.json a FIFO", lambda f: ((f / "submission.json").unlink(), os.mkfifo(f / "submission.json")),
     2, "named pipe"),
    ("a trajectory of 100 MB of spaces", add_file("huge.json", lambda p: p.write_bytes(
        b'{"simulations": [' + b" " * (100 << 20) + b"]}")), 2, "huge.json"),
    ("a gzip bomb (200 MB from 200 KB)", add_file("bomb.json.gz", lambda p: p.write_bytes(
        gzip.compress(b"[" + b" " * (200 << 20) + b"]", compresslevel=9, mtime=0))), 2, "bomb.json.gz"),
]  # fmt: skip


@pytest.mark.spec("HOSTILE-FUZZ", "HOSTILE-SUBMISSION-LINK", "HOSTILE-TEXT", "LB-FOLDER", "SITE-OVERWRITE")
@pytest.mark.parametrize("site", [False, True], ids=["json", "site"])
@pytest.mark.parametrize(
    ("case", "edit", "status", "names"), SUBMISSION_CASES, ids=[c[0] for c in SUBMISSION_CASES]
)
def test_hostile_submission_folders(
    case: str, edit: Any, status: int, names: str, site: bool, tmp_path: Path
) -> None:
    folder = submission_copy(tmp_path)
    edit(folder)
    code, err = check_leaderboard(tmp_path, folder.parent, site)
    assert code == status, err
    assert names in err


@pytest.mark.spec("HOSTILE-FUZZ", "LB-FOLDER", "SITE-OVERWRITE")
@FUZZ
@given(data=st.data(), site=st.booleans())
def test_fuzzed_submission_json(
    data: st.DataObject, site: bool, tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = tmp_path_factory.mktemp("submission")
    folder = submission_copy(root)
    path = folder / "submission.json"
    path.write_text(data.draw(mutated(path.read_text(encoding="utf-8"))), encoding="utf-8")
    check_leaderboard(root, folder.parent, site)


@pytest.mark.spec("HOSTILE-FUZZ", "LB-FOLDER")
def test_the_submission_seed_is_ranked(tmp_path: Path) -> None:
    """The mutations start from a valid submission: it is ranked, and its site written."""
    assert check_leaderboard(tmp_path, submission_copy(tmp_path).parent, True)[0] == 0


#: A valid call of the HTTP test server (tests/guard_http_server.py), the seed of the mutations.
CALL_SEED = {
    "jsonrpc": "2.0",
    "id": 3,
    "method": "tools/call",
    "params": {"name": "get_order", "arguments": {"order_id": "W1024"}},
}


@pytest.mark.spec("HOSTILE-GUARD-HTTP", "HOSTILE-GUARD-INPUT", "HOSTILE-FUZZ")
@settings(max_examples=1, deadline=None)
@given(bodies=st.lists(mutated(json.dumps(CALL_SEED)), min_size=EXAMPLES, max_size=EXAMPLES))
def test_fuzzed_http_bodies_get_one_answer_each(bodies: list[str]) -> None:
    """Mutated calls POSTed to the HTTP guard, each on its own connection: each gets exactly one
    HTTP answer whose body is strict JSON (the guard's or the server's) or empty, and the guard
    is still serving after them (a valid call is answered)."""
    from test_guard_http import SERVER, Raw, Running, guard_of, listening

    server = Running([*SERVER, os.devnull, "--json"], url_on_stderr=False)
    guard = guard_of(f"http://127.0.0.1:{server.first}/mcp")
    url = urllib.parse.urlsplit(listening(guard))
    assert url.port is not None
    try:
        probe = Raw(listening(guard))
        probe.start()  # a session, so that calls reach the tool checks
        session = f"Mcp-Session-Id: {probe.session}"
        for body in bodies:
            data = body.encode("utf-8", "surrogatepass")
            request = http_request(url.path, data, session, "MCP-Protocol-Version: 2025-06-18")
            status, _ = one_answer(http_exchange(url.port, request))
            assert 200 <= status < 600
        assert json.loads(probe.call(1, "list_orders", {}))["result"]["isError"] is False
        probe.close()
    finally:
        err = guard.stop()
        server.stop()
    assert err == "prefixexec: terminated\n", err[-3000:]


@pytest.mark.spec("SITE-OVERWRITE", "HOSTILE-OUTPUT-INPUT", "HOSTILE-FUZZ")
def test_a_hostile_earlier_site_makes_the_writer_touch_nothing_outside(tmp_path: Path) -> None:
    """An earlier site folder whose ``site.json`` lists names that leave the folder
    (``../victim.txt``, an absolute path, ``..``) and a file that is a link to a file outside:
    the new site is written, and nothing outside the folder is removed or changed."""
    folder = submission_copy(tmp_path)
    site = tmp_path / "site"
    site.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me", encoding="utf-8")
    (site / "old.html").symlink_to(victim)
    names = ["../victim.txt", str(victim), "..", ".", "old.html", "index.html"]
    manifest = {"format": "prefixexec-site", "version": 1, "files": names}
    (site / "site.json").write_text(json.dumps(manifest), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["leaderboard", str(folder.parent), "--bootstrap", "0", "--quiet", "--site", str(site)])
    assert code == 0, err.getvalue()
    assert victim.read_text(encoding="utf-8") == "keep me"
    assert (site / "old.html").is_symlink()  # a link is never removed through (nor written through)
    assert (site / "index.html").is_file() and not (site / "index.html").is_symlink()
    outside = {p for p in tree(tmp_path) if not p.startswith("site")}
    assert outside == {
        "victim.txt",
        "submissions",
        f"submissions/{folder.name}",
        *(f"submissions/{folder.name}/{p}" for p in tree(folder)),
    }


@pytest.mark.spec("HOSTILE-BIGINT", "HOSTILE-GUARD-LINE", "GUARD-PROXY")
def test_valid_json_with_a_5000_digit_integer_from_the_server_is_not_called_not_json() -> None:
    """The server writes a notification holding a 5,000-digit integer (valid JSON, beyond Python's
    4,300-digit conversion), then answers the call: the notification reaches the client byte for
    byte and the call gets its own answer. Before, the guard called the line "not JSON" and
    failed every open request (this call with an error; its real answer then dropped as late)."""
    from test_guard_mcp import call

    note = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":%s}}'
    line = note % ("9" * 5000)
    client = guard_session()
    client.send(call(5, "write", {"line": line}))
    assert client.answer() == line.encode() + b"\n"
    answer = json.loads(client.answer())
    assert answer["id"] == 5 and answer["result"]["content"][0]["text"] == "written", answer
    assert client.close() == 0


@pytest.mark.spec("HOSTILE-BIGINT", "GUARD-HTTP")
def test_the_http_guard_finds_an_answer_holding_a_5000_digit_integer() -> None:
    """The HTTP guard finds the call's answer in a body or event that holds a 5,000-digit integer
    (before, such a body read as no message: the answer went unrecorded and an error was added)."""
    from prefixexec.guard.http import _messages

    body = b'{"jsonrpc":"2.0","id":1,"result":{"content":[],"n":' + b"9" * 5000 + b"}}"
    (message,) = _messages(body)
    assert message["id"] == 1 and message["result"]["n"] == "9" * 5000
