"""Shared test settings: Hypothesis profiles and paths.

Profiles (HYPOTHESIS_PROFILE): ``dev`` (default, quick: 100 examples per property), ``ci``
(what tests/run.sh selects: 200 examples per property, twice Hypothesis' default, run over the
pytest-xdist workers; 300 until issue 16's two-minute target for the whole test command, which
300 missed by 5 s on an idle machine) and ``thorough`` (1,000 examples, for a longer run before a release:
``HYPOTHESIS_PROFILE=thorough bash tests/run.sh``). A test that sets its own ``max_examples``
keeps it in every profile. Failing examples are kept in Hypothesis' example database and tried
first on the next run.

pytest-xdist (tests/run.sh runs ``--dist loadgroup``): :func:`pytest_collection_modifyitems` puts
the tests that use one of the session-scoped fixtures below into one ``xdist_group`` per fixture,
and the tests of a module that share one of its own module- or session-scoped fixtures (a report
folder, an inspect run, a built binary, a wheel) into one group per module, so such a fixture is
made once, on one worker, instead of once on every worker that happens to receive one of its
tests. xdist's own ``loadgroup`` cannot see these groups under pytest 9 (it appends the group to
``item._nodeid``, which pytest 9 no longer reads), so :class:`FixtureGroups` schedules them: the
workers write each grouped test's node id and group to a file the controller names, and the
controller's scheduler hands each group to one worker as one unit (largest first), every other
test one by one.
"""

from __future__ import annotations

import io
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile(
    "ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

REPO = Path(__file__).resolve().parent.parent
#: The real third-party runs the tests read, each source with its SOURCE.md and licence
#: (docs/development.md); nothing outside the checkout is read (REPO-STANDALONE).
REAL = REPO / "tests" / "data" / "real"
def real_text(path: Path) -> str:
    """The text of a real run, decompressed when it is kept compressed (``.zst``, ``.gz``): what
    the tests count independently is read from the raw JSON with the standard library and
    ``zstandard``, not with prefixexec's readers."""
    data = path.read_bytes()
    if path.name.endswith(".zst"):
        import zstandard

        data = zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True).read()
    elif path.name.endswith(".gz"):
        import gzip

        data = gzip.decompress(data)
    return data.decode("utf-8")


#: Where the real runs lived before they were copied in; a test that reads anything there fails.
OUTSIDE = str(REPO.parent / "shared")

#: Paths outside the checkout that a test of this process opened or listed (REPO-STANDALONE).
OUTSIDE_READS: list[str] = []


def _standalone_audit(event: str, args: tuple[Any, ...]) -> None:
    """An audit hook (REPO-STANDALONE): a file opened or a folder listed under ``../shared`` is
    recorded, and the open refused, so that no test passes only because that folder is there."""
    if event not in ("open", "os.listdir", "os.scandir") or not args:
        return
    path = args[0]
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, str) or "shared" not in path:
        return
    full = os.path.normpath(os.path.abspath(path))
    if full == OUTSIDE or full.startswith(OUTSIDE + os.sep):
        OUTSIDE_READS.append(full)
        raise PermissionError(f"REPO-STANDALONE: a test read {full}, outside the checkout")


sys.addaudithook(_standalone_audit)


@pytest.fixture(autouse=True)
def _reads_nothing_outside() -> Iterator[None]:
    """Fail the test that opened or listed a path under ``../shared`` (REPO-STANDALONE), even when
    the code under test turned the refused open into an error message."""
    before = len(OUTSIDE_READS)
    yield
    assert OUTSIDE_READS[before:] == [], f"read outside the checkout: {OUTSIDE_READS[before:]}"


#: The file in which xdist workers tell the controller the groups (set by the controller).
GROUPS_FILE = "PREFIXEXEC_XDIST_GROUPS_FILE"


def pytest_configure(config: pytest.Config) -> None:
    # pytest-xdist registers this marker too; registered here as well so that --strict-markers
    # accepts it when pytest runs without xdist (-p no:xdist).
    config.addinivalue_line("markers", "xdist_group(name): run these tests on the same xdist worker")
    xdist = config.pluginmanager.hasplugin("xdist")  # the hook below is pytest-xdist's
    controller = xdist and not os.environ.get("PYTEST_XDIST_WORKER")
    if controller and config.getoption("dist", "no") == "loadgroup":
        fd, path = tempfile.mkstemp(prefix="prefixexec-xdist-groups-", suffix=".json")
        os.close(fd)
        os.environ[GROUPS_FILE] = path  # the workers, started after this, inherit it
        config.add_cleanup(lambda: (os.environ.pop(GROUPS_FILE, None), os.unlink(path)))
        config.pluginmanager.register(FixtureGroups(Path(path)), "prefixexec-fixture-groups")


class FixtureGroups:
    """A pytest-xdist scheduler factory: the groups of :func:`pytest_collection_modifyitems`."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        from xdist.scheduler import LoadScopeScheduling

        path = self.path

        class Scheduler(LoadScopeScheduling):  # type: ignore[misc]  # xdist ships no type for it
            groups: dict[str, str] | None = None

            def _split_scope(self, nodeid: str) -> str:
                # Called once the workers have collected (and so written the file).
                if self.groups is None:
                    text = path.read_text(encoding="utf-8")
                    self.groups = json.loads(text) if text else {}
                return self.groups.get(nodeid, nodeid)

        return Scheduler(config, log)


#: Session-scoped fixtures of this file whose tests run on one xdist worker (one group each).
SHARED_FIXTURES = ("drawn_report",)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Group the tests sharing an expensive fixture (see the module docstring); one group a test."""
    for item in items:
        if item.get_closest_marker("xdist_group") is not None:
            continue
        info = getattr(item, "_fixtureinfo", None)
        if info is None:
            continue
        shared = [name for name in SHARED_FIXTURES if name in item.fixturenames]
        if shared:
            item.add_marker(pytest.mark.xdist_group(f"fixture-{shared[0]}"))
            continue
        module = item.nodeid.split("::", 1)[0]
        for name in item.fixturenames:
            defs = info.name2fixturedefs.get(name)
            if defs and defs[-1].scope in ("module", "session") and defs[-1].baseid == module:
                item.add_marker(pytest.mark.xdist_group(module))
                break
    target = os.environ.get(GROUPS_FILE)
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if target and worker:
        groups = {}
        for item in items:
            mark = item.get_closest_marker("xdist_group")
            if mark is not None:
                groups[item.nodeid] = str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
        # Every worker writes the same content; each writes its own file and renames it into place.
        mine = Path(f"{target}.{worker}")
        mine.write_text(json.dumps(groups, sort_keys=True), encoding="utf-8")
        os.replace(mine, target)


@dataclass(frozen=True)
class DrawnReport:
    """A ``prefixexec report`` run: its arguments, exit status, standard output and error."""

    folder: Path
    argv: list[str]
    status: int
    stdout: str
    stderr: str


@pytest.fixture(scope="session")
def drawn_report(tmp_path_factory: pytest.TempPathFactory) -> DrawnReport:
    """``prefixexec report tests/golden/report_input.jsonl --bootstrap 300 --seed 7 --quiet``, run
    once (in this process) with every figure drawn, for the tests that read a complete report
    folder without needing particular options: tests/test_report_html.py,
    tests/test_report_figures.py and tests/test_report.py (about 4.5 s of CPU a report). Tests
    must not change the folder."""
    from prefixexec.cli import main

    folder = tmp_path_factory.mktemp("drawn") / "report"
    argv = ["report", str(REPO / "tests" / "golden" / "report_input.jsonl"), "--out", str(folder),
            "--bootstrap", "300", "--seed", "7", "--quiet"]  # fmt: skip
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(argv)
    return DrawnReport(folder, argv, status, out.getvalue(), err.getvalue())


@pytest.fixture
def figures_not_drawn(monkeypatch: pytest.MonkeyPatch) -> None:
    """Replace only matplotlib's drawing of a report's figures (``figures.render``) by a marker.

    Drawing the three figures in three formats (PNG at 300 dpi, SVG, PDF) is most of a report's
    time (about 3.5 s of CPU of about 4.5 s for tests/golden/report_input.jsonl). Tests that check
    tables, summary.json, decomposition.md or rollouts.jsonl use this fixture: the command still
    runs end to end and still builds every figure from the report (``pec_figure``,
    ``elig_figure``, ``labels_figure``); only the rendering to bytes is skipped. The drawn files
    are checked elsewhere: tests/test_report.py's golden report and
    test_report_writes_exactly_the_files_reproducibly (every file, byte for byte, twice and split
    over files) and test_cli_quiet_and_stdout, tests/test_report_figures.py (formats, size,
    reproducibility, with and without intervals), tests/test_report_html.py and
    tests/test_report_drill.py (the page in Chromium) and tests/test_hostile.py (hostile names).
    """
    from prefixexec.report import figures

    def marker(fig: object, fmt: str) -> bytes:
        assert fmt in figures.FIGURE_FORMATS
        return f"figure not drawn ({fmt})".encode("ascii")

    monkeypatch.setattr(figures, "render", marker)
