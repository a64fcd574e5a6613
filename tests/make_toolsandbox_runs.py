"""Make the ToolSandbox runs in tests/data/toolsandbox-real/ (run by hand; the test suite never imports it).

The committed run folders are what the tests read; this script is how they were made, so that
anyone can re-create them. It runs ToolSandbox's own command line (``tool_sandbox.cli:main``, the
``tool_sandbox`` script) three times, with roles that need no model service:

* ``--agent Hermes --user Cli``: ToolSandbox's Hermes agent sends its prompts to an
  OpenAI-compatible ``/v1/completions`` endpoint (``OPENAI_BASE_URL``). This script serves that
  endpoint itself, on 127.0.0.1 only, and answers from a script per scenario (:data:`HERMES`):
  the scripted replies contain ``<tool_call>`` blocks the agent turns into tool calls, chosen so
  that the runs hold successes, every failure family the adapter labels, recovery after a
  failure, parallel calls, an unknown tool, and scenarios that end without a call.
* ``--agent Unhelpful --user Cli``: ToolSandbox's agent that never calls a tool.
* ``--agent Cli --user Cli``: ToolSandbox's interactive agent, typed on stdin (its calls carry no
  tool call ids and are recorded as ``print(repr(tool(...)))``).

The ``Cli`` user (and the ``Cli`` agent) read stdin; the script watches ToolSandbox's stdout for
their prompts and answers from the scenario's script (the user ends the conversation with
``end`` unless the script says otherwise). Scenarios run one after another (``-p 1``).

Usage, with ToolSandbox installed in its own virtual environment (it pins old versions of about
thirty packages, among them ``openai==1.17.0``, which fails with httpx 0.28 or later, so httpx is
pinned below 0.28; nothing here needs more than the standard library)::

    git clone <apple/ToolSandbox> $TSB/ToolSandbox    # any checkout of ToolSandbox, in any folder $TSB
    python3.11 -m venv $TSB/venv && $TSB/venv/bin/pip install $TSB/ToolSandbox "httpx<0.28"
    python3 tests/make_toolsandbox_runs.py $TSB/ToolSandbox --python $TSB/venv/bin/python

It replaces the run folders in tests/data/toolsandbox-real/ with the three ToolSandbox wrote
(dropping only ``pretty_print.txt``, a text rendering the adapter does not read) and writes
``server.log`` (the scripted agent's turns); SOURCE.md there is kept (it is written by hand).
Nothing network-facing is used except the loopback server, which answers at most
:data:`MAX_REQUESTS` requests and stops with the script; each ToolSandbox run is killed after
:data:`RUN_TIMEOUT` seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "data" / "toolsandbox-real"
MAX_REQUESTS = 400
RUN_TIMEOUT = 900.0

# A scripted Hermes step: a list of tool calls ``(name, arguments)`` (several: parallel calls),
# or a text reply to the user. ``arguments`` may be a function of the prompt so far (to use an id
# a previous tool returned).
Call = tuple[str, "dict[str, Any] | Callable[[str], dict[str, Any]]"]
Step = "list[Call] | str"

FREDRIK = "+12453344098"
ALBUM = "How's the new album coming along"
USD_2048 = {"amount": 2048, "from_currency_code": "USD"}
NAN = float("nan")


def _person_id(prompt: str) -> str:
    """The person_id in the last search_contacts reply of the prompt."""
    found = re.findall(r"person_id'?\\?\"?: '?\\?\"?([0-9a-f]{8}-[0-9a-f-]{27})", prompt)
    if not found:
        raise RuntimeError("scripted agent: no person_id in the prompt")
    return str(found[-1])


# Scenario name -> its first user message (to recognise it) and the scripted agent's steps.
# Step k answers the k-th agent turn of the scenario. "repeat" is used for every later turn.
HERMES: dict[str, dict[str, Any]] = {
    # Success after a precondition failure: the message cannot be sent with cellular off; the agent
    # turns cellular on and sends it again (recovery).
    "send_message_with_contact_content_cellular_off": {
        "steps": [
            [("search_contacts", {"name": "Fredrik Thordendal"})],
            [("send_message_with_phone_number", {"phone_number": FREDRIK, "content": ALBUM})],
            [("set_cellular_service_status", {"on": True})],
            [("send_message_with_phone_number", {"phone_number": FREDRIK, "content": ALBUM})],
            "Your message has been sent to Fredrik Thordendal.",
        ],
    },
    # A missing entity (dependency): a phone number passed as person_id; then search and remove.
    "remove_contact_by_phone": {
        "steps": [
            [("remove_contact", {"person_id": FREDRIK})],
            [("search_contacts", {"phone_number": FREDRIK})],
            [("remove_contact", lambda prompt: {"person_id": _person_id(prompt)})],
            "The contact with phone number +12453344098 has been removed.",
        ],
    },
    # Wrong argument type (schema, ToolSandbox's validate_type TypeError), then the right call.
    "wifi_off": {
        "steps": [
            [("set_wifi_status", {"on": "off"})],
            [("set_wifi_status", {"on": False})],
            "Wifi is turned off",
        ],
    },
    # A tool that is not allowed: ToolSandbox raises KeyError and aborts the scenario.
    "cellular_off": {"steps": [[("disable_cellular_service", {})]]},
    # Parallel calls: in the given order both succeed, in the reversed order set_wifi_status runs
    # while low battery mode is still on and fails (precondition), so ToolSandbox returns the
    # replies of the reversed order. Then the agent turns wifi on (recovery).
    "turn_on_wifi_low_battery_mode": {
        "steps": [
            [("set_low_battery_mode_status", {"on": False}), ("set_wifi_status", {"on": True})],
            [("set_wifi_status", {"on": True})],
            "Wifi is turned on.",
        ],
    },
    # State consistency: low battery mode is turned off twice.
    "turn_on_cellular_low_battery_mode": {
        "steps": [
            [("set_low_battery_mode_status", {"on": False})],
            [("set_low_battery_mode_status", {"on": False})],
            "Low battery mode is off.",
        ],
    },
    # A validator (schema): a name where a phone number belongs (NumberParseException), then the
    # right call.
    "send_message_with_phone_number_and_content": {
        "steps": [
            [("send_message_with_phone_number", {"phone_number": "Fredrik", "content": ALBUM})],
            [("send_message_with_phone_number", {"phone_number": FREDRIK, "content": ALBUM})],
            "Message sent.",
        ],
    },
    # An unknown keyword argument (schema, TypeError), then the right call.
    "search_phone_number_with_name": {
        "steps": [
            [("search_contacts", {"full_name": "Homer S"})],
            [("search_contacts", {"name": "Homer S"})],
            "Homer S's phone number is +10000000000.",
        ],
    },
    # NaN in the model's JSON arguments: ToolSandbox writes ``{'verbose': nan}`` into the call's
    # code, which fails with NameError (schema) and is not a literal for the adapter.
    "get_cellular": {
        "steps": [
            [("get_cellular_service_status", {"verbose": NAN})],
            [("get_cellular_service_status", {})],
            "Cellular service is on",
        ],
    },
    # Only calls that succeed.
    "search_name_with_relationship": {
        "steps": [[("search_contacts", {"relationship": "boss"})], "Your boss is Homer S."],
    },
    # Several user turns: the agent asks, the user answers, the agent searches and removes.
    "remove_contact_by_phone_multiple_user_turn": {
        "steps": [
            "Who do you want to delete?",
            [("search_contacts", {"phone_number": FREDRIK})],
            [("remove_contact", lambda prompt: {"person_id": _person_id(prompt)})],
            "Done, the contact is removed.",
        ],
        "user": [FREDRIK, "end"],
    },
    # No call where none is possible (INSUFFICIENT_INFORMATION): the right behaviour.
    "find_current_city_insufficient_information": {
        "steps": ["I cannot find out which city you are in with the tools I have."],
    },
    # No call where one is needed.
    "get_wifi": {"steps": ["I think your wifi is on."]},
    # The agent keeps calling until ToolSandbox's message limit (30 messages after the scenario's
    # first) stops the scenario: 14 single calls and their replies, then two parallel calls that
    # are never answered.
    "search_relationship_with_phone_number": {
        "steps": [[("search_contacts", {"phone_number": "+10000000000"})]] * 14
        + [[("search_contacts", {"phone_number": "+10000000000"}), ("search_contacts", {"name": "Homer S"})]],
    },
    # An argument value that reappears in the error message: ToolSandbox's currency validator
    # says "<code> is not a known 3 letter ISO 4217 currency code"; the value "not found" must not
    # make it a dependency failure (LABEL-MASK). The valid call then fails because the run has no
    # RAPID_API_KEY (PermissionError, precondition): no network is used.
    "convert_currency": {
        "steps": [
            [("convert_currency", {**USD_2048, "to_currency_code": "not found"})],
            [("convert_currency", {**USD_2048, "to_currency_code": "CNY"})],
            "I cannot convert currencies right now.",
        ],
    },
}

UNHELPFUL = ["find_current_location_insufficient_information", "get_wifi"]

# The Cli agent's typed input per scenario: "tool" then the call, or a text reply.
CLI_AGENT: dict[str, list[str]] = {
    "cellular_off": [
        "tool",
        "set_cellular_service_status(on='off')",
        "tool",
        "set_cellular_service_status(on=False)",
        "Cellular service is turned off",
    ],
    "get_wifi": ["tool", "get_wifi_status()", "Wifi is on"],
}


# ---------------------------------------------------------------------------------------------
# The scripted OpenAI-compatible completions server (loopback only, bounded)


def _messages(prompt: str) -> list[tuple[str, str]]:
    return re.findall(r"<\|im_start\|>(\w+)\n(.*?)<\|im_end\|>", prompt, flags=re.S)


class Script:
    """Picks the scripted reply for a Hermes prompt: scenario by first user message, step by turn."""

    def __init__(self, first_messages: dict[str, str]) -> None:
        self.by_first = {text: name for name, text in first_messages.items()}
        self.requests = 0
        self.log: list[str] = []
        self.lock = threading.Lock()

    def reply(self, prompt: str) -> str:
        messages = _messages(prompt)
        users = [content for role, content in messages if role == "user"]
        if not users or users[0] not in self.by_first:
            raise RuntimeError(f"scripted agent: unknown scenario, first user message {users[:1]!r}")
        name = self.by_first[users[0]]
        turn = sum(1 for role, _ in messages if role == "assistant")
        script = HERMES[name]
        steps: list[Any] = script["steps"]
        step = steps[turn] if turn < len(steps) else script.get("repeat", "Is there anything else?")
        self.log.append(f"{name} turn {turn}: {step if isinstance(step, str) else [c[0] for c in step]}")
        if isinstance(step, str):
            return step
        blocks = []
        for tool, arguments in step:
            args = arguments(prompt) if callable(arguments) else arguments
            blocks.append("<tool_call>\n" + json.dumps({"arguments": args, "name": tool}) + "\n</tool_call>")
        return "\n".join(blocks)


def serve(script: Script) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            with script.lock:
                script.requests += 1
                over = script.requests > MAX_REQUESTS
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            if over or not self.path.endswith("/completions"):
                self.send_error(503 if over else 404)
                return
            try:
                text = script.reply(str(body.get("prompt", "")))
            except Exception as exc:  # the run fails loudly on the agent's side
                script.log.append(f"ERROR {exc}")
                self.send_error(500, str(exc))
                return
            document = {
                "id": f"cmpl-{script.requests}",
                "object": "text_completion",
                "created": 0,
                "model": str(body.get("model", "scripted")),
                "choices": [{"text": text, "index": 0, "finish_reason": "stop", "logprobs": None}],
            }
            data = json.dumps(document).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


# ---------------------------------------------------------------------------------------------
# Driving ToolSandbox's Cli roles on stdin

_PROMPT = re.compile(r" \[(USER|AGENT)\] (Tool function call )?> $")
_FIRST = re.compile(r"^ \[USER\] -> \[AGENT\]: (.*)$", re.M)


def drive(
    command: Sequence[str],
    cwd: Path,
    env: dict[str, str],
    first_messages: dict[str, str],
    answers: Callable[[str, str, int], str],
    log: Path,
) -> None:
    """Run ``command``, answering each Cli prompt with ``answers(role, scenario, k)``."""
    by_first = {text: name for name, text in first_messages.items()}
    with log.open("w", encoding="utf-8") as err:
        proc = subprocess.Popen(
            command, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err
        )
        assert proc.stdin is not None and proc.stdout is not None
        deadline = time.monotonic() + RUN_TIMEOUT
        buffer, scenario = "", ""
        counts: dict[tuple[str, str], int] = {}
        try:
            while True:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"ToolSandbox did not finish within {RUN_TIMEOUT} s")
                ready, _, _ = select.select([proc.stdout], [], [], 1.0)
                if not ready:
                    continue
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    break
                buffer += chunk.decode("utf-8", "replace")
                match = _PROMPT.search(buffer)
                if match is None:
                    continue
                # The Cli roles print every message they can see before their prompt (the user
                # also sees its few-shot examples): the scenario is the one whose first user
                # message is printed.
                known = {by_first[m] for m in _FIRST.findall(buffer) if m in by_first}
                if len(known) > 1:
                    raise RuntimeError(f"cannot tell the scenario apart: {sorted(known)}")
                if known:
                    scenario = known.pop()
                elif match.group(2) is None:
                    raise RuntimeError(f"no known scenario in the transcript:\n{buffer[-2000:]}")
                role = match.group(1)
                k = counts.get((role, scenario), 0)
                counts[(role, scenario)] = k + 1
                answer = answers(role, scenario, k)
                err.write(f"\n[driver] {scenario} {role} #{k}: {answer}\n")
                proc.stdin.write((answer + "\n").encode())
                proc.stdin.flush()
                buffer = ""
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        if proc.returncode != 0:
            tail = log.read_text(encoding="utf-8", errors="replace")[-3000:]
            raise RuntimeError(f"ToolSandbox exited with {proc.returncode}; the end of its log:\n{tail}")


def first_user_messages(python: str, names: Sequence[str], cwd: Path) -> dict[str, str]:
    """Each scenario's first user message, read from ToolSandbox's scenario definitions."""
    code = (
        "import json, sys\n"
        "from tool_sandbox.cli.utils import resolve_scenarios\n"
        "from tool_sandbox.common.execution_context import DatabaseNamespace\n"
        "out = {}\n"
        "for name, s in resolve_scenarios(sys.argv[1:], 'DEFAULT').items():\n"
        "    rows = s.starting_context.get_database(DatabaseNamespace.SANDBOX).to_dicts()\n"
        "    first = [r['content'] for r in rows if r['sender'] == 'USER' and r['recipient'] == 'AGENT'\n"
        "             and r['visible_to'] != ['USER']]\n"
        "    out[name] = first[0]\n"
        "print(json.dumps(out))\n"
    )
    result = subprocess.run(
        [python, "-c", code, *names], cwd=cwd, capture_output=True, text=True, check=True, timeout=600
    )
    messages: dict[str, str] = json.loads(result.stdout.strip().splitlines()[-1])
    if len(set(messages.values())) != len(messages):
        raise RuntimeError("two scenarios share a first user message; the driver could not tell them apart")
    return messages


def run(
    python: str,
    checkout: Path,
    output: Path,
    agent: str,
    names: Sequence[str],
    answers: Callable[[str, str, int], str],
    env: dict[str, str],
    first: dict[str, str],
) -> None:
    # tool_sandbox.cli:main is the `tool_sandbox` console script ToolSandbox installs.
    command = [python, "-c", "from tool_sandbox.cli import main; main()"]
    command += ["--agent", agent, "--user", "Cli", "-p", "1", "-o", str(output), "-s", *names]
    print("$ tool_sandbox", " ".join(command[3:]), file=sys.stderr)
    drive(command, checkout, env, first, answers, output / f"{agent}.log")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", type=Path, help="a ToolSandbox checkout (its git commit is recorded)")
    parser.add_argument("--python", default=sys.executable, help="the Python that has tool_sandbox installed")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    checkout = args.checkout.resolve()
    names = sorted(set(HERMES) | set(UNHELPFUL) | set(CLI_AGENT))
    first = first_user_messages(args.python, names, checkout)

    script = Script({n: first[n] for n in HERMES})
    server = serve(script)
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "RAPID_", "HF_"))
    }
    env.update(
        OPENAI_BASE_URL=f"http://127.0.0.1:{server.server_address[1]}/v1",
        PYTHONUNBUFFERED="1",
        TOKENIZERS_PARALLELISM="false",
    )

    def user(role: str, scenario: str, k: int) -> str:
        if role != "USER":
            raise RuntimeError(f"unexpected {role} prompt in {scenario}")
        replies: list[str] = HERMES.get(scenario, {}).get("user", [])
        return replies[k] if k < len(replies) else "end"

    def cli(role: str, scenario: str, k: int) -> str:
        if role == "USER":
            return "end"
        return CLI_AGENT[scenario][k]

    with tempfile.TemporaryDirectory(prefix="toolsandbox-runs-") as tmp:
        output = Path(tmp)
        try:
            run(args.python, checkout, output, "Hermes", sorted(HERMES), user, env, first)
            run(args.python, checkout, output, "Unhelpful", UNHELPFUL, user, env, first)
            run(args.python, checkout, output, "Cli", sorted(CLI_AGENT), cli, env, first)
        finally:
            server.shutdown()
            (output / "server.log").write_text("\n".join(script.log) + "\n", encoding="utf-8")
        summaries = sorted(output.rglob("result_summary.json"))
        if len(summaries) != 3:
            raise RuntimeError(f"expected 3 run folders, found {len(summaries)} in {output}")
        for path in output.rglob("pretty_print.txt"):
            path.unlink()
        # Replace the run folders and the server log; keep the hand-written SOURCE.md.
        args.out.mkdir(parents=True, exist_ok=True)
        for old in args.out.iterdir():
            if old.name.startswith("agent_"):
                shutil.rmtree(old)
        for summary in summaries:
            relative = summary.parent.relative_to(output)
            shutil.copytree(summary.parent, args.out / relative)
        shutil.copy(output / "server.log", args.out / "server.log")
    commit = subprocess.run(
        ["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    print(f"wrote {len(summaries)} run folders to {args.out} (ToolSandbox commit {commit or 'unknown'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
