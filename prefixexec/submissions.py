"""Leaderboard submissions as maintainers keep them (spec: spec/leaderboard.md, LB-FOLDER,
LB-SUBMISSION, LB-SYSTEM-FROM, LB-TRIALS, LB-CLAIMS, LB-NOT-CHECKABLE).

tau2-bench's leaderboard keeps one folder per submission: ``submission.json`` (the model, the
organisation, the submission type and date, the claimed pass^k per domain) beside
``trajectories/*.json``; BFCL keeps ``result/<model>/multi_turn/*_result.json`` beside
``score/<model>/multi_turn/*_score.json``. :func:`discover` finds the submissions of the paths
given (a submission folder, a folder of submission folders, BFCL's root or ``result/`` folder,
or a submission's ``submission.json``); :func:`read_submissions` reads each submission's
trajectories once, as runs for the claim check (:mod:`prefixexec.claims`) and, renamed after
their submission, as the conditions the leaderboard ranks (:mod:`prefixexec.ranking`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from prefixexec.adapters import InputError
from prefixexec.adapters.inputs import plain_name

if TYPE_CHECKING:
    from prefixexec.adapters import AdapterOptions
    from prefixexec.claims import ClaimCheck, Claims, Run
    from prefixexec.kernel import Rollout

#: What one system of the leaderboard is (LB-SYSTEM-FROM).
SYSTEM_FROM = ("submission", "file", "folder", "model")
#: The name of a tau2 submission's claims file.
SUBMISSION_JSON = "submission.json"
#: The files of a submission's ``trajectories/`` folder that are read (compressed copies too).
_TRAJECTORY_SUFFIXES = (".json", ".jsonl")
#: The most submissions and files one call discovers (HOSTILE-COUNT-COST: a folder of a million
#: entries is refused in one line, not listed).
MAX_ENTRIES = 100_000


@attrs.frozen(slots=True)
class Submission:
    """One submission: its folder, its claims files (tau2: its submission.json; BFCL: its score
    files, one per category), its trajectory files, its
    layout (``tau2``, ``bfcl`` or ``files``: trajectory files given on their own) and what its
    claims file says of it (``None`` where absent). ``available`` is tau2's
    ``trajectories_available`` as written."""

    folder: str
    claims: tuple[str, ...]
    files: tuple[str, ...]
    layout: str
    model: str | None = None
    organisation: str | None = None
    kind: str | None = None
    date: str | None = None
    available: bool | None = None
    #: tau2: files of ``trajectories/`` that its ``trajectory_files`` does not list (not read),
    #: and files it lists that are not there (LB-LISTED).
    unlisted: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()

    @property
    def claims_format(self) -> str:
        """The format of its claims files (CLAIM-INPUT): what the layout says they are."""
        return "bfcl-score" if self.layout == "bfcl" else "tau2-submission"

    @property
    def name(self) -> str:
        """The folder's name (a loose file's own name)."""
        return os.path.basename(os.path.normpath(self.folder)) or self.folder

    @property
    def label(self) -> str:
        """LB-SYSTEM-FROM ``submission``: ``model (organisation, type, date)`` from the claims
        file, the parts it lacks left out; the folder's name when it names no model."""
        if self.model is None:
            return self.name
        parts = [p for p in (self.organisation, self.kind, self.date) if p]
        return f"{self.model} ({', '.join(parts)})" if parts else self.model


def _text(doc: Mapping[str, Any], path: Path, *names: str) -> str | None:
    """The first of ``names`` that is non-blank text, its white space collapsed; a name with a
    lone surrogate is refused (HOSTILE-TEXT: it names the system)."""
    from prefixexec.adapters.limits import bad_name

    for name in names:
        value = doc.get(name)
        if isinstance(value, str) and value.strip():
            wrong = bad_name(value)
            if wrong is not None:
                raise InputError(f"{path}: {name}", wrong)
            return " ".join(value.split())
    return None


def _inside(path: Path, root: str) -> None:
    """HOSTILE-SUBMISSION-LINK: a submission's file (or its ``trajectories/`` folder) that is a link
    resolving outside the submission's folder is refused, not read."""
    target = os.path.realpath(path)
    if os.path.commonpath([target, root]) != root:
        raise InputError(
            str(path),
            f"links to {target}, outside the submission's folder {root}: a submission's files are "
            "read inside its folder (copy the file in)",
        )


def _trajectory_files(folder: Path) -> tuple[str, ...]:
    if not folder.is_dir():
        return ()
    root = os.path.realpath(folder.parent)
    _inside(folder, root)
    found = []
    for i, entry in enumerate(sorted(os.scandir(folder), key=lambda e: e.name)):
        if i >= MAX_ENTRIES:
            raise InputError(str(folder), f"more than {MAX_ENTRIES} entries: not a trajectories folder")
        if entry.is_symlink():
            _inside(folder / entry.name, root)
        if entry.is_file() and plain_name(entry.name).endswith(_TRAJECTORY_SUFFIXES):
            found.append(str(folder / entry.name))
    return tuple(found)


def tau2_submission(folder: Path) -> Submission:
    """The submission in ``folder`` (its ``submission.json`` and ``trajectories/``)."""
    from prefixexec.adapters.inputs import read_text
    from prefixexec.adapters.numbers import json_fault
    from prefixexec.adapters.records import parse_json_line

    path = folder / SUBMISSION_JSON
    text = read_text(str(path), "a claims file")  # its own error names the file (HOSTILE-FIFO)
    try:
        doc = parse_json_line(text)
    except ValueError as exc:
        raise InputError(str(path), f"not valid JSON: {json_fault(exc)}") from None
    if not isinstance(doc, dict):
        raise InputError(str(path), "expected a tau2 submission: a JSON object")
    available = doc.get("trajectories_available")
    files = _trajectory_files(folder / "trajectories")
    unlisted: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    listed = doc.get("trajectory_files")
    if isinstance(listed, dict):  # LB-LISTED: the files the submission says are its trajectories
        names = {v for v in listed.values() if isinstance(v, str)}
        here = {plain_name(os.path.basename(f)): f for f in files}
        unlisted = tuple(name for name in here if name not in names)
        missing = tuple(sorted(n for n in names if n not in here))
        files = tuple(f for name, f in here.items() if name in names)
    return Submission(
        folder=str(folder),
        claims=(str(path),),
        files=files,
        unlisted=unlisted,
        missing=missing,
        layout="tau2",
        model=_text(doc, path, "model_name"),
        organisation=_text(doc, path, "model_organization", "submitting_organization"),
        kind=_text(doc, path, "submission_type"),
        date=_text(doc, path, "submission_date"),
        available=available if isinstance(available, bool) else None,
    )


def _bfcl_files(folder: Path, kind: str) -> tuple[str, ...]:
    """``*_result.json`` (or ``*_score.json``) files under ``folder``, at most two levels down."""
    found: list[str] = []
    for sub in (folder, folder / "multi_turn"):
        if sub.is_dir():
            found += [
                str(sub / e.name)
                for e in sorted(os.scandir(sub), key=lambda e: e.name)
                if e.is_file() and plain_name(e.name).endswith(f"_{kind}.json") and "multi_turn" in e.name
            ]
    return tuple(found)


def bfcl_submissions(result: Path, score: Path | None) -> list[Submission]:
    """One submission per model folder of BFCL's ``result/`` (its multi-turn result files), with
    the score file of the same model and category from ``score/`` as its claims (LB-BFCL).

    The model is the score files' ``model_name`` when they name one, else the folder's name."""
    out: list[Submission] = []
    for entry in sorted(os.scandir(result), key=lambda e: e.name):
        if not entry.is_dir():
            continue
        files = _bfcl_files(result / entry.name, "result")
        if not files:
            continue
        scores = _bfcl_files(result / entry.name if score is None else score / entry.name, "score")
        folder = str(result / entry.name)
        out.append(Submission(folder, scores, files, "bfcl", model=bfcl_model(scores) or entry.name))
    return out


def bfcl_model(scores: Sequence[str]) -> str | None:
    """The ``model_name`` BFCL's score files give their entries (``None``: none, or several)."""
    from prefixexec.claims import read_bfcl_score

    names = {read_bfcl_score(path).system for path in scores}
    names.discard(None)
    return names.pop() if len(names) == 1 else None


def is_run_folder(path: str) -> bool:
    """A folder that is one run an adapter reads (a ToolSandbox run, a tau2 directory-format run:
    DETECT-*), not a submission folder."""
    from prefixexec.adapters.detect import TAU2_RESULTS, TOOLSANDBOX_SUMMARY

    return any(os.path.isfile(os.path.join(path, name)) for name in (TOOLSANDBOX_SUMMARY, TAU2_RESULTS))


def is_folder_input(paths: Sequence[str]) -> bool:
    """Whether the paths name submissions (a folder that is not a run, or a ``submission.json``)
    rather than trajectory files and runs only (LB-FOLDER)."""
    return any(
        p != "-"
        and (
            (os.path.isdir(p) and not is_run_folder(p)) or plain_name(os.path.basename(p)) == SUBMISSION_JSON
        )
        for p in paths
    )


def discover(paths: Sequence[str]) -> tuple[Submission, ...]:
    """LB-FOLDER: the submissions of ``paths``, in the order given (a folder's in name order).

    A path is a submission folder (it holds ``submission.json``), a folder of such folders
    (tau2's ``web/leaderboard/public/submissions``), BFCL's root (holding ``result/`` and
    ``score/``) or its ``result/`` folder, a ``submission.json`` (its folder is the submission),
    or a trajectory file (a submission of its own, without claims)."""
    found: list[Submission] = []
    for given in paths:
        path = Path(given)
        if given == "-":
            raise InputError("-", "a leaderboard of submissions reads files and folders, not standard input")
        if path.is_file() and plain_name(path.name) == SUBMISSION_JSON:
            found.append(tau2_submission(path.parent))
        elif path.is_dir() and not is_run_folder(given):
            found += _folder(path)
        elif path.exists():
            found.append(Submission(given, (), (given,), "files"))
        else:
            raise InputError(given, "no such file or folder")
    if not found:
        raise InputError(", ".join(paths), "no submissions found")
    seen: dict[str, str] = {}
    for s in found:
        where = os.path.realpath(s.folder if s.layout != "files" else s.files[0])
        if where in seen:
            raise InputError(s.folder, f"given twice (first as {seen[where]}): one submission is read once")
        seen[where] = s.folder
    return tuple(found)


def _folder(path: Path) -> list[Submission]:
    if os.path.lexists(path / SUBMISSION_JSON):  # a FIFO or a dangling link: refused when read
        return [tau2_submission(path)]
    if (path / "result").is_dir():
        score = path / "score"
        return bfcl_submissions(path / "result", score if score.is_dir() else None)
    if path.name == "result" and (path.parent / "score").is_dir():
        return bfcl_submissions(path, path.parent / "score")
    children = []
    for i, entry in enumerate(sorted(os.scandir(path), key=lambda e: e.name)):
        if i >= MAX_ENTRIES:
            raise InputError(str(path), f"more than {MAX_ENTRIES} entries: not a folder of submissions")
        if entry.is_dir() and os.path.lexists(path / entry.name / SUBMISSION_JSON):
            children.append(tau2_submission(path / entry.name))
    if children:
        return children
    bfcl = bfcl_submissions(path, None)  # a result/ folder without score/
    if bfcl:
        return bfcl
    runs = sorted(
        e.name for e in os.scandir(path) if e.is_dir() and is_run_folder(os.path.join(path, e.name))
    )
    if runs:
        shown = ", ".join(runs[:5]) + (f", ... ({len(runs)} in all)" if len(runs) > 5 else "")
        raise InputError(
            str(path), f"is a folder of runs, not of submissions: pass the run folders ({shown})"
        )
    raise InputError(
        str(path),
        "a folder with no submission.json, no submission folders (each with a submission.json) and "
        "no BFCL result/ folder (result/<model>/multi_turn/*_result.json)",
    )


# ---------------------------------------------------------------------------------------------
# Reading


@attrs.frozen(slots=True)
class SubmissionRead:
    """A submission and what was read of it: its claims (one per claims file), its runs
    (one per file and condition, as ``crosscheck`` reads them: CLAIM-RUNS) and the rollouts the
    leaderboard ranks, renamed after the system (LB-SYSTEM-FROM, LB-TRIALS)."""

    submission: Submission
    claims: tuple[Claims, ...]
    runs: tuple[Run, ...]
    rollouts: tuple[Rollout, ...] = attrs.field(repr=False)


def _resolve(files: Sequence[str], adapter: str) -> str:
    if adapter != "auto":
        return adapter
    from prefixexec.adapters.detect import resolve

    return resolve(list(files))[0]


def system_name(submission: Submission, system_from: str, path: str, model: str, method: str) -> str:
    """LB-SYSTEM-FROM: the system a rollout of ``path`` counts for."""
    if system_from == "submission" and submission.layout != "files":
        return submission.label
    if system_from == "folder" and submission.layout != "files":
        return submission.name
    if system_from == "file":
        return plain_name(os.path.basename(path))
    return f"{model} / {method}"


def read_submission(
    submission: Submission,
    adapter: str,
    options: AdapterOptions,
    system_from: str,
    tolerance: Fraction | None = None,
) -> SubmissionRead:
    """Read a submission's claims and trajectories (each file once).

    The rollouts are renamed: model = the system (LB-SYSTEM-FROM), method = the agent the
    trajectories name (``model / method`` as read). The files of one system in one dataset are its
    trials (LB-TRIALS): a file whose (task, trial) pairs repeat an earlier file's has its trial
    numbers shifted past the earlier ones, so a best-of-K submission of K one-trial files is one
    system with K trials per task."""
    from prefixexec.claims import read_claims, read_runs
    from prefixexec.kernel import ConditionKey

    claims = tuple(read_claims(path, submission.claims_format, tolerance) for path in submission.claims)
    if not submission.files:
        return SubmissionRead(submission, claims, (), ())
    name = _resolve(submission.files, adapter)
    runs = read_runs(list(submission.files), name, options)
    systems = [system_name(submission, system_from, run.file, run.key.model, run.key.method) for run in runs]
    agents: dict[tuple[str, str], set[str]] = {}
    for run, system in zip(runs, systems, strict=True):
        agents.setdefault((run.key.dataset, system), set()).add(f"{run.key.model} / {run.key.method}")
    renamed: list[Rollout] = []
    used: dict[tuple[str, str], set[tuple[str, int]]] = {}
    for run, system in zip(runs, systems, strict=True):
        if system_from == "model":
            key = run.key
        else:  # the method names the agents the trajectories name (LB-SYSTEM-FROM)
            key = ConditionKey(run.key.dataset, system, "; ".join(sorted(agents[(run.key.dataset, system)])))
        seen = used.setdefault((key.dataset, key.model), set())
        every = run.read or run.rollouts
        shift = 1 + max(t for _, t in seen) if {(r.task_id, r.trial) for r in every} & seen else 0
        for r in every:
            renamed.append(attrs.evolve(r, condition=key, trial=r.trial + shift))
            seen.add((r.task_id, r.trial + shift))
    return SubmissionRead(submission, claims, tuple(runs), tuple(renamed))


def read_submissions(
    submissions: Sequence[Submission], adapter: str, options: AdapterOptions, system_from: str
) -> tuple[SubmissionRead, ...]:
    """Every submission read (:func:`read_submission`); two submissions whose systems get the same
    name are told apart by their folder names (LB-SYSTEM-FROM: a submission is a system)."""
    if system_from not in SYSTEM_FROM:
        raise InputError("--system-from", f"expected one of {', '.join(SYSTEM_FROM)}: {system_from!r}")
    labels: dict[str, int] = {}
    for s in submissions:
        if s.files and s.layout != "files":
            labels[s.label] = labels.get(s.label, 0) + 1
    out = []
    for s in submissions:
        if system_from == "submission" and labels.get(s.label, 0) > 1:
            s = attrs.evolve(s, model=f"{s.label} [{s.name}]", organisation=None, kind=None, date=None)
        out.append(read_submission(s, adapter, options, system_from))
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# Claims (LB-CLAIMS)


@attrs.frozen(slots=True)
class ClaimRow:
    """One claim of one submission checked (LB-CLAIMS): the submission, the system it ranks as,
    and crosscheck's check (verdict, ours, reasons; CLAIM-VERDICT)."""

    submission: str
    system: str
    check: ClaimCheck


def check_submission(
    item: SubmissionRead, best_of: bool | None = None
) -> list[tuple[Claims, list[ClaimCheck]]]:
    """Each claims file of a submission checked against its trajectories (CLAIM-VERDICT).

    ``best_of`` ``None``: a tau2 pass_1 over several runs of a domain that repeat its tasks is
    checked as best-of-K (LB-TRIALS), a claim over one run as it is; ``True`` / ``False``: every
    claim as ``crosscheck --best-of`` does or does not."""
    from prefixexec.claims import check, overlap

    out: list[tuple[Claims, list[ClaimCheck]]] = []
    for claims in item.claims:
        bfcl = claims.format in ("bfcl-csv", "bfcl-score")
        checks: list[ClaimCheck] = []
        for claim in claims.claims:
            best = best_of
            if best is None:
                mine = [r for r in item.runs if r.key.dataset == claim.dataset]
                best = not bfcl and claim.k == 1 and len(mine) > 1 and overlap(mine)
            checks += check(attrs.evolve(claims, claims=(claim,)), item.runs, best)
        out.append((claims, checks))
    return out


def claim_rows(read: Sequence[SubmissionRead]) -> tuple[tuple[ClaimRow, ...], tuple[Submission, ...]]:
    """Every claim of every submission with trajectories checked against them (the verdicts of
    ``crosscheck``: CLAIM-VERDICT; a domain of several runs that repeat tasks as best-of-K,
    LB-TRIALS), and the submissions whose claims cannot be checked: no trajectories
    (LB-NOT-CHECKABLE)."""
    rows: list[ClaimRow] = []
    absent: list[Submission] = []
    for item in read:
        if not item.claims:
            continue
        if not item.runs:
            absent.append(item.submission)
            continue
        for _, checks in check_submission(item):
            rows += [ClaimRow(item.submission.name, item.submission.label, c) for c in checks]
    return tuple(rows), tuple(absent)


def claims_json(rows: Sequence[ClaimRow], absent: Sequence[Submission]) -> dict[str, Any]:
    """The ``claims`` part of the leaderboard document (LB-CLAIMS, LB-NOT-CHECKABLE)."""
    from prefixexec.claims import VERDICTS

    items = [
        {
            "submission": r.submission,
            "system": r.system,
            "dataset": r.check.claim.dataset,
            "metric": r.check.claim.metric,
            "claimed": r.check.claim.text,
            "claimed_exact": None if r.check.claim.value is None else str(r.check.claim.value),
            "verdict": r.check.verdict,
            "ours": None if r.check.ours is None else float(r.check.ours),
            "ours_exact": None if r.check.ours is None else str(r.check.ours),
            "ours_text": r.check.ours_text or None,
            "reasons": [{"code": x.code, "text": x.text} for x in r.check.reasons],
        }
        for r in rows
    ]
    return {
        "claims": items,
        "summary": {v: sum(1 for r in rows if r.check.verdict == v) for v in VERDICTS},
        "not_checkable": [
            {
                "submission": s.name,
                "system": s.label,
                "claims_file": s.claims[0] if s.claims else None,
                "trajectories_available": s.available,
                "reason": "no trajectories in its folder",
            }
            for s in absent
        ],
    }


def dumps_claims(claims: Mapping[str, Any]) -> str:
    return json.dumps(claims, indent=2, allow_nan=False)
