"""prefixexec inside inspect_ai: a scorer, its metrics and a schema approver (spec/integrations.md).

* :func:`prefix_executability` scores a sample with the inspect adapter's own code: the sample's
  messages, model events, metadata and earlier scores are laid out as the sample of a log
  (``model_dump`` of inspect's objects, the form inspect writes) and handed to
  :func:`prefixexec.adapters.inspect_logs.reader.sample_rollout`, the function
  ``prefixexec score --adapter inspect`` calls for every sample of a log (INSP-SCORER-SAME).
* :func:`ter`, :func:`auc_pec`, :func:`mean_fed`, :func:`rr` and :func:`rr_eligible` are the
  kernel's estimators over the scored samples (INSP-SCORER-METRICS); each value is the nearest double
  of the exact fraction (INSP-SCORER-FLOAT).
* :func:`schema_approver` rejects a call that is not executable at the schema level against
  the tools offered to the model in the generate call that made it (INSP-APPROVER).

Everything is registered under the ``prefixexec/`` namespace; inspect finds it through the
``inspect_ai`` entry point ``prefixexec = "prefixexec.integrations._registry"`` (INSP-SCORER-REGISTRY).
inspect_ai is optional: without it this module raises an ImportError that names the extra.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

try:
    from inspect_ai.approval import Approval, Approver, approver
    from inspect_ai.event import ModelEvent
    from inspect_ai.log import transcript
    from inspect_ai.model import ChatMessage
    from inspect_ai.scorer import (
        Metric,
        SampleScore,
        Score,
        Scorer,
        ScoreReducer,
        Target,
        metric,
        score_reducer,
        scorer,
    )
    from inspect_ai.solver import TaskState
    from inspect_ai.tool import ToolCall as InspectToolCall
    from inspect_ai.tool import ToolCallView
except ImportError as exc:  # pragma: no cover - exercised by a subprocess test without inspect_ai
    raise ImportError(
        "prefixexec.integrations.inspect needs inspect_ai: pip install 'inspect_ai>=0.3' "
        f"(or pip install '.[inspect]' in a prefixexec checkout) ({exc})"
    ) from exc

import numpy as np

from prefixexec.adapters import AdapterOptions
from prefixexec.adapters.inspect_logs.reader import LogHeader, sample_rollout, semantics_for
from prefixexec.adapters.inspect_logs.semantics import DEFAULT_THRESHOLD
from prefixexec.kernel import PrefixMonitor, ToolCall, Verdict, estimators

from .monitors import SCHEMA, schema_task

#: Registry namespace of everything here (INSP-SCORER-REGISTRY).
NAMESPACE = "prefixexec"


def registered(name: str) -> str:
    """The name to hand inspect's decorators so that an object is registered as ``prefixexec/<name>``.

    inspect's scorer, metric and approver decorators (not its reducer's) prefix the name of an
    object from an installed package with the package's name
    (``registry_name``): from a wheel it gets ``name`` and makes it ``prefixexec/<name>``, where
    ``prefixexec/<name>`` would become ``prefixexec/prefixexec/<name>``; from a checkout or an
    editable install (no package found) it keeps the name as given (INSP-SCORER-REGISTRY).
    """
    full = f"{NAMESPACE}/{name}"
    try:
        from inspect_ai._util.registry import registry_name
    except ImportError:  # pragma: no cover - an inspect_ai without this helper: the checkout's way
        return full
    return name if registry_name(registered, name) == full else full
#: Keys of a score's value (INSP-SCORER-VALUE).
VALUE_KEYS = ("T", "fed", "Y")


def _dump(item: Any) -> Any:
    return item.model_dump(mode="json", exclude_none=True)


def sample_dict(state: TaskState, events: Sequence[Any]) -> dict[str, Any]:
    """The sample as a log holds it: id, epoch, messages, model events, metadata and scores."""
    return {
        "id": state.sample_id,
        "epoch": state.epoch,
        "messages": [_dump(m) for m in state.messages],
        "events": [_dump(e) for e in events if isinstance(e, ModelEvent)],
        "metadata": dict(state.metadata or {}),
        "scores": {name: _dump(score) for name, score in (state.scores or {}).items()},
    }


def _success_scorer(state: TaskState, success: str | None) -> str | None:
    if success is not None:
        return success
    earlier = [name for name in (state.scores or {}) if not name.startswith("prefix_executability")]
    return earlier[0] if earlier else None


# ---------------------------------------------------------------------------------------------
# Metrics (INSP-SCORER-METRICS)


#: Score metadata key holding ``[[T, FED, Y], ...]``: one rollout per epoch (INSP-SCORER-VALUE).
ROLLOUTS = "rollouts"


def rollout_arrays(scores: Sequence[SampleScore]) -> tuple[Any, Any, Any | None]:
    """``(T, FED, Y)`` arrays of every rollout behind the scores; ``Y`` is ``None`` when one has none.

    The rollouts are read from each score's metadata (``rollouts``), which inspect's epoch
    reducers carry over and :func:`pool` joins across epochs; the value's numbers are not used,
    because a reducer such as ``mean`` averages them (INSP-SCORER-EPOCHS).
    """
    rows: list[Sequence[Any]] = []
    for s in scores:
        found = (s.score.metadata or {}).get(ROLLOUTS)
        if not isinstance(found, list) or not found:
            raise ValueError(f"not a prefix_executability score (no metadata.rollouts): {s.score!r}")
        rows.extend(found)
    T = np.array([int(r[0]) for r in rows], dtype=np.int64)
    fed = np.array([int(r[1]) for r in rows], dtype=np.int64)
    ys = [r[2] for r in rows]
    Y = None if any(y is None for y in ys) else np.array([bool(y) for y in ys], dtype=np.bool_)
    return T, fed, Y


@score_reducer(name=f"{NAMESPACE}/pool")  # inspect keeps a reducer's name as given (no package prefix)
def pool() -> ScoreReducer:
    """Keep every epoch's rollout: the metadata ``rollouts`` of all epochs, joined (INSP-SCORER-EPOCHS).

    The value is the first epoch's (for display); the metrics read the pooled rollouts, so each
    (sample, epoch) counts as one rollout, as ``prefixexec score`` counts it.
    """

    def reduce(scores: list[Score]) -> Score:
        rows = [row for s in scores for row in (s.metadata or {}).get(ROLLOUTS, [])]
        first = scores[0]
        return Score(
            value=first.value,
            answer=first.answer,
            explanation=first.explanation,
            metadata={**(first.metadata or {}), ROLLOUTS: rows},
        )

    return reduce


def as_float(value: Fraction | int | None) -> float:
    """The nearest double of an exact value (``float(Fraction)`` rounds correctly); NaN: undefined."""
    return float("nan") if value is None else float(value)


@metric(name=registered("ter"))
def ter() -> Metric:
    """TER (Eq. (8)): the fraction of samples executable to their end."""

    def compute(scores: list[SampleScore]) -> float:
        T, fed, _ = rollout_arrays(scores)
        return as_float(estimators.ter(T, fed))

    return compute


@metric(name=registered("auc_pec"))
def auc_pec() -> Metric:
    """AUC-PEC (Eq. (11)): the mean of (FED - 1) / T."""

    def compute(scores: list[SampleScore]) -> float:
        T, fed, _ = rollout_arrays(scores)
        return as_float(estimators.auc_pec(T, fed))

    return compute


@metric(name=registered("mean_fed"))
def mean_fed() -> Metric:
    """Mean first-error depth."""

    def compute(scores: list[SampleScore]) -> float:
        _, fed, _ = rollout_arrays(scores)
        return as_float(estimators.mean_fed(fed))

    return compute


@metric(name=registered("rr"))
def rr() -> Metric:
    """RR (Eq. (9)): successes among samples with a first error; NaN when undefined or Y unknown."""

    def compute(scores: list[SampleScore]) -> float:
        T, fed, Y = rollout_arrays(scores)
        return as_float(None if Y is None else estimators.rr(T, fed, Y))

    return compute


@metric(name=registered("rr_eligible"))
def rr_eligible() -> Metric:
    """RR-Eligible (Eq. (9)'s denominator): the number of samples with a first error."""

    def compute(scores: list[SampleScore]) -> int:
        T, fed, _ = rollout_arrays(scores)
        return estimators.rr_eligible(T, fed)

    return compute


METRICS = (ter, auc_pec, mean_fed, rr, rr_eligible)


@scorer(metrics=[m() for m in METRICS], name=registered("prefix_executability"))
def prefix_executability(
    success: str | None = None, threshold: float = DEFAULT_THRESHOLD, label_rules: str | None = None
) -> Scorer:
    """T, FED, Y, label and reason of a sample, as ``prefixexec score --adapter inspect`` reads them.

    ``success`` names the scorer whose value gives Y (INS-SUCCESS with ``threshold``); by default
    the first scorer that scored the sample before this one. It must run earlier in the task's
    scorer list (inspect hands later scorers the earlier ones' scores in ``state.scores``).
    ``label_rules`` is a ``--label-rules`` file (INS-LABEL-RULES).
    """
    semantics = semantics_for(AdapterOptions(label_rules=label_rules))

    async def score(state: TaskState, target: Target) -> Score:
        sample = sample_dict(state, transcript().events)
        header = LogHeader(task="task", model=str(state.model), method="scorer", scorers=())
        chosen = _success_scorer(state, success)
        where = f"sample {state.sample_id!r}"
        _, rollout, _, _ = sample_rollout(sample, header, chosen or "", threshold, where, semantics)
        outcome = rollout.outcome
        y: int | None = int(rollout.success) if chosen is not None else None
        return Score(
            value={"T": outcome.T, "fed": outcome.fed, "Y": y},
            answer=None if outcome.label is None else outcome.label.value,
            explanation=outcome.reason,
            metadata={
                "label": None if outcome.label is None else outcome.label.value,
                "reason": outcome.reason,
                "success_scorer": chosen,
                "threshold": threshold,
                ROLLOUTS: [[outcome.T, outcome.fed, y]],
            },
        )

    return score


# ---------------------------------------------------------------------------------------------
# The approver (INSP-APPROVER)


def offered_tools(call_id: str, events: Sequence[Any]) -> list[dict[str, Any]] | None:
    """The tools (``ToolInfo`` dumps) of the latest model event whose output made ``call_id``."""
    for event in reversed(events):
        if not isinstance(event, ModelEvent):
            continue
        message = event.output.choices[0].message if event.output.choices else None
        if message is not None and any(c.id == call_id for c in message.tool_calls or ()):
            return [_dump(t) for t in event.tools]
    return None


def schema_check(call: InspectToolCall, tools: Sequence[Mapping[str, Any]]) -> Verdict:
    """The monitor's schema verdict on ``call`` against ``tools`` (MON-SCHEMA); nothing runs."""
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    return PrefixMonitor(SCHEMA, schema_task(tools)).check(ToolCall(call.function, arguments, call.id))


@approver(name=registered("schema_approver"))
def schema_approver() -> Approver:
    """Reject a call that is not executable at the schema level (INSP-APPROVER).

    A call whose arguments could not be parsed, whose tool was not offered in the generate call
    that made it, or whose arguments violate the tool's parameter schema is rejected with the
    label and reason; any other call is approved. When the transcript does not show which tools
    were offered, the call is escalated (the decision is left to the next approver).
    """

    async def approve(
        message: str, call: InspectToolCall, view: ToolCallView, history: list[ChatMessage]
    ) -> Approval:
        if call.parse_error is not None:
            return Approval(
                decision="reject",
                explanation=f"prefixexec: [schema] the arguments could not be parsed: {call.parse_error}",
            )
        tools = offered_tools(call.id, transcript().events)
        if tools is None:
            return Approval(decision="escalate", explanation="prefixexec: the offered tools are not known")
        verdict = schema_check(call, tools)
        if verdict.executable:
            return Approval(decision="approve", explanation="prefixexec: executable at the schema level")
        label = verdict.label.value if verdict.label is not None else "unlabelled"
        return Approval(decision="reject", explanation=f"prefixexec: [{label}] {verdict.reason}")

    return approve


__all__ = [
    "METRICS",
    "NAMESPACE",
    "auc_pec",
    "mean_fed",
    "offered_tools",
    "pool",
    "prefix_executability",
    "registered",
    "rollout_arrays",
    "rr",
    "rr_eligible",
    "sample_dict",
    "schema_approver",
    "schema_check",
    "ter",
]
