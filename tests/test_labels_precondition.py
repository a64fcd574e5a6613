"""The shared precondition family (LABEL-PRECONDITION) and chat's error objects (CHAT-JSON-ERROR)
on real runs.

Counts: the messages are counted in the raw JSON with ``str.count`` (``conftest.real_text``); the
share of unlabelled first failures over every real tau run the repository holds, before and after
the family changed, is computed by tests/test_fidelity_round3.py (7 -> 3 of 140).
"""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from prefixexec.adapters import AdapterOptions
from prefixexec.adapters.chat import semantics as chat
from prefixexec.adapters.labels import PRECONDITION_FAMILY
from prefixexec.adapters.taubench import reader as tau
from prefixexec.adapters.taubench import semantics as tau_semantics
from prefixexec.kernel import Label

from conftest import REAL, real_text

FT = (
    REAL
    / "tau2-leaderboard"
    / "ft-gpt-4.1-2025-04-14-sierra-tau2-full-sft-BzrYdMNm_retail_default_gpt-4.1_1trials.json.zst"
)
QUOTED = (
    "Line must be suspended to resume",
    "Certificate cannot be used to update reservation",
    "Non-delivered order cannot be exchanged",
    "Non-delivered order cannot be returned",
    "Payment method should be the original payment method",
)


@pytest.mark.spec("LABEL-PRECONDITION")
@pytest.mark.parametrize("message", QUOTED)
def test_the_issues_messages_are_preconditions_for_tau_and_chat(message: str) -> None:
    assert PRECONDITION_FAMILY.search(message)
    labels, _ = tau_semantics.classify(f"Error: {message}", {}, ())
    assert labels == (Label.PRECONDITION,)
    assert chat.error_labels(message) == (Label.PRECONDITION,)


def _first_failures(path: object) -> list[tuple[str, Label | None]]:
    with contextlib.redirect_stderr(io.StringIO()):
        rollouts = tau.read([str(path)], AdapterOptions())
    return [(r.outcome.reason or "", r.outcome.label) for r in rollouts if not r.outcome.fully_executable]


@pytest.mark.spec("LABEL-PRECONDITION", "TAU-LABELS")
def test_payment_method_policy_is_a_precondition_on_a_real_tau2_run() -> None:
    text = real_text(FT)
    assert text.count("Payment method should be the original payment method") == 2  # str.count, raw JSON
    hits = [(reason, label) for reason, label in _first_failures(FT) if "should be the original" in reason]
    assert len(hits) == 2 and all(label is Label.PRECONDITION for _, label in hits)


@pytest.mark.spec("CHAT-JSON-ERROR", "CHAT-EXEC")
def test_an_error_object_is_a_failure_labelled_from_its_message() -> None:
    assert chat.json_error(json.dumps({"error": "Payment method should be the original payment method"}))
    assert (
        chat.json_error('{"error": {"code": 404, "message": "not found"}}')
        == '{"code": 404, "message": "not found"}'
    )
    for quiet in (
        '{"error": null}',
        '{"error": false}',
        '{"error": ""}',
        '{"result": "error"}',
        "[]",
        "error",
    ):
        assert chat.json_error(quiet) is None
    assert chat.error_labels(
        chat.json_error('{"error": "Non-delivered order cannot be returned"}') or ""
    ) == (Label.PRECONDITION,)
