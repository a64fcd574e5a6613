"""Write tests/data/chat-bfcl/glyphh-base-error-objects.jsonl: chat transcripts whose tool results
are what BFCL's own executable classes answered (tests/data/chat-bfcl/SOURCE.md).

For each chosen entry of glyphh-ada-1.1's real BFCL v4 base run (tests/data/real/bfcl-glyphh-ada),
the transcript holds, turn by turn, the user's messages from bfcl-eval's dataset, the agent's calls
from the result file (one assistant message per step, its parallel calls as ``tool_calls``), and
for every call the text BFCL's own executor returned on the same calls
(``prefixexec.adapters.bfcl.reference.reference_results``: BFCL's ``execute_multi_turn_func_call``
in a child process, plain literal calls only). Tools are listed by name (no schema); success is
BFCL's own verdict from its score file (the entries it lists are the invalid ones).

Run from the checkout: ``python tests/make_bfcl_chat_transcripts.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULT = (
    HERE
    / "data"
    / "real"
    / "bfcl-glyphh-ada"
    / "result"
    / "glyphh-ada-1.1"
    / "multi_turn"
    / "BFCL_v4_multi_turn_base_result.json"
)
SCORE = (
    HERE
    / "data"
    / "real"
    / "bfcl-glyphh-ada"
    / "score"
    / "glyphh-ada-1.1"
    / "multi_turn"
    / "BFCL_v4_multi_turn_base_score.json.zst"
)
OUT = HERE / "data" / "chat-bfcl" / "glyphh-base-error-objects.jsonl"
#: Entries whose calls BFCL answers with a JSON object holding an "error" key.
ENTRIES = ("multi_turn_base_91", "multi_turn_base_95", "multi_turn_base_183")


def steps(record: dict[str, Any]) -> list[list[list[tuple[str, dict[str, Any]]]]]:
    """turn -> step -> [(function, arguments)] of a function-calling result."""
    return [
        [[(name, json.loads(args)) for item in step for name, args in item.items()] for step in turn]
        for turn in record["result"]
    ]


def call_text(name: str, args: dict[str, Any]) -> str:
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in args.items())})"


def invalid_entries() -> set[str]:
    """The entries BFCL's score file lists (its invalid ones; the first line is its header)."""
    import zstandard

    text = zstandard.ZstdDecompressor().stream_reader(SCORE.read_bytes(), read_across_frames=True).read()
    return {json.loads(line)["id"] for line in text.decode("utf-8").splitlines()[1:]}


def transcript(record: dict[str, Any], success: bool) -> dict[str, Any]:
    from prefixexec.adapters.bfcl import backend, reference

    task_id = record["id"]
    turns = steps(record)
    [answer] = reference.reference_results(
        [(task_id, [[call_text(n, a) for step in turn for n, a in step] for turn in turns])]
    )
    results = [list(turn) for turn in answer["results"]]
    questions = backend.entry(task_id).questions
    messages: list[dict[str, Any]] = []
    names: list[str] = []
    for t, turn in enumerate(turns):
        messages.extend({"role": "user", "content": q} for q in questions[t])
        answers = iter(results[t])
        for s, step in enumerate(turn):
            ids = [f"call_{t}_{s}_{k}" for k in range(len(step))]
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
                        for i, (n, a) in zip(ids, step, strict=True)
                    ],
                }
            )
            names.extend(n for n, _ in step if n not in names)
            messages.extend({"role": "tool", "tool_call_id": i, "content": next(answers)} for i in ids)
    return {
        "task_id": task_id,
        "dataset": "bfcl-glyphh-base-as-chat",
        "model": "glyphh-ada-1.1",
        "method": "bfcl-executor-answers",
        "success": success,
        "messages": messages,
        "tools": [{"name": n} for n in names],
    }


def main() -> int:
    records = {}
    for line in RESULT.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        records[record["id"]] = record
    invalid = invalid_entries()
    lines = [json.dumps(transcript(records[tid], tid not in invalid), ensure_ascii=False) for tid in ENTRIES]
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines)} transcripts to {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
