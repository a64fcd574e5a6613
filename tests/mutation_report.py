"""Mutation testing of the adapters' semantics modules (issue 19; report: tests/mutation-adapters.md).

Rerun everything (long: about an hour on a loaded 2-core machine; not part of the test command)::

    .venv-test/bin/python tests/mutation_report.py run /tmp/mut [ADAPTER...]

runs ``bash tests/mutation.sh /tmp/mut/<adapter>`` for each adapter of :data:`ADAPTERS` (default:
all, smallest first) with its MUTATION_* variables, prints each one's wall time, and then its
report as below. Report on a finished run (from the repository root)::

    .venv-test/bin/python tests/mutation_report.py WORKDIR [--confirm]

It reads ``WORKDIR/results-final.txt`` (mutmut's results and those of the mutants mutation.sh
checked in one process after its time budget; ``results.txt`` of an older run) and
``mutmut show`` of every survivor, and prints the counts and one markdown row per survivor with
its verdict from :data:`VERDICTS` below (``not analysed`` when there is none). ``--confirm``
checks every "killed by a new test" verdict with mutmut's own switch: in WORKDIR/stage/mutants,
``MUTANT_UNDER_TEST=<mutant> pytest tests/test_mutation_adapters.py -k <test>`` must fail and
the same run without the mutant must pass (the current tests/test_mutation_adapters.py is copied
into the stage first).
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
VENV = Path(os.environ.get("PREFIXEXEC_TEST_VENV", REPO / ".venv-test"))

KILLED = "killed by a new test"
EQUIVALENT = "equivalent"
GAP = "survives (gap)"

# Verdicts of the survivors, by mutant name without the "prefixexec.adapters." prefix. A killed
# verdict names the test of tests/test_mutation_adapters.py that kills it (a -k expression).
VERDICTS: dict[str, tuple[str, str]] = {}


def killed(test: str) -> tuple[str, str]:
    return (KILLED, test)


def equivalent(why: str) -> tuple[str, str]:
    return (EQUIVALENT, why)


def gap(why: str) -> tuple[str, str]:
    return (GAP, why)


def ns(function: str, *numbers: int) -> list[str]:
    """Mutant names ``<function>__mutmut_<n>``."""
    return [f"{function}__mutmut_{n}" for n in numbers]


def _add(prefix: str, verdict: tuple[str, str], *names: str) -> None:
    for name in names:
        VERDICTS[f"{prefix}.{name}"] = verdict


NO_TOOL_STATE = (
    "the state after an accepted no-tool action is never read: the no-tool action is the whole "
    "trajectory of a rollout without calls (CONV-NOTOOL), so no step follows it"
)

# --- chat ------------------------------------------------------------------------------------
C = "chat.semantics"
_add(
    C,
    equivalent(
        "jsonschema 4.26 (installed) issues no warning in validator_for, so the filter's category "
        "is never consulted; the filter is there for older releases"
    ),
    "x__validator_class__mutmut_2",
    "x__validator_class__mutmut_4",
)
_add(
    C,
    equivalent("validator_for's own default is the latest draft, Draft202012Validator, in jsonschema 4.26"),
    "x__validator_class__mutmut_11",
)
_add(C, killed("compile_schema_names_the_type"), "x_compile_schema__mutmut_3")
_add(C, killed("schema_path_indexes_array_items"), "x__path__mutmut_6")
_add(
    C,
    killed("excerpt_of_a_long_result"),
    *(f"x__excerpt__mutmut_{n}" for n in (5, 6, 7, 8, 9, 10)),
)
_add(C, equivalent(NO_TOOL_STATE), *ns("xǁChatSemanticsǁstep", 2, 3, 4))
_add(C, killed("chat_notool_reason_counts_tools"), *ns("xǁChatSemanticsǁstep", 10, 12, 13))
_add(C, killed("chat_error_pattern_masks_arguments"), *ns("xǁChatSemanticsǁstep", 59, 62))
_add(C, killed("chat_error_pattern_label_rules"), *ns("xǁChatSemanticsǁstep", 63))
_add(C, killed("chat_monitor_observation"), *ns("xǁChatSemanticsǁstep", 73, 75))
_add(C, killed("chat_calls_are_checked_in_order"), *ns("xǁChatSemanticsǁstep", 76))


# --- toolsandbox -----------------------------------------------------------------------------
T = "toolsandbox.semantics"
_add(
    T,
    equivalent("the last component of a dotted name is the same whatever the number of splits"),
    *ns("x_exception_labels", 19, 22),
)
_add(T, killed("masked_exception_is_the_exception_line"), *ns("x_masked_exception", 9, 10, 11, 12, 14))
_add(T, killed("split_exception"), *ns("x_split_exception", 11, 15, 23))
_add(T, equivalent(NO_TOOL_STATE), *ns("xǁToolSandboxSemanticsǁstep", 2, 3, 4))
_add(T, killed("toolsandbox_monitor_observation"), *ns("xǁToolSandboxSemanticsǁstep", 30, 32))

# --- taubench --------------------------------------------------------------------------------
U = "taubench.semantics"
_add(
    U,
    equivalent(
        "lstrip takes a set of characters: 'XX#XX' strips 'X' and '#', and the text is case-folded "
        "first, so no upper-case X is left to strip"
    ),
    *ns("x__strip_prefix", 5, 10),
    *ns("x__occurrence", 16),
)
_add(
    U,
    equivalent("an empty prefix would add '(?:)?', which matches the empty string like no group at all"),
    *ns("x__occurrence", 17),
)
_add(U, killed("occurs_with_domain_prefixes"), *ns("x__strip_prefix", 14), *ns("x__occurrence", 9))
_add(U, killed("missing_entity_ids_rules"), *ns("x_id_like", 5, 6))
_add(
    U,
    killed("missing_entity_ids_rules"),
    *ns("x_missing_entity_ids", 6, 7, 8, 11, 12, 14, 17, 18, 19, 20, 25, 28, 30, 66, 67, 68, 69),
)
_add(U, killed("missing_entity_ids_ignores_filler_words"), *ns("x_missing_entity_ids", *range(43, 57)))
_add(U, killed("reason_cut_at_the_limit"), *ns("x_shorten", 3))
_add(U, killed("string_leaves_keep_their_key"), *ns("x_string_leaves", 1, 7, 8, 9, 10))
_add(U, equivalent(NO_TOOL_STATE), *ns("xǁTauSemanticsǁstep", 2, 3, 4, 5, 9, 10))
_add(U, killed("taubench_monitor_observation"), *ns("xǁTauSemanticsǁstep", 32, 34))

# --- inspect_logs ----------------------------------------------------------------------------
N = "inspect_logs.semantics"
_add(N, killed("no_tool_rule_verdicts_and_what_decided"), *ns("x__names", 5, 8, 9))
_add(N, killed("no_tool_rule_verdicts_and_what_decided"), *ns("x_no_tool_rule", 3, 5, 6, 14, 27, 43))
_add(N, killed("inspect_rules_see_type_and_message"), *ns("xǁInspectSemanticsǁerror_label", 3, 10))
_add(N, equivalent(NO_TOOL_STATE), *ns("xǁInspectSemanticsǁstep", 2, 3, 4))
_add(N, killed("inspect_parsing_error_is_said_once"), *ns("xǁInspectSemanticsǁstep", 31, 32, 33))
_add(N, killed("inspect_reason_of_an_error_without_message"), *ns("xǁInspectSemanticsǁstep", 36, 38))

# --- labels ----------------------------------------------------------------------------------
L = "labels"
_add(
    L,
    killed("bad_rule_files_name_the_file_and_the_fault"),
    *ns("x__rule", 2, 3, 4, 5, 14, 29, 36, 41, 44),
    *ns("x_load_label_rules", 39, 45, 52, 59, 60, 67, 68, 70),
)
_add(
    L,
    killed("unreadable_rule_files_name_the_file"),
    *ns("x_file_digest", 3, 4, 5, 6, 7),
    *ns("x_load_label_rules", 3, 7, 8, 10, 13, 14, 15, 16, 17, 23, 24, 25, 26, 27, 28, 29),
)
_add(
    L,
    equivalent("Python's codec names are case-insensitive: 'UTF-8' is 'utf-8'"),
    *ns("x_load_label_rules", 22),
)
_add(L, killed("masking_is_by_length_not_by_text"), *ns("x_mask_arguments", 3, 6))

# --- bfcl ------------------------------------------------------------------------------------
F = "bfcl.semantics"
_add(F, killed("bfcl_scalars_of_a_value"), *ns("x__atoms", 2, 3))
_add(
    F,
    equivalent(
        "an empty atom never decides: withheld_parameters needs it unmentioned in the earlier "
        "messages too (and an empty text is mentioned everywhere), information_fault skips atoms "
        "without a letter or digit before it asks"
    ),
    *ns("x_mentions", 4),
)
_add(F, killed("bfcl_withheld_value_across_several_user_messages"), *ns("x_withheld_parameters", 18, 24))
_add(
    F,
    killed("bfcl_withheld_parameters_skip_calls_that_do_not_bind"),
    *ns("x_withheld_parameters", 34, 41, 45),
)
_add(F, killed("bfcl_session_steps_only_its_own_actions"), *ns("xǁ_Sessionǁexecute", 2, 3, 5, 6, 7, 8))
_add(F, killed("bfcl_replay_steps_each_action_once_in_order"), *ns("xǁ_Sessionǁexecute", 21))
_add(F, killed("bfcl_decoded_steps_are_counted_per_turn"), *ns("x_make_run", 9, 10, 11))
_add(
    F,
    equivalent(
        "without success tracking the gold instance set is never read (every use checks track or gold)"
    ),
    *ns("xǁ_Sessionǁ__init__", 10),
)
_add(F, killed("bfcl_call_steps_after_a_reply_step_of_the_same_turn_are_actions"), *ns("x_make_run", 7))
_add(
    F,
    equivalent(
        "a call with a parse fault has no keyword arguments (every ParsedCall the parser makes with a "
        "fault leaves kwargs empty: adapters/bfcl/parse.py), so `dict(parsed.kwargs)` is `{}` for it too"
    ),
    *ns("x_make_run", 24),
)
_add(
    F,
    equivalent(
        "only results of decoded calls count for Y; the mutant adds those of undecoded calls, which "
        "are rejected before they run, with the result 'Error during execution: <the parse fault>', "
        "a text of the adapter that no ground-truth result can equal (argued, not proven)"
    ),
    *ns("xǁ_Sessionǁexecute", 25),
)
_add(
    F,
    killed("bfcl_success_failure_and_early_stop"),
    *ns("xǁ_Sessionǁ__init__", 16),
    *ns("xǁ_Sessionǁfinish", 7),
)
_add(F, killed("bfcl_inference_error_message"), *ns("x_inference_error_message", 3, 8))
_add(
    F,
    equivalent(
        "task() fills `said` for every turn that withholds a parameter, and information_fault "
        "returns before reading it for any other turn; task() is the only place a BfclTask is built"
    ),
    *ns("x_information_fault", 11, 13, 14),
)
_add(F, killed("bfcl_withheld_parameter_messages"), *ns("x_information_fault", 16, 17, 28, 29))
_add(F, killed("bfcl_withheld_parameter_messages"), *ns("xǁBfclTaskǁwithheld_functions", 1, 2, 3, 4, 5))
_add(
    F,
    equivalent(
        "a run with an inference error fails when its session starts; turns and decoded_steps only "
        "feed the per-turn check, which returns at once once Y is decided"
    ),
    *ns("x_inference_error_run", 6, 13),
)
_add(
    F,
    equivalent(
        "an empty turn as one step without calls: a step without calls is a reply (DecodedStep.is_reply), "
        "which make_run skips, exactly as for a turn without steps"
    ),
    *ns("x_run_from_strings", 3),
)
_add(F, killed("bfcl_reason_shows_at_most_160"), *ns("x__shown", 4, 5, 6, 8, 9))
_add(
    F,
    killed("bfcl_call_records"),
    *ns("x_check_and_run", 7, 13, 21, 22, 23, 28, 36, 125, 126, 127, 170, 171, 174, 177, 185),
)
_add(
    F,
    killed("bfcl_record_of_an_unclassified_error"),
    *ns("x_check_and_run", 140, 141, 142, 143, 144, 148, 157, 158, 159, 160, 161),
)


def results(work: Path) -> dict[str, str]:
    """The status of every mutant: ``name -> status``, from ``results-final.txt`` (mutmut's
    statuses with those of the mutants mutation.sh checked in one process after its budget,
    written by tests/mutation_summary.py) or, from an older run, ``results.txt``."""
    from mutation_summary import read_statuses  # beside this file (tests/)

    final = work / "results-final.txt"
    return read_statuses(str(final if final.exists() else work / "results.txt"))


def _function_line(source: Path, mutant: str) -> int:
    """The first line of the function or method a mutant name refers to, in the staged source."""
    local = mutant.rpartition(".")[2]
    base = re.sub(r"__mutmut_\d+$", "", local)
    if base.startswith("xǁ"):
        cls, _, func = base[2:].partition("ǁ")
    else:
        cls, func = "", base[2:]
    tree = ast.parse(source.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.name == func:
                    return min([item.lineno, *(d.lineno for d in item.decorator_list)])
        if not cls and isinstance(node, ast.FunctionDef) and node.name == func and node.col_offset == 0:
            return min([node.lineno, *(d.lineno for d in node.decorator_list)])
    raise LookupError(f"{mutant}: function not found in {source}")


def show(work: Path, mutant: str) -> tuple[int, str, str]:
    """(source line, original line, mutated line) of a mutant, from ``mutmut show``."""
    text = subprocess.run(
        [str(VENV / "bin" / "mutmut"), "show", mutant],
        cwd=work / "stage",
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    lines = text.splitlines()
    path = next(ln[4:].strip() for ln in lines if ln.startswith("--- "))
    start = 0
    old_no = 0
    minus: list[tuple[int, str]] = []
    plus: list[str] = []
    for ln in lines:
        m = re.match(r"@@ -(\d+)", ln)
        if m:
            old_no = int(m.group(1))
            start = old_no
            continue
        if not start or ln.startswith(("--- ", "+++ ")):
            continue
        if ln.startswith("-"):
            minus.append((old_no, ln[1:]))
            old_no += 1
        elif ln.startswith("+"):
            plus.append(ln[1:])
        else:
            old_no += 1
    first = _function_line(work / "stage" / path, mutant)
    line = first + minus[0][0] - 1 if minus else first
    return line, " ".join(s.strip() for _, s in minus), " ".join(s.strip() for s in plus)


def _cell(text: str) -> str:
    return "`" + text.replace("|", "\\|").replace("`", "'") + "`" if text else ""


def confirm(work: Path, names: list[str]) -> dict[str, bool]:
    """For each killed verdict: the test fails with the mutant and passes without it."""
    mutants = work / "stage" / "mutants"
    shutil.copy(REPO / "tests" / "test_mutation_adapters.py", mutants / "tests" / "test_mutation_adapters.py")
    env = {**os.environ, "PYTHONPATH": "src"}
    env.pop("MUTANT_UNDER_TEST", None)
    base = [str(VENV / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x"]
    target = ["tests/test_mutation_adapters.py"]
    tests = sorted({VERDICTS[n][1] for n in names})
    clean = {
        t: subprocess.run([*base, *target, "-k", t], cwd=mutants, env=env, capture_output=True).returncode
        == 0
        for t in tests
    }
    out: dict[str, bool] = {}
    for name in names:
        test = VERDICTS[name][1]
        run = subprocess.run(
            [*base, *target, "-k", test],
            cwd=mutants,
            env={**env, "MUTANT_UNDER_TEST": "prefixexec.adapters." + name},
            capture_output=True,
        )
        out[name] = clean[test] and run.returncode == 1
    return out


# --- the runs --------------------------------------------------------------------------------

_PREFIX = "tests/test_rollouts_adapters.py"
_ROLLOUTS = [
    _PREFIX,
    f"--deselect={_PREFIX}::test_every_failing_rollout_has_its_evidence[records-demo.jsonl]",
]
_AUDIT = "tests/test_audit_generic.py::"
#: adapter -> (module to mutate, test selection, probe mutant, probe test). The selections leave
#: out tests that read files mutation.sh does not stage (benchmarks/, the package's own source
#: layout) and, for bfcl, the four slowest audit tests (see tests/mutation-adapters.md).
ADAPTERS: dict[str, tuple[str, list[str], str, str]] = {
    "chat": (
        "src/prefixexec/adapters/chat/semantics.py",
        [
            "tests/test_chat.py",
            "tests/test_labels.py",
            *_ROLLOUTS,
            f"{_AUDIT}test_chat_audit_on_the_test_transcripts",
            f"{_AUDIT}test_chat_mutants_of_a_hand_made_call",
            f"{_AUDIT}test_chat_audit_fails_when_schemas_are_not_checked",
        ],
        "prefixexec.adapters.chat.semantics.x_error_labels__mutmut_1",
        "tests/test_chat.py",
    ),
    "toolsandbox": (
        "src/prefixexec/adapters/toolsandbox/semantics.py",
        ["tests/test_toolsandbox.py", "tests/test_toolsandbox_real.py", *_ROLLOUTS],
        "prefixexec.adapters.toolsandbox.semantics.x_split_exception__mutmut_1",
        "tests/test_toolsandbox.py",
    ),
    "inspect_logs": (
        "src/prefixexec/adapters/inspect_logs/semantics.py",
        [
            "tests/test_inspect_logs.py",
            "tests/test_inspect_real.py",
            "--deselect=tests/test_inspect_real.py::test_the_package_layout_has_no_cycle",
            f"{_AUDIT}test_inspect_audit_on_the_test_logs",
            f"{_AUDIT}test_inspect_audit_fails_with_a_wrong_error_label",
        ],
        "prefixexec.adapters.inspect_logs.semantics.x_is_success__mutmut_1",
        "tests/test_inspect_logs.py",
    ),
    "labels": (
        "src/prefixexec/adapters/labels.py",
        [
            "tests/test_labels.py",
            "tests/test_chat.py",
            "tests/test_toolsandbox.py",
            "tests/test_taubench_rules.py",
            "tests/test_inspect_logs.py",
        ],
        "prefixexec.adapters.labels.x_mask_arguments__mutmut_1",
        "tests/test_labels.py",
    ),
    "taubench": (
        "src/prefixexec/adapters/taubench/semantics.py",
        [
            "tests/test_taubench.py",
            "tests/test_taubench_real.py",
            "tests/test_taubench_rules.py",
            *_ROLLOUTS,
            f"{_AUDIT}test_taubench_audit_on_the_v1_fixture",
            f"{_AUDIT}test_taubench_audit_fails_when_labels_are_wrong",
            f"{_AUDIT}test_taubench_gold_recording_check",
            f"{_AUDIT}test_taubench_no_tool_rule_check",
        ],
        "prefixexec.adapters.taubench.semantics.x_normalise__mutmut_1",
        "tests/test_taubench_rules.py",
    ),
    "bfcl": (
        "src/prefixexec/adapters/bfcl/semantics.py",
        [
            "tests/test_bfcl.py",
            "tests/test_bfcl_real.py",
            "tests/test_bfcl_rules.py",
            "tests/test_bfcl_audit.py",
            "tests/test_bfcl_security.py",
            "--deselect=tests/test_bfcl.py::test_benchmark_script_runs_and_reports_both_times",
            "--deselect=tests/test_bfcl_rules.py::test_the_package_has_no_import_cycle_and_init_only_reexports",
            "--deselect=tests/test_bfcl_security.py::test_no_eval_exec_or_compile_in_the_adapter",
            "--deselect=tests/test_bfcl_audit.py::test_cross_check_with_bfcls_own_executor_and_checker",
            "--deselect=tests/test_bfcl_audit.py::test_gold_audit_per_category",
            "--deselect=tests/test_bfcl_rules.py::test_audit_lists_the_steps_bfcls_loop_drops",
            "--deselect=tests/test_bfcl_audit.py::test_audit_command",
        ],
        "prefixexec.adapters.bfcl.semantics.x_mentions__mutmut_1",
        # Without the two tests of that file that read what mutation.sh does not stage.
        "tests/test_bfcl_rules.py"
        " --deselect=tests/test_bfcl_rules.py::test_the_package_has_no_import_cycle_and_init_only_reexports"
        " --deselect=tests/test_bfcl_rules.py::test_audit_lists_the_steps_bfcls_loop_drops",
    ),
}


def environment(work: Path, adapter: str) -> dict[str, str]:
    """The MUTATION_* variables of one adapter's run (and the cache plugin below on the path)."""
    mutate, tests, probe, probe_test = ADAPTERS[adapter]
    return {
        "MUTATION_CHILDREN": os.environ.get("MUTATION_CHILDREN", "1"),
        "MUTATION_NICE": os.environ.get("MUTATION_NICE", "5"),
        "MUTATION_MUTATE": mutate,
        # "-p mutation_report": this module, as a pytest plugin (its fixture below).
        "MUTATION_TESTS": " ".join([*tests, "tests/test_mutation_adapters.py", "-p", "mutation_report"]),
        "MUTATION_PROBE": probe,
        "MUTATION_PROBE_TEST": probe_test,
        "PYTHONPATH": str(work / "plugin"),
    }


def run(work: Path, adapters: list[str]) -> int:
    """Run mutation.sh for each adapter, then print its wall time and report."""
    status = 0
    begin = time.monotonic()
    # The plugin's directory must exist when mutmut starts (Python caches a missing sys.path entry).
    (work / "plugin").mkdir(parents=True, exist_ok=True)
    shutil.copy(Path(__file__), work / "plugin" / "mutation_report.py")
    for adapter in adapters or list(ADAPTERS):
        env = {**os.environ, **environment(work, adapter)}
        print(
            f"== {adapter}: " + " ".join(f"{k}={v!r}" for k, v in environment(work, adapter).items()),
            flush=True,
        )
        start = time.monotonic()
        done = subprocess.run(
            ["bash", str(REPO / "tests" / "mutation.sh"), str(work / adapter)], env=env, check=False
        )
        print(
            f"== {adapter}: mutation.sh exit {done.returncode}, wall time {time.monotonic() - start:.0f} s",
            flush=True,
        )
        status = status or done.returncode
        if (work / adapter / "results.txt").exists():
            main([str(work / adapter)])
    print(f"== all: wall time {time.monotonic() - begin:.0f} s", flush=True)
    return status


# pytest plugin (loaded in the staged runs with "-p mutation_report"): functools caches of the code
# under test keep results across tests, so mutmut's per-test stats would miss the tests that reuse
# a cached value and a forked worker would reuse values computed without the mutant. BFCL's
# task() (which runs withheld_parameters) and chat's schema validators are cleared before each test.
try:
    import pytest
except ImportError:  # pragma: no cover - the script itself needs no pytest
    pytest = None  # type: ignore[assignment]  # reporting does not need pytest

if pytest is not None:

    @pytest.fixture(autouse=True)
    def _mutation_fresh_caches() -> Iterator[None]:
        for module, function in (
            ("prefixexec.adapters.bfcl.semantics", "task"),
            ("prefixexec.adapters.chat.semantics", "_validator"),
        ):
            loaded = sys.modules.get(module)
            if loaded is not None:
                getattr(loaded, function).cache_clear()
        yield


def main(argv: list[str]) -> int:
    if argv and argv[0] == "run":
        return run(Path(argv[1]), argv[2:])
    work = Path(argv[0])
    status = results(work)
    counts = Counter(status.values())
    survivors = sorted(n for n, s in status.items() if s not in ("killed", "not checked", "skipped"))
    rows: list[tuple[int, int, str]] = []
    verdict_count: Counter[str] = Counter()
    short = {n: n.removeprefix("prefixexec.adapters.") for n in survivors}
    for name in survivors:
        verdict, why = VERDICTS.get(short[name], ("not analysed", "not yet shown equivalent or killed"))
        if status[name] == "timeout" and verdict == "not analysed":
            verdict = "timeout"
        verdict_count[verdict] += 1
        line, old, new = show(work, name)
        why_cell = f"`tests/test_mutation_adapters.py -k {why}`" if verdict == KILLED else why
        number = int(name.rpartition("_")[2])
        rows.append(
            (
                line,
                number,
                f"| `{short[name]}` | {line} | {_cell(old)} | {_cell(new)} | {verdict} | {why_cell} |",
            )
        )
    checked = sum(v for k, v in counts.items() if k not in ("not checked", "skipped"))
    by_suite = counts["killed"]
    by_new = verdict_count[KILLED]
    eq = verdict_count[EQUIVALENT]
    score = Fraction(by_suite + by_new, checked - eq) if checked > eq else Fraction(0)
    print(f"mutmut statuses: {dict(sorted(counts.items()))}")
    print(
        f"generated {len(status)}, checked {checked}, killed by the suite {by_suite}, "
        f"killed by a new test {by_new}, equivalent {eq}, survives (gap) {verdict_count[GAP]}, "
        f"not analysed {verdict_count['not analysed']}, timeouts {counts['timeout']}"
    )
    base = checked - eq
    print(f"score (suite + new) / (checked - equivalent) = {by_suite + by_new}/{base} = {float(score):.1%}")
    print(f"score of the suite alone = {by_suite}/{base} = {float(Fraction(by_suite, base)):.1%}")
    print()
    print("| mutant (prefixexec.adapters.) | line | original | mutant | verdict | test / why |")
    print("| --- | --- | --- | --- | --- | --- |")
    print("\n".join(row for _, _, row in sorted(rows)))
    if len(argv) > 1 and argv[1] == "--confirm":
        to_check = [short[n] for n in survivors if VERDICTS.get(short[n], ("",))[0] == KILLED]
        confirmed = confirm(work, to_check)
        bad = [n for n, ok in confirmed.items() if not ok]
        print(f"\nconfirmed {len(confirmed) - len(bad)} of {len(confirmed)} killed verdicts")
        for n in bad:
            print(f"  NOT confirmed: {n} ({VERDICTS[n][1]})")
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
