"""Conformance vectors and the comparison of ``score --json`` condition objects.

(spec: CONF-VECTORS, CONF-COMPARE, CONF-RUN)

A vector is one JSON file ``{"id", "description", "triples" | "records", "expected"}``;
``expected`` is the condition object that ``prefixexec score --json`` prints for the vector's
records. :func:`vector_jsonl` turns a vector into the JSONL text another implementation reads
on its standard input, :func:`compare_condition` lists every point-estimate value that differs
beyond a tolerance, and :func:`check_vector` runs a command on one vector (as a subprocess,
argument list from :func:`shlex.split`, never through a shell, with a time limit).
"""

from __future__ import annotations

import fnmatch
import json
import re
import shlex
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from importlib import resources
from pathlib import Path
from typing import IO, Any

import attrs

from prefixexec.adapters import InputError
from prefixexec.adapters.inputs import read_bytes
from prefixexec.adapters.numbers import ascii_digits, json_fault
from prefixexec.adapters.records import parse_json_line, read_records
from prefixexec.kernel import Rollout

#: The condition a triples vector's records belong to.
TRIPLES_DATASET, TRIPLES_MODEL, TRIPLES_METHOD = "conformance", "vector", "triples"

#: The scalar keys of a ``score --json`` condition object (names, counts and point estimates).
SCALAR_KEYS = (
    "dataset",
    "model",
    "method",
    "N",
    "TER",
    "AUC_PEC",
    "mean_FED",
    "success",
    "RR",
    "RR_eligible",
    "recovered",
    "fully_executable",
)

#: The keys of a condition object that hold point estimates (compared by conformance);
#: ``ci`` and ``ci_dropped`` depend on the bootstrap settings and are not compared.
POINT_KEYS = (*SCALAR_KEYS, "PEC", "PEC_elig", "n_k", "labels", "decomposition", "exact")

_VECTOR_KEYS = frozenset({"id", "description", "triples", "records", "expected"})
_ID = re.compile(r"^[a-z0-9]+(?:[-_][a-z0-9]+)*$")
_RATIONAL = re.compile(r"^-?\d+(?:/\d+)?$")


def default_vectors_dir() -> Path:
    """The vectors shipped with the package (``spec/vectors``, installed as ``prefixexec.vectors``)."""
    return Path(str(resources.files("prefixexec.vectors")))


@attrs.frozen(slots=True)
class Vector:
    """One conformance vector: its records (as JSON objects) and the expected condition object."""

    id: str
    description: str
    path: str
    records: tuple[Mapping[str, Any], ...]
    expected: Mapping[str, Any]
    form: str  # "triples" or "records"


def triple_records(triples: Sequence[Sequence[int]]) -> list[dict[str, Any]]:
    """The records of a triples vector: rollout i is task ``t00000i``, trial 0, outcome (T, FED)."""
    width = max(6, len(str(len(triples))))
    return [
        {
            "dataset": TRIPLES_DATASET,
            "model": TRIPLES_MODEL,
            "method": TRIPLES_METHOD,
            "task_id": f"t{i:0{width}d}",
            "success": bool(y),
            "outcome": {"T": T, "fed": fed},
        }
        for i, (T, fed, y) in enumerate(triples)
    ]


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_triples(where: str, value: object) -> list[list[int]]:
    if not isinstance(value, list) or not value:
        raise InputError(where, "'triples' must be a non-empty list of [T, FED, Y]")
    for i, t in enumerate(value):
        if not (isinstance(t, list) and len(t) == 3 and all(_is_int(x) for x in t)):
            raise InputError(where, f"triples[{i}]: expected [T, FED, Y] of integers, got {t!r}")
        T, fed, y = t
        if T < 1 or not 1 <= fed <= T + 1 or y not in (0, 1):
            raise InputError(
                where, f"triples[{i}]: need T >= 1, 1 <= FED <= T + 1 and Y in {{0, 1}}, got {t!r}"
            )
    return value


def load_vector(path: Path) -> Vector:
    """Read and validate one vector file (its records are checked by the record reader)."""
    where = str(path)
    try:
        doc = parse_json_line(read_bytes(where, "a vector file").decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise InputError(where, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except ValueError as exc:
        raise InputError(where, f"not valid JSON: {json_fault(exc)}") from None
    if not isinstance(doc, dict):
        raise InputError(where, "a vector must be a JSON object")
    unknown = sorted(set(doc) - _VECTOR_KEYS)
    if unknown:
        raise InputError(
            where, f"unknown key(s) {', '.join(unknown)} (expected: {', '.join(sorted(_VECTOR_KEYS))})"
        )
    for key in ("id", "description", "expected"):
        if key not in doc:
            raise InputError(where, f"missing key {key!r}")
    ident, description, expected = doc["id"], doc["description"], doc["expected"]
    if not isinstance(ident, str) or not _ID.match(ident):
        raise InputError(where, f"'id' must be lower-case words joined by '-' or '_': {ident!r}")
    if ident != path.stem:
        raise InputError(where, f"'id' {ident!r} differs from the file name {path.name!r}")
    if not isinstance(description, str) or not description.strip():
        raise InputError(where, "'description' must be a non-empty string")
    if not isinstance(expected, dict):
        raise InputError(where, "'expected' must be a condition object")
    if ("triples" in doc) == ("records" in doc):
        raise InputError(where, "give exactly one of 'triples' and 'records'")
    if "triples" in doc:
        records: list[dict[str, Any]] = triple_records(_check_triples(where, doc["triples"]))
        form = "triples"
    else:
        raw = doc["records"]
        if not isinstance(raw, list) or not raw or not all(isinstance(r, dict) for r in raw):
            raise InputError(where, "'records' must be a non-empty list of record objects")
        records, form = raw, "records"
    vector = Vector(ident, description, where, tuple(records), expected, form)
    rollouts = vector_rollouts(vector)
    keys = {r.condition for r in rollouts}
    if len(keys) != 1:
        raise InputError(where, f"the records of a vector must form one condition, found {len(keys)}")
    (condition,) = keys
    if (expected.get("dataset"), expected.get("model"), expected.get("method")) != (
        condition.dataset,
        condition.model,
        condition.method,
    ):
        raise InputError(where, "'expected' names a different (dataset, model, method) than the records")
    return vector


def vector_jsonl(vector: Vector) -> str:
    """The vector's records as JSONL text, one record per line (what a command reads on stdin)."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in vector.records)


def vector_rollouts(vector: Vector) -> list[Rollout]:
    """Read the vector's records with the record reader (as ``score`` reads a file)."""
    with tempfile.TemporaryDirectory(prefix="prefixexec-vector-") as tmp:
        path = Path(tmp) / "records.jsonl"
        path.write_text(vector_jsonl(vector), encoding="utf-8")
        try:
            return read_records([str(path)])
        except InputError as exc:
            line = exc.where.rsplit(":", 1)[-1]
            place = f"records[{int(line) - 1}]" if ascii_digits(line) else "records"
            raise InputError(f"{vector.path}: {place}", exc.what) from None


def load_vectors(paths: Sequence[Path], only: Sequence[str] = ()) -> list[Vector]:
    """Every vector of ``paths`` (files, or folders whose ``*.json`` files are all vectors).

    ``only``: keep the vectors whose id matches one of these shell patterns. Sorted by id;
    an id may occur once.
    """
    files: list[Path] = []
    for p in paths:
        if p.is_dir():
            files.extend(sorted(p.glob("*.json")))
        elif p.is_file():
            files.append(p)
        else:
            raise InputError(str(p), "no such file or folder")
    if only:
        files = [f for f in files if any(fnmatch.fnmatchcase(f.stem, pat) for pat in only)]
    if not files:
        raise InputError(
            ", ".join(map(str, paths)), "no vectors found" + (" matching --only" if only else "")
        )
    seen: dict[str, str] = {}
    vectors = []
    for f in files:
        v = load_vector(f)
        if v.id in seen:
            raise InputError(v.path, f"vector id {v.id!r} also in {seen[v.id]}")
        seen[v.id] = v.path
        vectors.append(v)
    return sorted(vectors, key=lambda v: v.id)


# ---------------------------------------------------------------------------------------------
# Comparing condition objects (CONF-COMPARE)


@attrs.frozen(slots=True)
class Difference:
    """One value that differs: its path in the condition object, the expected and actual value."""

    path: str
    expected: Any
    actual: Any
    note: str = ""

    def describe(self) -> str:
        text = f"{self.path}: expected {_show(self.expected)}, got {_show(self.actual)}"
        return f"{text} ({self.note})" if self.note else text


_MISSING = object()


def _show(value: Any) -> str:
    if value is _MISSING:
        return "nothing (key missing)"
    return json.dumps(value) if not isinstance(value, float) else repr(value)


def parse_rational(text: object) -> Fraction | None:
    """The rational of a string ``"p/q"`` or ``"p"`` (integers only); ``None`` if it is not one."""
    if isinstance(text, str) and _RATIONAL.match(text):
        num, _, den = text.partition("/")
        try:
            if den and int(den) == 0:
                return None
            return Fraction(int(num), int(den) if den else 1)
        except ValueError:  # beyond Python's int <-> str digit limit: not a rational we read
            return None
    return None


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _compare(
    path: str, expected: Any, actual: Any, tolerance: float, exact: bool, out: list[Difference]
) -> None:
    if actual is _MISSING:
        out.append(Difference(path, expected, None, "key missing"))
    elif expected is None or actual is None:
        if expected is not actual:
            out.append(Difference(path, expected, actual, "undefined on one side only"))
    elif isinstance(expected, dict):
        if not isinstance(actual, dict):
            out.append(Difference(path, expected, actual, "expected an object"))
            return
        for key, value in expected.items():
            _compare(
                f"{path}.{key}" if path else key, value, actual.get(key, _MISSING), tolerance, exact, out
            )
    elif isinstance(expected, list):
        if not isinstance(actual, list):
            out.append(Difference(path, expected, actual, "expected a list"))
        elif len(actual) != len(expected):
            out.append(Difference(f"{path} length", len(expected), len(actual)))
        else:
            for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
                _compare(f"{path}[{i}]", e, a, tolerance, exact, out)
    elif exact:
        want, got = parse_rational(expected), parse_rational(actual)
        if got is None:
            out.append(Difference(path, expected, actual, "not an exact rational 'p/q'"))
        elif want != got:
            out.append(Difference(path, expected, actual))
    elif isinstance(expected, str):
        if actual != expected:
            out.append(Difference(path, expected, actual))
    elif _is_int(expected):
        if not _is_number(actual) or actual != expected:
            out.append(Difference(path, expected, actual, "counts must be equal"))
    elif isinstance(expected, float):
        if not _is_number(actual):
            out.append(Difference(path, expected, actual, "not a number"))
        elif abs(float(actual) - expected) > tolerance:
            out.append(
                Difference(path, expected, actual, f"|difference| {abs(float(actual) - expected):.3g}")
            )
    elif expected != actual:
        out.append(Difference(path, expected, actual))


def compare_condition(
    expected: Mapping[str, Any], actual: Mapping[str, Any], tolerance: float, skip: Sequence[str] = ()
) -> list[Difference]:
    """Every point-estimate value of ``expected`` that ``actual`` misses or differs from.

    Counts and strings must be equal; floats may differ by ``tolerance``; the exact rationals
    under ``exact`` must be equal as rationals; ``null`` matches only ``null``. Keys not in
    :data:`POINT_KEYS`, keys of ``actual`` that ``expected`` lacks, and top-level keys in
    ``skip`` are not compared.
    """
    out: list[Difference] = []
    for key in POINT_KEYS:
        if key in expected and key not in skip:
            _compare(key, expected[key], actual.get(key, _MISSING), tolerance, key == "exact", out)
    return out


# ---------------------------------------------------------------------------------------------
# Running another implementation (CONF-RUN)


@attrs.frozen(slots=True)
class VectorResult:
    """The outcome of one vector: differences, or an error (failed run, unreadable output)."""

    id: str
    differences: tuple[Difference, ...] = ()
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and not self.differences


def parse_command(text: str) -> list[str]:
    """The argument list of ``--command`` (POSIX shell words, no shell is run)."""
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        raise InputError("--command", f"cannot split into words: {exc}") from None
    if not argv:
        raise InputError("--command", "empty command")
    return argv


def _condition_of(stdout: str) -> tuple[Mapping[str, Any] | None, str | None]:
    try:
        doc = parse_json_line(stdout)
    except ValueError as exc:
        return None, f"output is not valid JSON: {json_fault(exc)}"
    if not isinstance(doc, dict) or not isinstance(doc.get("conditions"), list):
        return None, "output is not a score document (an object with a 'conditions' list)"
    conditions = doc["conditions"]
    if len(conditions) != 1 or not isinstance(conditions[0], dict):
        return None, f"expected exactly one condition object, got {len(conditions)}"
    return conditions[0], None


#: What a run of CMD gave: exit status, standard output, standard error.
RunResult = tuple[int, str, str]


def own_scorer_arguments(argv: Sequence[str]) -> list[str] | None:
    """The ``prefixexec`` arguments when ``argv`` runs this very prefixexec, else ``None``.

    That is ``PYTHON -m prefixexec ARGS...`` with this interpreter, or ``prefixexec ARGS...``
    whose program is the ``prefixexec`` script next to this interpreter: both would import the
    prefixexec that is running now.
    """
    import os
    import shutil
    import sys

    def same(program: str | None, path: str) -> bool:
        # The same folder and the same file: two virtual environments share the interpreter
        # binary but not their packages (their folders differ), while one environment's
        # python, python3 and python3.11 are links to one binary (a script made by pip starts
        # with python3, the user may type python).
        if program is None:
            return False
        a, b = os.path.abspath(program), os.path.abspath(path)
        return os.path.dirname(a) == os.path.dirname(b) and (
            a == b or os.path.realpath(a) == os.path.realpath(b)
        )

    if len(argv) >= 3 and list(argv[1:3]) == ["-m", "prefixexec"]:
        return list(argv[3:]) if same(shutil.which(argv[0]), sys.executable) else None
    if argv and Path(argv[0]).name == "prefixexec":
        beside = os.path.join(os.path.dirname(sys.executable), "prefixexec")
        return list(argv[1:]) if same(shutil.which(argv[0]), beside) else None
    return None


def run_in_process(arguments: Sequence[str], stdin: str) -> RunResult:
    """Run ``prefixexec ARGUMENTS`` in this process with ``stdin`` as standard input: what the
    subprocess would give (exit status, output; an uncaught exception ends standard error with
    ``Type: message`` and status 1, as the interpreter prints it)."""
    import contextlib
    import io
    import sys

    from prefixexec.cli import main

    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    sys.stdin = io.StringIO(stdin, newline=None)  # universal newlines, as a text-mode stdin
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(arguments))
            except SystemExit as exc:
                if exc.code is None or isinstance(exc.code, int):
                    code = exc.code or 0
                else:
                    err.write(f"{exc.code}\n")
                    code = 1
            except Exception as exc:  # the subprocess would print a traceback and exit 1
                err.write(f"{type(exc).__name__}: {exc}\n")
                code = 1
    finally:
        sys.stdin = saved
    return code, out.getvalue(), err.getvalue()


#: CONF-OUTPUT-LIMIT: the most bytes read from a command's standard output (one JSON document of
#: one condition: a few kilobytes, at most a few MB for the longest horizon) and standard error;
#: a command that writes more is stopped and its vector fails.
MAX_STDOUT_BYTES = 16 << 20
MAX_STDERR_BYTES = 1 << 20


def run_subprocess(argv: Sequence[str], stdin: str, timeout: float) -> RunResult | str:
    """Run ``argv`` with ``stdin``; the run's result, or why it failed (time limit, too much
    output: CONF-OUTPUT-LIMIT). At most :data:`MAX_STDOUT_BYTES` of standard output and
    :data:`MAX_STDERR_BYTES` of standard error are held; a command that writes more is killed.

    Raises :class:`InputError` only when the program cannot be started at all.
    """
    import threading

    try:
        proc = subprocess.Popen(
            list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
    except FileNotFoundError:
        raise InputError("--command", f"no such program: {argv[0]!r}") from None
    except PermissionError:
        raise InputError("--command", f"not executable: {argv[0]!r}") from None
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    held: dict[str, bytes] = {}
    over: list[str] = []

    def drain(name: str, stream: IO[bytes], limit: int) -> None:
        data = stream.read(limit + 1)
        if len(data) > limit:
            over.append(name)
            proc.kill()
            data = data[:limit]
        held[name] = data

    def feed() -> None:
        assert proc.stdin is not None
        try:
            proc.stdin.write(stdin.encode("utf-8"))
            proc.stdin.close()
        except OSError:  # the command exited, or closed its input, before reading all of it
            pass

    threads = [
        threading.Thread(target=drain, args=("standard output", proc.stdout, MAX_STDOUT_BYTES), daemon=True),
        threading.Thread(target=drain, args=("standard error", proc.stderr, MAX_STDERR_BYTES), daemon=True),
        threading.Thread(target=feed, daemon=True),
    ]
    for thread in threads:
        thread.start()
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return f"timed out after {timeout:g} s"
    finally:
        for thread in threads:
            thread.join(timeout=5)
        for stream in (proc.stdout, proc.stderr):
            stream.close()
    if over:
        limit = MAX_STDOUT_BYTES if over[0] == "standard output" else MAX_STDERR_BYTES
        return f"wrote more than {limit} bytes to {over[0]} (CONF-OUTPUT-LIMIT)"
    out = held.get("standard output", b"").decode("utf-8", "replace")
    err = held.get("standard error", b"").decode("utf-8", "replace")
    return code, out, err


def judge(vector: Vector, run: RunResult | str, tolerance: float, skip: Sequence[str] = ()) -> VectorResult:
    """The vector's result from what the command gave (CONF-RUN, CONF-COMPARE)."""
    if isinstance(run, str):
        return VectorResult(vector.id, error=run)
    code, stdout, stderr = run
    if code != 0:
        first = (stderr.strip().splitlines() or ["(no message)"])[-1]
        return VectorResult(vector.id, error=f"exited with status {code}: {first}")
    condition, error = _condition_of(stdout)
    if condition is None:
        return VectorResult(vector.id, error=error)
    return VectorResult(vector.id, tuple(compare_condition(vector.expected, condition, tolerance, skip)))


def check_vector(
    vector: Vector,
    argv: Sequence[str],
    tolerance: float,
    timeout: float,
    skip: Sequence[str] = (),
    in_process: bool = False,
) -> VectorResult:
    """Run ``argv`` with the vector's JSONL on stdin and compare its condition to ``expected``.

    ``in_process``: ``argv`` runs this prefixexec (:func:`own_scorer_arguments`); run it here
    instead of starting an interpreter (no time limit then). Raises :class:`InputError` only
    when the program cannot be started at all.
    """
    own = own_scorer_arguments(argv) if in_process else None
    if own is not None:
        return judge(vector, run_in_process(own, vector_jsonl(vector)), tolerance, skip)
    return judge(vector, run_subprocess(argv, vector_jsonl(vector), timeout), tolerance, skip)


def check_vectors(
    vectors: Sequence[Vector],
    argv: Sequence[str],
    tolerance: float,
    timeout: float,
    skip: Sequence[str] = (),
    jobs: int = 1,
    in_process: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> list[VectorResult]:
    """:func:`check_vector` of every vector, in order; ``jobs`` runs of CMD at a time.

    When CMD is this prefixexec and ``in_process`` holds, the vectors are scored in this
    process, one after the other (no interpreter start per vector). ``progress(done, total)``
    is called as vectors finish.
    """
    total = len(vectors)
    results: list[VectorResult | None] = [None] * total
    done = 0

    def finished() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)

    own = own_scorer_arguments(argv) if in_process else None
    if own is not None or jobs <= 1:
        for i, vector in enumerate(vectors):
            results[i] = check_vector(vector, argv, tolerance, timeout, skip, in_process)
            finished()
        return [r for r in results if r is not None]
    from concurrent.futures import ThreadPoolExecutor, as_completed

    # Threads suffice: each waits on its subprocess.
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {
            pool.submit(check_vector, vector, argv, tolerance, timeout, skip): i
            for i, vector in enumerate(vectors)
        }
        for future in as_completed(futures):
            results[futures[future]] = future.result()
            finished()
    return [r for r in results if r is not None]


def results_json(results: Sequence[VectorResult]) -> dict[str, Any]:
    """The ``conformance --json`` document."""
    return {
        "vectors": len(results),
        "differ": sum(1 for r in results if not r.ok),
        "results": [
            {
                "id": r.id,
                "ok": r.ok,
                "error": r.error,
                "differences": [
                    {"path": d.path, "expected": d.expected, "actual": d.actual, "note": d.note}
                    for d in r.differences
                ],
            }
            for r in results
        ],
    }


def format_results(results: Sequence[VectorResult]) -> str:
    """One block per vector that differs, then a summary line."""
    lines: list[str] = []
    for r in results:
        if r.ok:
            continue
        if r.error is not None:
            lines.append(f"FAIL {r.id}: {r.error}")
        else:
            lines.append(f"FAIL {r.id}: {len(r.differences)} value(s) differ")
            lines.extend(f"  {d.describe()}" for d in r.differences)
    bad = sum(1 for r in results if not r.ok)
    from .numbers import count

    lines.append(f"{len(results) - bad} of {len(results)} vectors agree, {count(bad, 'differs', 'differ')}")
    return "\n".join(lines) + "\n"


from prefixexec._callable import make_callable  # noqa: E402  # API-COMMANDS: prefixexec.conformance(...) runs the command

make_callable(__name__)
