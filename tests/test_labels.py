"""Label families matched with argument values masked, and user label rules (spec/adapters/labels.md).

The transcripts here are crafted edge cases (one call, one error result each); the expected
labels follow from the rules of spec/adapters/labels.md and spec/adapters/chat.md by reading
the texts. Real runs with non-English messages are covered in the tau-bench tests.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from prefixexec.adapters import AdapterOptions, InputError, chat
from prefixexec.adapters.labels import (
    FEW_VALUES,
    MASK,
    NO_RULES,
    _few_occurrences,
    _fold,
    _token_occurrences,
    ascii_twin,
    family_labels,
    load_label_rules,
    mask_arguments,
)
from prefixexec.cli import main
from prefixexec.kernel import Label

SCHEMA_FAMILY = ((Label.SCHEMA, re.compile(r"\binvalid\b", re.IGNORECASE)),)


@pytest.mark.spec("LABEL-MASK")
def test_an_argument_value_is_masked_as_a_whole_token() -> None:
    text = "Usuario U-INVALID no existe"
    assert mask_arguments(text, {"user_id": "U-INVALID"}) == f"Usuario {MASK} no existe"
    # The same id inside a longer token is not the value and stays.
    assert mask_arguments("user XU-INVALID2 not found", {"user_id": "U-INVALID"}) == (
        "user XU-INVALID2 not found"
    )


@pytest.mark.spec("LABEL-MASK")
def test_masking_reaches_nested_values_numbers_and_ignores_case() -> None:
    arguments: dict[str, Any] = {"order": {"items": ["Widget-Invalid", 42]}, "flag": True, "none": None}
    assert mask_arguments("widget-invalid and 42 and True", arguments) == f"{MASK} and {MASK} and True"


@pytest.mark.spec("LABEL-MASK")
def test_masking_is_longest_first() -> None:
    assert mask_arguments("id AB-1 and AB", {"a": "AB", "b": "AB-1"}) == f"id {MASK} and {MASK}"


#: Letters of both cases, digits, ``_``, separators, a letter whose lower case is longer ('İ'),
#: final sigma, a combining mark and a non-Latin letter: where word edges and case folding differ.
_MASK_ALPHABET = st.sampled_from(list("aAbB1_- .:'İΣσςé\u0301ж"))
_MASK_TEXTS = st.text(_MASK_ALPHABET, max_size=24)


@pytest.mark.spec("LABEL-MASK")
@settings(max_examples=400, deadline=None)
@given(_MASK_TEXTS, st.lists(_MASK_TEXTS.map(str.strip).filter(bool), min_size=1, max_size=FEW_VALUES))
@example("x --: y", ["-"])  # occurrences that touch stay two masks
@example("ids U-1-2 and xU-1", ["U-1", "1-2"])  # overlapping ones are one; glued ones none
@example("ΑΣ ασ-ας", ["ας"])  # final sigma: folded in its place
def test_a_few_values_are_found_where_the_automaton_finds_them(message: str, values: list[str]) -> None:
    # the two searches of mask_arguments: str.find per value (a few values) and the token automaton
    # (many values) are written independently; on every message they must cover the same characters
    folded = _fold(message)
    few = _few_occurrences(folded, [f for f in map(_fold, values) if f in folded])
    assert few == _token_occurrences(folded, set(values))
    # and through mask_arguments: with values that occur nowhere added past FEW_VALUES, the automaton
    padding = [f"\x00{i}" for i in range(FEW_VALUES)]
    assert mask_arguments(message, values) == mask_arguments(message, [*values, *padding])


def _all_families() -> list[tuple[Label, re.Pattern[str]]]:
    from prefixexec.adapters.chat.semantics import ERROR_FAMILIES
    from prefixexec.adapters.spans import TRACE_FAMILIES

    return [*ERROR_FAMILIES, *TRACE_FAMILIES, *SCHEMA_FAMILY]


def test_every_built_in_family_has_an_ascii_twin() -> None:
    # the lower-case search of ASCII texts applies to every built-in family (a pattern without a
    # twin is searched ignoring case: right, but slower)
    assert all(ascii_twin(pattern) is not None for _, pattern in _all_families())
    # patterns whose matches depend on more than case have none
    for source in (r"Not found", r"\x41bc", r"(?-i:abc)", r"(a)\1", r"\N{LATIN SMALL LETTER A}", r"[A-Z]x"):
        assert ascii_twin(re.compile(source, re.IGNORECASE)) is None, source
    assert ascii_twin(re.compile(r"abc")) is None  # nothing to gain: it does not ignore case
    assert ascii_twin(re.compile(r"\bab\B\W\d", re.I)) is not None  # escapes of classes are fine


#: Pieces of the families' words in both cases, with characters that match a letter only when
#: case is ignored ('ſ' is 's', 'K' is 'k', 'İ' and 'ı' are 'i'), separators and other text.
_FAMILY_PIECES = st.sampled_from(
    ["not ", "NOT ", "Not", "found", "FOUND", "invalid", "InVaLiD", "tool", "Tool ", "no such ", "exist",
     "ſuch", "\u212aey", "İnvalid", "ınvalid", "already ", "EXISTS", "timed out", "time", "ou", "'", "-", " ",
     "x", "1", "doesn't", "validation error", "missing 2 required", "Could not resolve", "ambiguous", MASK,
     "\u2039", "arg"]
)


@pytest.mark.spec("LABEL-MASK", "CHAT-LABELS")
@settings(max_examples=400, deadline=None)
@given(st.lists(_FAMILY_PIECES, max_size=10).map("".join))
def test_the_lower_case_search_finds_the_same_families(text: str) -> None:
    families = _all_families()
    assert family_labels(text, {}, families) == tuple(label for label, p in families if p.search(text))


#: TRACE-LABELS' trace family as spec/adapters/traces.md words it (the adapter's pattern is written
#: to search faster).
_TRACE_SCHEMA_PLAIN = re.compile(
    r"\btool not found\b|\btool ['\"]?[\w.-]+['\"]? (?:was |is )?not (?:found|available)"
    r"|not a valid tool|no such tool",
    re.IGNORECASE,
)


@pytest.mark.spec("TRACE-LABELS")
@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["tool", "Tool", "TOOL", " ", "xtool", "_", "not ", "found", "available", "was ", "is ", "'", '"',
             "get.x-1", "a", "no such", "a valid", "not a valid tool", "é", "-", "\n"]
        ),
        max_size=10,
    ).map("".join)
)
@example("Tool 'get_order' is not available")
@example("mytool not found")
@example("tool not found")
def test_the_trace_family_matches_where_its_plain_form_does(text: str) -> None:
    from prefixexec.adapters.spans import TRACE_FAMILIES

    ((_, pattern),) = TRACE_FAMILIES
    assert (pattern.search(text) is None) == (_TRACE_SCHEMA_PLAIN.search(text) is None)


@pytest.mark.spec("LABEL-MASK")
def test_the_callers_own_value_does_not_choose_a_family() -> None:
    assert family_labels("Usuario U-INVALID no existe", {"user_id": "U-INVALID"}, SCHEMA_FAMILY) == ()
    # Without the argument the word is the environment's: schema.
    assert family_labels("Usuario U-INVALID no existe", {}, SCHEMA_FAMILY) == (Label.SCHEMA,)
    # Word boundaries: "invalidated" is not "invalid".
    assert family_labels("token invalidated", {}, SCHEMA_FAMILY) == ()


def rules_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "rules.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)


SPANISH = """
[[chat]]
pattern = "no existe"
label = "dependency"

[[chat]]
pattern = "(?i)no disponible|existe"
label = "precondition"
"""


@pytest.mark.spec("LABEL-RULES")
def test_the_first_matching_rule_decides(tmp_path: Path) -> None:
    rules = load_label_rules(rules_file(tmp_path, SPANISH), "chat")
    assert family_labels("Usuario U-1 no existe", {}, SCHEMA_FAMILY, rules) == (Label.DEPENDENCY,)
    assert family_labels("Habitación NO DISPONIBLE", {}, SCHEMA_FAMILY, rules) == (Label.PRECONDITION,)
    # No rule matches: the built-in families apply.
    assert family_labels("invalid date", {}, SCHEMA_FAMILY, rules) == (Label.SCHEMA,)
    assert rules.digest.startswith("sha256:") and len(rules.digest) == len("sha256:") + 12


@pytest.mark.spec("LABEL-RULES", "LABEL-MASK")
def test_rules_match_the_masked_text(tmp_path: Path) -> None:
    rules = load_label_rules(rules_file(tmp_path, '[[chat]]\npattern = "ROOM-9"\nlabel = "schema"\n'), "chat")
    assert family_labels("ROOM-9 busy", {"room": "ROOM-9"}, (), rules) == ()
    assert family_labels("ROOM-9 busy", {"room": "ROOM-8"}, (), rules) == (Label.SCHEMA,)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[[chat]\n", "not valid TOML"),
        ('[[nope]]\npattern = "x"\nlabel = "schema"\n', "unknown adapter 'nope'"),
        ('[[taubench]]\npattern = "x"\nlabel = "schema"\n', "no rule for the chat adapter"),
        ('[[chat]]\npattern = "x"\nlabel = "syntax"\n', "'label' must be one of"),
        ('[[chat]]\npattern = "("\nlabel = "schema"\n', "not a valid regular expression"),
        ('[[chat]]\npattern = ""\nlabel = "schema"\n', "'pattern' must be a non-empty string"),
        ('[[chat]]\npattern = "x"\nlabel = "schema"\nwhy = 1\n', "unknown key 'why'"),
        ('chat = 3\n', "must be an array of tables"),
    ],
)
@pytest.mark.spec("LABEL-RULES")
def test_bad_rule_files_are_input_errors(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(InputError, match=re.escape(message)):
        load_label_rules(rules_file(tmp_path, text), "chat")


@pytest.mark.spec("LABEL-RULES")
def test_rules_only_for_text_labelled_adapters(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not label calls from message text"):
        load_label_rules(rules_file(tmp_path, SPANISH), "bfcl")
    assert load_label_rules(None, "bfcl") is NO_RULES


def transcript(tmp_path: Path, result: str, arguments: dict[str, Any]) -> Path:
    line = {
        "task_id": "t1",
        "model": "m",
        "method": "react",
        "success": False,
        "tools": [{"name": "get_user", "parameters": {"type": "object"}}],
        "messages": [
            {"role": "user", "content": "hola"},
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "c1", "function": {"name": "get_user", "arguments": json.dumps(arguments)}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": result, "is_error": True},
        ],
    }
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    return path


@pytest.mark.spec("LABEL-MASK", "CHAT-LABELS")
def test_chat_masks_the_callers_id(tmp_path: Path) -> None:
    path = transcript(tmp_path, "Usuario U-INVALID no existe", {"user_id": "U-INVALID"})
    (rollout,) = chat.read([str(path)], AdapterOptions())
    assert rollout.outcome.fed == 1 and rollout.outcome.label is None  # Spanish: no family matches
    path = transcript(tmp_path, "user_id is invalid", {"user_id": "U-1"})
    (rollout,) = chat.read([str(path)], AdapterOptions())
    assert rollout.outcome.label is Label.SCHEMA


@pytest.mark.spec("LABEL-RULES", "CHAT-LABELS", "OUT-SIGNATURE")
def test_chat_label_rules_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = transcript(tmp_path, "Usuario U-INVALID no existe", {"user_id": "U-INVALID"})
    rules = rules_file(tmp_path, SPANISH)
    argv = ["score", "--json", "--bootstrap", "0", "--adapter", "chat", str(path)]
    assert main([*argv, "--label-rules", rules]) == 0
    document = json.loads(capsys.readouterr().out)
    (condition,) = document["conditions"]
    assert condition["labels"]["dependency"] == 1
    digest = load_label_rules(rules, "chat").digest
    assert f"adapter:chat[label-rules={digest},harness-errors=failure]" in document["signature"].split("|")
    assert main(argv) == 0
    (condition,) = json.loads(capsys.readouterr().out)["conditions"]
    assert condition["labels"]["dependency"] == 0


@pytest.mark.spec("LABEL-RULES")
def test_bad_rules_stop_before_reading(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = rules_file(tmp_path, "[[chat]\n")
    code = main(["score", "--adapter", "chat", "--label-rules", rules, str(tmp_path / "missing.jsonl")])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err.startswith(f"prefixexec: error: {rules}: label rules are not valid TOML")
    assert captured.err.count("\n") == 1
    code = main(["score", "--adapter", "records", "--label-rules", rules_file(tmp_path, SPANISH), "x"])
    assert code == 2 and "does not label calls from message text" in capsys.readouterr().err
