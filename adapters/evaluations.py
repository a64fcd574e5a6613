"""``score --emit-evaluations PATH``: the verdicts back into the tracing backend as OTLP
``gen_ai.evaluation.result`` events, with who evaluated and how (spec: TRACE-EVALUATIONS).

Each rollout of a trace adapter gives two events (log records with ``eventName``
``gen_ai.evaluation.result``): ``prefixexec.fed`` (value FED, label the first failure's label,
``unlabelled`` or ``executable``) and ``prefixexec.executable`` (1 or 0, ``pass`` / ``fail``),
parented to the failing call's span (trace and span id) where there is one and to the trace's root
span otherwise. Each carries its provenance, so that the results of two runs of the scorer can be
told apart: the evaluator (``prefixexec.evaluator.name`` = ``prefixexec``, its version; also the
resource's ``service.name`` / ``service.version`` and the scope), the run's signature
(OUT-SIGNATURE), a hash of the rule set that labelled the failure (:func:`rule_set_hash`), and the
rollout's T, FED, label and reason.

Written as one OTLP ``ExportLogsServiceRequest``: protobuf for a path ending in ``.pb``,
``.binpb`` or ``.protobuf`` (with ``opentelemetry-proto``, the extra ``otlp``), else OTLP
JSON on one line (a JSON document that is also an OTLP JSON Lines file). OTLP ids are 16 and 8
bytes: an id of another format (the Agents SDK's ``span_<24 hex>``) that is not one after its
prefix (``tr-``, ``trace_``, ``span_``) and dashes are dropped is left out of the record's ids;
every id is kept, as the format writes it, in ``prefixexec.trace_id`` / ``prefixexec.span_id``.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from prefixexec.kernel import Rollout

from .errors import InputError

EVENT = "gen_ai.evaluation.result"
EVALUATOR = "prefixexec"
PROTOBUF_SUFFIXES = (".pb", ".binpb", ".protobuf")
INSTALL = "writing OTLP protobuf needs opentelemetry-proto: pip install 'prefix-executability[otlp]'"
_HEX = re.compile(r"[0-9a-f]+")
#: The prefixes of ids that are OTLP ids after them (MLflow ``tr-``, the Agents SDK ``trace_``).
_PREFIX = re.compile(r"\A(?:tr-|trace_|span_)")


@attrs.frozen(slots=True)
class Provenance:
    """Who evaluated and how: the same on every event of a run."""

    version: str
    signature: str
    rule_set: str


def rule_set_hash(label_rules_digest: str = "", error_pattern: str | None = None) -> str:
    """``sha256:`` and 12 hex digits over the rules that label a failed call: the built-in label
    families (CHAT-LABELS, TRACE-LABELS), the result-error rule (TRACE-RESULT-ERROR), the
    ``--label-rules`` file's digest and ``--error-pattern``."""
    from .chat.semantics import ERROR_FAMILIES
    from .spans import RESULT_ERROR, TRACE_FAMILIES

    digest = hashlib.sha256()
    for label, pattern in ERROR_FAMILIES + TRACE_FAMILIES:
        digest.update(f"{label.value}\0{pattern.pattern}\0{pattern.flags}\n".encode())
    digest.update(f"result-error\0{RESULT_ERROR.pattern}\n".encode())
    digest.update(f"label-rules\0{label_rules_digest}\nerror-pattern\0{error_pattern or ''}\n".encode())
    return "sha256:" + digest.hexdigest()[:12]


def otlp_id(value: object, size: int) -> str | None:
    """``value`` as an OTLP id of ``size`` bytes in hex, or None when it is not one (a prefix
    such as ``trace_`` and dashes dropped first)."""
    if not isinstance(value, str):
        return None
    text = _PREFIX.sub("", value).replace("-", "").lower()
    if len(text) == 2 * size and _HEX.fullmatch(text) and text.strip("0"):
        return text
    return None


def evaluation_records(rollout: Rollout, provenance: Provenance) -> list[dict[str, Any]]:
    """The two events of one rollout: ``trace_id`` and ``span_id`` (the format's own ids) and the
    attributes; ``[]`` for a rollout that is not a trace's."""
    meta = rollout.meta
    trace = meta.get("trace_id")
    if not isinstance(trace, str):
        return []
    outcome = rollout.outcome
    spans = meta.get("action_spans")
    root = meta.get("root_span")
    failing = None
    if not outcome.fully_executable and isinstance(spans, list) and outcome.fed <= len(spans):
        failing = spans[outcome.fed - 1]
    label = (
        "executable" if outcome.fully_executable else (outcome.label.value if outcome.label else "unlabelled")
    )
    explanation = (
        f"all {outcome.T} calls executable"
        if outcome.fully_executable
        else (outcome.reason or "not executable")
    )
    span = failing if isinstance(failing, str) else root
    common: dict[str, object] = {
        "prefixexec.evaluator.name": EVALUATOR,
        "prefixexec.evaluator.version": provenance.version,
        "prefixexec.signature": provenance.signature,
        "prefixexec.rule_set.hash": provenance.rule_set,
        "prefixexec.T": outcome.T,
        "prefixexec.fed": outcome.fed,
        "prefixexec.label": label,
        "prefixexec.reason": outcome.reason or "",
        "prefixexec.task": rollout.task_id,
        "prefixexec.trial": rollout.trial,
        "prefixexec.trace_id": trace,
        "prefixexec.span_id": span if isinstance(span, str) else "",
    }
    rows = (
        ("prefixexec.fed", float(outcome.fed), label),
        (
            "prefixexec.executable",
            1.0 if outcome.fully_executable else 0.0,
            "pass" if outcome.fully_executable else "fail",
        ),
    )
    return [
        {
            "trace_id": trace,
            "span_id": span if isinstance(span, str) else None,
            "attributes": {
                "gen_ai.evaluation.name": name,
                "gen_ai.evaluation.score.value": value,
                "gen_ai.evaluation.score.label": score_label,
                "gen_ai.evaluation.explanation": explanation,
                **common,
            },
        }
        for name, value, score_label in rows
    ]


def _json_value(value: object) -> dict[str, object]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}  # OTLP JSON: 64-bit integers as strings
    if isinstance(value, float):
        return {"doubleValue": value}
    return {"stringValue": str(value)}


def _resource(version: str) -> dict[str, object]:
    return {"service.name": EVALUATOR, "service.version": version}


def otlp_json(records: Sequence[dict[str, Any]], provenance: Provenance, now: int) -> dict[str, Any]:
    """The records as one OTLP JSON ``ExportLogsServiceRequest`` (ids in hex, as OTLP JSON has them)."""
    logs = []
    for record in records:
        entry: dict[str, Any] = {
            "timeUnixNano": str(now),
            "observedTimeUnixNano": str(now),
            "eventName": EVENT,
            "attributes": [{"key": k, "value": _json_value(v)} for k, v in record["attributes"].items()],
        }
        trace, span = otlp_id(record["trace_id"], 16), otlp_id(record["span_id"], 8)
        if trace is not None:
            entry["traceId"] = trace
            if span is not None:
                entry["spanId"] = span
        logs.append(entry)
    resource = [{"key": k, "value": _json_value(v)} for k, v in _resource(provenance.version).items()]
    scope = {"name": EVALUATOR, "version": provenance.version}
    return {
        "resourceLogs": [
            {"resource": {"attributes": resource}, "scopeLogs": [{"scope": scope, "logRecords": logs}]}
        ]
    }


def _proto_classes(where: str) -> Any:
    import importlib

    try:
        return importlib.import_module("opentelemetry.proto.collector.logs.v1.logs_service_pb2")
    except ImportError:
        raise InputError(where, INSTALL) from None


def otlp_protobuf(records: Sequence[dict[str, Any]], provenance: Provenance, now: int, where: str) -> bytes:
    """The records as one serialized protobuf ``ExportLogsServiceRequest``."""
    from google.protobuf import json_format

    document = otlp_json(records, provenance, now)
    # the protobuf JSON mapping is OTLP JSON with ids in base64 instead of hex
    for resource in document["resourceLogs"]:
        for scope in resource["scopeLogs"]:
            for log in scope["logRecords"]:
                for key in ("traceId", "spanId"):
                    if key in log:
                        log[key] = _base64(bytes.fromhex(log[key]))
    module = _proto_classes(where)
    message = json_format.ParseDict(document, module.ExportLogsServiceRequest())
    return bytes(message.SerializeToString())


def _base64(data: bytes) -> str:
    import base64

    return base64.b64encode(data).decode("ascii")


def protobuf_path(path: str) -> bool:
    return path.lower().endswith(PROTOBUF_SUFFIXES)


def check_evaluations_path(path: str) -> None:
    """Before any input is read: a protobuf output needs ``opentelemetry-proto`` (one-line hint)."""
    if protobuf_path(path):
        _proto_classes("--emit-evaluations")


def write_evaluations(
    path: str, rollouts: Sequence[Rollout], provenance: Provenance, now: int | None = None
) -> None:
    """``score --emit-evaluations PATH``: every rollout's events, written atomically
    (HOSTILE-OUTPUT-*): OTLP protobuf or OTLP JSON by the path's suffix."""
    from .files import atomic_path, output_directory

    output_directory(path)
    records = [record for rollout in rollouts for record in evaluation_records(rollout, provenance)]
    when = time.time_ns() if now is None else now
    if protobuf_path(path):
        data = otlp_protobuf(records, provenance, when, "--emit-evaluations")
    else:
        data = (json.dumps(otlp_json(records, provenance, when), ensure_ascii=False) + "\n").encode("utf-8")
    with atomic_path(Path(path)) as tmp:
        Path(tmp).write_bytes(data)
