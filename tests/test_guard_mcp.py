"""``prefixexec guard`` in front of real MCP servers, driven by the official ``mcp`` client.

Servers (pinned in the ``test`` extra; tests/run.sh installs the npm one): ``mcp-server-git``
and ``mcp-server-sqlite`` from PyPI, ``@modelcontextprotocol/server-filesystem`` from npm (run
with node), and tests/guard_fault_server.py (the SDK's FastMCP) for crashes, hangs and
garbage. Each server runs behind tests/guard_tee.py, which records every line that reached it:
the tests check that blocked calls never did, and check the server's own state (the repository,
the database, the folder). Expected verdicts are counted by hand from the calls each test makes.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult
from test_guard import explained

from conftest import REPO

BIN = Path(sys.executable).parent
GUARD = [sys.executable, "-m", "prefixexec", "guard"]
FAULT_SERVER = [sys.executable, str(REPO / "tests" / "guard_fault_server.py")]
#: The npm package and version of the filesystem server (tests/run.sh installs the same).
FILESYSTEM_PACKAGE = "@modelcontextprotocol/server-filesystem@2026.8.31"
NPM_FOLDER = Path(sys.prefix) / "guard-npm"
FILESYSTEM_SERVER = (
    NPM_FOLDER / "node_modules" / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"
)


def tee(record: Path, command: Sequence[str]) -> list[str]:
    return [sys.executable, str(REPO / "tests" / "guard_tee.py"), str(record), "--", *command]


def session(command: Sequence[str], calls: Sequence[tuple[str, dict[str, Any]]]) -> list[CallToolResult]:
    """One MCP session with the official client: initialize, then ``calls`` in order."""

    async def go() -> list[CallToolResult]:
        params = StdioServerParameters(command=command[0], args=list(command[1:]), env=dict(os.environ))
        with open(os.devnull, "w") as quiet:
            async with (
                stdio_client(params, errlog=quiet) as (read, write),
                ClientSession(read, write) as client,
            ):
                await client.initialize()
                return [await client.call_tool(name, arguments) for name, arguments in calls]

    return asyncio.run(go())


def text(result: CallToolResult) -> str:
    (content,) = result.content
    assert content.type == "text"
    return content.text


def reached(record: Path) -> list[tuple[str, dict[str, Any]]]:
    """The ``tools/call`` requests the server received (name, arguments), in order."""
    found = []
    for line in record.read_text(encoding="utf-8").splitlines():
        message = json.loads(line)
        if isinstance(message, dict) and message.get("method") == "tools/call":
            found.append((message["params"]["name"], message["params"].get("arguments", {})))
    return found




def first_failure(results: Sequence[CallToolResult]) -> tuple[int, str]:
    """From the client's side: the position of the first result with isError, and the label the
    guard's reason names (``RULE (label)``), or the server's text."""
    for position, result in enumerate(results, 1):
        if result.isError:
            said = text(result)
            label = said.split("(", 1)[1].split(")", 1)[0] if said.startswith("blocked by") else said
            return position, label
    return len(results) + 1, ""


def rules(tmp_path: Path, body: str) -> str:
    path = tmp_path / "guard.toml"
    path.write_text(body, encoding="utf-8")
    return str(path)


# ------------------------------------------------------------------------ mcp-server-git


def git(repo: Path, *words: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *words], capture_output=True, text=True, check=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    git(path, "config", "user.email", "guard@example.invalid")
    git(path, "config", "user.name", "guard test")
    (path / "a.txt").write_text("one\n", encoding="utf-8")
    git(path, "add", "a.txt")
    git(path, "commit", "-qm", "first")
    (path / "a.txt").write_text("two\n", encoding="utf-8")  # an unstaged change
    return path


@pytest.mark.spec("GUARD-PROXY", "GUARD-CHECKS", "GUARD-MODES", "GUARD-REQUIRES", "GUARD-PROVENANCE")
def test_git_server_blocked_calls_never_reach_it(tmp_path: Path, repo: Path) -> None:
    record, trace = tmp_path / "stdin.jsonl", tmp_path / "trace.jsonl"
    path = rules(
        tmp_path,
        '[[requires]]\ntool = "git_commit"\nafter = "git_add"\n'
        '[[provenance]]\ntool = "git_checkout"\nargument = "branch_name"\nvalues = "all"\n'
        '[[provenance]]\ntool = "git_show"\nargument = "revision"\nvalues = "all"\n',
    )
    r = str(repo)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("git_status", {"repo_path": r}),  # 1 ok
        ("git_commit", {"repo_path": r, "message": "too early"}),  # 2 blocked: requires git_add
        ("git_push", {"repo_path": r}),  # 3 blocked: unknown tool
        ("git_log", {"repo_path": r, "max_count": "ten"}),  # 4 blocked: schema
        ("git_checkout", {"repo_path": r, "branch_name": "feature-x"}),  # 5 blocked: invented branch
        ("git_add", {"repo_path": r, "files": ["a.txt"]}),  # 6 ok
        ("git_commit", {"repo_path": r, "message": "second"}),  # 7 ok
        ("git_log", {"repo_path": r, "max_count": 1}),  # 8 ok: names the new commit
        ("git_show", {"repo_path": r, "revision": "0123456789abcdef0123"}),  # 9 blocked: invented revision
    ]
    command = [
        *GUARD,
        "--trace",
        str(trace),
        "--rules",
        path,
        "--task",
        "git-1",
        "--",
        *tee(record, [str(BIN / "mcp-server-git")]),
    ]
    results = session(command, calls)
    blocked = [text(x) for x in results if x.isError]
    assert [x.isError for x in results] == [False, True, True, True, True, False, False, False, True]
    assert blocked[0].startswith("blocked by prefixexec guard: GUARD-REQUIRES (precondition): ")
    assert blocked[1].startswith("blocked by prefixexec guard: GUARD-TOOL (schema): unknown tool 'git_push'")
    assert (
        blocked[2].startswith("blocked by prefixexec guard: GUARD-SCHEMA (schema): ")
        and "max_count" in blocked[2]
    )
    assert blocked[3].startswith("blocked by prefixexec guard: GUARD-PROVENANCE (information): ")
    assert blocked[4].startswith("blocked by prefixexec guard: GUARD-PROVENANCE (information): ")
    # the server received exactly the forwarded calls
    assert reached(record) == [calls[i] for i in (0, 5, 6, 7)]
    # its state: one new commit ("second"), still on main, no branch feature-x
    assert git(repo, "log", "--format=%s").split() == ["second", "first"]
    assert git(repo, "branch", "--show-current").strip() == "main"
    assert "feature-x" not in git(repo, "branch", "--list")
    # a revision the log showed may be used afterwards
    head = git(repo, "rev-parse", "HEAD").strip()
    assert head in text(results[7])
    # the trace scores as the session went: the first failure is call 2, a precondition
    row = explained(trace)
    assert (row["T"], row["fed"], row["label"], row["task_id"]) == (9, *first_failure(results), "git-1")


@pytest.mark.spec("GUARD-MODES", "GUARD-TRACE-SAME")
def test_git_server_warn_mode_forwards_and_records(tmp_path: Path, repo: Path) -> None:
    record, trace = tmp_path / "stdin.jsonl", tmp_path / "trace.jsonl"
    r = str(repo)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("git_status", {"repo_path": r}),
        ("git_create_branch", {"repo_path": r, "branch_name": "b1", "base_branch_id": "X9"}),  # invented id
    ]
    command = [
        *GUARD,
        "--mode",
        "warn",
        "--trace",
        str(trace),
        "--",
        *tee(record, [str(BIN / "mcp-server-git")]),
    ]
    results = session(command, calls)
    assert reached(record) == calls  # forwarded, both
    assert "b1" in git(repo, "branch", "--list")  # the server ran it (it ignores the extra argument)
    assert not results[1].isError
    row = explained(trace)
    # recorded: the second call broke GUARD-PROVENANCE (information), by hand
    assert (row["T"], row["fed"], row["label"]) == (2, 2, "information")


def raw_lines(messages: Sequence[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(m).encode() + b"\n" for m in messages)


INITIALIZE = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]


class Raw:
    """A JSON-RPC client on a process's pipes, reading answers with a time limit."""

    def __init__(self, command: Sequence[str], stderr: IO[bytes] | int = subprocess.DEVNULL) -> None:
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in iter(self.process.stdout.readline, b""):
            self.lines.put(line)

    def send(self, *messages: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(raw_lines(messages))
        self.process.stdin.flush()

    def answer(self, timeout: float = 30.0) -> bytes:
        return self.lines.get(timeout=timeout)

    def initialized(self) -> Raw:
        """This client after the session's opening (INITIALIZE), each answer read."""
        for message in INITIALIZE:
            self.send(message)
            if "id" in message:
                self.answer()
        return self

    def ask(self, message: dict[str, Any], timeout: float = 30.0) -> dict[str, Any]:
        self.send(message)
        found: dict[str, Any] = json.loads(self.answer(timeout))
        return found

    def close(self, timeout: float = 30.0) -> int:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        status = self.process.wait(timeout)
        self.reader.join(timeout)
        self.process.stdout.close()
        return status


def transcript(command: Sequence[str], messages: Sequence[dict[str, Any]]) -> list[bytes]:
    """Every line a server (or the guard) answers to ``messages``, one answer per request, in order."""
    client = Raw(command)
    out = []
    for message in messages:
        client.send(message)
        if "id" in message:
            out.append(client.answer())
    client.close()
    return out


def call(n: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": n,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


@pytest.mark.spec("GUARD-PROXY")
def test_valid_calls_answer_byte_for_byte_as_without_the_guard(tmp_path: Path, repo: Path) -> None:
    r = str(repo)
    git_messages = [
        *INITIALIZE,
        call(3, "git_status", {"repo_path": r}),
        call(4, "git_log", {"repo_path": r}),
        call(5, "git_diff_unstaged", {"repo_path": r}),
    ]
    server = [str(BIN / "mcp-server-git")]
    direct = transcript(server, git_messages)
    guarded = transcript([*GUARD, "--trace", str(tmp_path / "t.jsonl"), "--", *server], git_messages)
    assert guarded == direct and len(direct) == 5 and b"two" in direct[-1]
    sql = [
        *INITIALIZE,
        call(3, "create_table", {"query": "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)"}),
        call(4, "write_query", {"query": "INSERT INTO t (v) VALUES ('x')"}),
        call(5, "read_query", {"query": "SELECT * FROM t"}),
    ]
    direct = transcript([str(BIN / "mcp-server-sqlite"), "--db-path", str(tmp_path / "a.db")], sql)
    guarded = transcript(
        [*GUARD, "--", str(BIN / "mcp-server-sqlite"), "--db-path", str(tmp_path / "b.db")], sql
    )
    assert guarded == direct and len(direct) == 5 and b"'x'" in direct[-1]


# ------------------------------------------------------------------------ mcp-server-sqlite


@pytest.mark.spec("GUARD-PROXY", "GUARD-CHECKS", "GUARD-ARGUMENT", "GUARD-TRACE-SAME")
def test_sqlite_server_blocked_calls_never_reach_it(tmp_path: Path) -> None:
    record, trace, db = tmp_path / "stdin.jsonl", tmp_path / "trace.jsonl", tmp_path / "shop.db"
    path = rules(
        tmp_path,
        '[[requires]]\ntool = "write_query"\nafter = "create_table"\n'
        '[[argument]]\ntool = "write_query"\nargument = "query"\n'
        'pattern = "(?i)^\\\\s*(insert|update)\\\\b"\n'
        '[[provenance]]\ntool = "describe_table"\nargument = "table_name"\nvalues = "all"\n',
    )
    calls: list[tuple[str, dict[str, Any]]] = [
        ("list_tables", {}),  # 1 ok
        (
            "write_query",
            {"query": "INSERT INTO items (name) VALUES ('a')"},
        ),  # 2 blocked: requires create_table
        ("create_table", {"query": "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT)"}),  # 3 ok
        ("write_query", {"query": "INSERT INTO items (name) VALUES ('a')"}),  # 4 ok
        ("write_query", {"query": "DROP TABLE items"}),  # 5 blocked: argument rule
        ("describe_table", {"table_name": "ghost"}),  # 6 blocked: never occurred
        ("list_tables", {}),  # 7 ok: names items
        ("describe_table", {"table_name": "items"}),  # 8 ok
        ("read_query", {}),  # 9 blocked: schema (query required)
        ("drop_everything", {}),  # 10 blocked: unknown tool (the server itself says isError false)
    ]
    command = [
        *GUARD,
        "--trace",
        str(trace),
        "--rules",
        path,
        "--",
        *tee(record, [str(BIN / "mcp-server-sqlite"), "--db-path", str(db)]),
    ]
    results = session(command, calls)
    assert [x.isError for x in results] == [False, True, False, False, True, True, False, False, True, True]
    labels = [text(x).split(": ")[1] for x in results if x.isError]
    assert labels == [
        "GUARD-REQUIRES (precondition)",
        "GUARD-ARGUMENT (precondition)",
        "GUARD-PROVENANCE (information)",
        "GUARD-SCHEMA (schema)",
        "GUARD-TOOL (schema)",
    ]
    assert reached(record) == [calls[i] for i in (0, 2, 3, 6, 7)]
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT name FROM items").fetchall() == [("a",)]  # not dropped
    row = explained(trace)
    assert (row["T"], row["fed"], row["label"]) == (10, *first_failure(results))


# ------------------------------------------------------------------------ the npm filesystem server


@pytest.fixture(scope="session")
def filesystem_server() -> Path:
    """The npm server, installed by tests/run.sh into the test environment (installed here too
    when missing: npm from the registry)."""
    if not FILESYSTEM_SERVER.is_file():
        NPM_FOLDER.mkdir(exist_ok=True)
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(NPM_FOLDER), FILESYSTEM_PACKAGE],
            check=True,
            capture_output=True,
        )
    return FILESYSTEM_SERVER


@pytest.mark.spec("GUARD-PROXY", "GUARD-CHECKS", "GUARD-ARGUMENT")
def test_filesystem_server_from_npm(tmp_path: Path, filesystem_server: Path) -> None:
    folder, record, trace = tmp_path / "files", tmp_path / "stdin.jsonl", tmp_path / "trace.jsonl"
    folder.mkdir()
    (folder / "notes.txt").write_text("hello\n", encoding="utf-8")
    path = rules(tmp_path, '[[argument]]\ntool = "write_file"\nargument = "path"\npattern = "\\\\.txt$"\n')
    calls: list[tuple[str, dict[str, Any]]] = [
        ("list_directory", {"path": str(folder)}),  # 1 ok
        ("write_file", {"path": str(folder / "ok.txt"), "content": "fine"}),  # 2 ok
        ("write_file", {"path": str(folder / "run.sh"), "content": "rm -rf /"}),  # 3 blocked: argument rule
        ("write_file", {"path": str(folder / "no-content.txt")}),  # 4 blocked: schema
        ("delete_file", {"path": str(folder / "notes.txt")}),  # 5 blocked: unknown tool
        ("read_text_file", {"path": str(folder / "ok.txt")}),  # 6 ok
    ]
    command = [
        *GUARD,
        "--trace",
        str(trace),
        "--rules",
        path,
        "--",
        *tee(record, ["node", str(filesystem_server), str(folder)]),
    ]
    results = session(command, calls)
    assert [x.isError for x in results] == [False, False, True, True, True, False]
    assert text(results[5]) == "fine"
    assert reached(record) == [calls[i] for i in (0, 1, 5)]
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt", "ok.txt"]
    row = explained(trace)
    assert (row["T"], row["fed"], row["label"]) == (6, 3, "precondition")


# ------------------------------------------------------------------------ faults


def fault_guard(tmp_path: Path, *options: str) -> tuple[Raw, Path]:
    trace = tmp_path / "trace.jsonl"
    client = Raw([*GUARD, "--trace", str(trace), *options, "--", *FAULT_SERVER]).initialized()
    return client, trace


def tool_spans(trace: Path) -> list[dict[str, Any]]:
    spans = [
        s
        for line in trace.read_text(encoding="utf-8").splitlines()
        for s in json.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    ]
    return [s for s in spans if s["name"].startswith("tools/call ")]


def status_message(span: dict[str, Any]) -> str:
    message: str = span.get("status", {}).get("message", "")
    return message


@pytest.mark.spec("GUARD-FAULTS")
def test_a_server_that_crashes(tmp_path: Path) -> None:
    client, trace = fault_guard(tmp_path)
    assert client.ask(call(3, "echo", {"text": "hi"}))["result"]["content"][0]["text"] == "hi"
    crashed = client.ask(call(4, "crash", {}))
    assert crashed["id"] == 4 and "exited with status 3" in crashed["error"]["message"]
    later = client.ask(call(5, "echo", {"text": "again"}))  # answered at once, not hung
    assert later["id"] == 5 and "gone" in later["error"]["message"]
    assert client.lines.empty()  # one error per request, nothing more
    assert client.close() == 1
    spans = tool_spans(trace)
    assert [s["name"] for s in spans] == ["tools/call echo", "tools/call crash", "tools/call echo"]
    assert "exited with status 3" in status_message(spans[1])
    row = explained(trace)
    assert (row["T"], row["fed"]) == (3, 2)


@pytest.mark.spec("GUARD-FAULTS")
def test_a_server_that_hangs_times_out_and_the_session_goes_on(tmp_path: Path) -> None:
    client, trace = fault_guard(tmp_path, "--timeout", "1")
    started = time.monotonic()
    hung = client.ask(call(3, "hang", {}))
    assert hung["id"] == 3 and "did not answer within 1 s" in hung["error"]["message"]
    assert time.monotonic() - started < 10
    assert client.ask(call(4, "echo", {"text": "still here"}))["result"]["content"][0]["text"] == "still here"
    assert client.close() == 0
    spans = tool_spans(trace)
    assert len(spans) == 2 and "timeout" in status_message(spans[0])
    row = explained(trace)
    # "timeout" is a state_consistency word (CHAT-LABELS)
    assert (row["T"], row["fed"], row["label"]) == (2, 1, "state_consistency")


@pytest.mark.spec("GUARD-FAULTS")
def test_a_server_that_writes_garbage(tmp_path: Path) -> None:
    client, trace = fault_guard(tmp_path)
    garbled = client.ask(call(3, "garbage", {}))
    assert garbled["id"] == 3 and "not JSON-RPC: this is not JSON-RPC" in garbled["error"]["message"]
    assert client.ask(call(4, "echo", {"text": "ok"}))["result"]["content"][0]["text"] == "ok"
    assert client.close() == 0
    spans = tool_spans(trace)
    assert [s["name"] for s in spans] == ["tools/call garbage", "tools/call echo"]
    assert "not JSON-RPC" in status_message(spans[0])


@pytest.mark.spec("GUARD-FAULTS", "GUARD-PROXY", "GUARD-PROVENANCE")
def test_a_client_that_disconnects(tmp_path: Path) -> None:
    client, trace = fault_guard(tmp_path, "--timeout", "0")
    client.send({"jsonrpc": "2.0", "method": "prefixexec/context", "params": {"text": "ticket T-42"}})
    seen = client.ask(call(3, "echo", {"text": "a", "ticket_id": "T-42"}))  # occurred in the context
    assert seen["result"]["content"][0]["text"] == "a"
    invented = client.ask(call(4, "echo", {"text": "b", "ticket_id": "T-99"}))
    assert (
        invented["result"]["isError"] is True
        and "GUARD-PROVENANCE" in invented["result"]["content"][0]["text"]
    )
    client.send(call(5, "hang", {}))
    time.sleep(0.5)  # the call reaches the server
    started = time.monotonic()
    assert client.close(timeout=30) == 0
    assert time.monotonic() - started < 15  # the grace period, then the server is stopped
    spans = tool_spans(trace)
    assert [s["name"] for s in spans] == ["tools/call echo", "tools/call echo", "tools/call hang"]
    assert "client disconnected" in status_message(spans[2])
    row = explained(trace)
    assert (row["T"], row["fed"], row["label"]) == (3, 2, "information")


@pytest.mark.spec("GUARD-PROXY")
def test_the_test_command_installs_the_npm_server_these_tests_run() -> None:
    script = (REPO / "tests" / "run.sh").read_text(encoding="utf-8")
    assert f'guard_npm_package="{FILESYSTEM_PACKAGE}"' in script
    assert '"$venv/guard-npm/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"' in script


@pytest.mark.spec("GUARD-API", "GUARD-TRACE-SAME")
def test_the_agent_loop_example_runs_against_the_real_server(tmp_path: Path) -> None:
    db, trace = tmp_path / "notes.db", tmp_path / "trace.jsonl"
    done = subprocess.run(
        [sys.executable, str(REPO / "examples" / "guard_mcp_loop.py"), str(db), str(trace)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"},
    )
    lines = done.stdout.splitlines()
    # the example's plan, by hand: the first write comes before create_table; "todo" was never seen
    assert [line.split(":")[0] for line in lines[:5]] == [
        "write_query", "create_table", "write_query", "describe_table", "describe_table",
    ]  # fmt: skip
    assert "GUARD-REQUIRES (precondition)" in lines[0] and "GUARD-PROVENANCE (information)" in lines[3]
    assert lines[5] == "T = 5, FED = 1, label = precondition"
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT body FROM notes").fetchall() == [("hi",)]
    row = explained(trace)
    assert (row["T"], row["fed"], row["label"]) == (5, 1, "precondition")


@pytest.mark.spec("GUARD-PROXY")
def test_a_line_the_guard_cannot_read_is_refused_not_forwarded(tmp_path: Path) -> None:
    record = tmp_path / "stdin.jsonl"
    client = Raw([*GUARD, "--", *tee(record, FAULT_SERVER)]).initialized()
    deep = b'{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo", "arguments": ' + (
        b'{"text": "x", "a": ' + b"[" * 200_000 + b"]" * 200_000 + b"}}}\n"
    )
    assert client.process.stdin is not None
    client.process.stdin.write(deep + b"not json\n")
    client.process.stdin.flush()
    for _ in range(2):
        refused = json.loads(client.answer())
        assert refused["id"] is None and refused["error"]["code"] == -32700
    assert client.ask(call(4, "echo", {"text": "after"}))["result"]["content"][0]["text"] == "after"
    assert client.close() == 0
    assert reached(record) == [("echo", {"text": "after"})]
