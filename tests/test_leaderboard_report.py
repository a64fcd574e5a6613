"""The report's leaderboard: its files, and its table sorted in real headless Chromium (LB-REPORT).

Needs Debian's `chromium` and `chromium-driver` (tests/run.sh installs both), as
tests/test_report_drill.py, whose browser fixture this module uses. The expected orders are read
from the leaderboard.json the same report wrote, which tests/test_leaderboard.py checks.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_report_drill import browser  # noqa: F401  # the shared Chromium fixture

from prefixexec.cli import main
from prefixexec.report import FILES

from conftest import REPO

INPUT = REPO / "tests" / "golden" / "report_input.jsonl"


@pytest.fixture(scope="module")
def board_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("board") / "r"
    assert main(["report", str(INPUT), "--out", str(out), "--bootstrap", "200", "--quiet"]) == 0
    return out


@pytest.mark.spec("LB-REPORT")
def test_report_writes_the_leaderboard(board_dir: Path) -> None:
    names = [f"leaderboard.{ext}" for ext in ("md", "tex", "csv", "json", "png", "svg", "pdf")]
    assert set(names) <= set(FILES) and all((board_dir / n).is_file() for n in names)
    doc = json.loads((board_dir / "leaderboard.json").read_text(encoding="utf-8"))
    assert doc["settings"]["shared_tasks"] is True and doc["skipped"] == []
    summary = json.loads((board_dir / "summary.json").read_text(encoding="utf-8"))
    assert set(names) <= set(summary["files"])
    page = (board_dir / "report.html").read_text(encoding="utf-8")
    assert page.count("<script>") == 1 and 'id="leaderboard-0"' in page and 'id="figure-leaderboard"' in page


@pytest.mark.spec("LB-REPORT")
def test_leaderboard_sorts_in_chromium(board_dir: Path, browser: Any) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By

    doc = json.loads((board_dir / "leaderboard.json").read_text(encoding="utf-8"))
    ds = doc["datasets"][0]
    browser.get((board_dir / "report.html").as_uri())

    def systems() -> list[str]:
        rows = browser.find_elements(By.CSS_SELECTOR, "#leaderboard-0 tbody tr")
        return [r.find_elements(By.TAG_NAME, "td")[0].text for r in rows]

    assert systems() == [s["system"] for s in ds["systems"]]  # best success first
    headers = browser.find_elements(By.CSS_SELECTOR, "#leaderboard-0 thead th")
    ter = next(h for h in headers if h.text == "TER")
    ter.click()  # ascending
    ter.click()  # descending: highest TER first, ties in the page's previous order
    values = [s["metrics"]["TER"]["value"] for s in ds["systems"]]
    expected = [s["system"] for _, s in sorted(zip(values, ds["systems"], strict=True), key=lambda p: -p[0])]
    got = systems()
    assert [v for v in sorted(values, reverse=True)] == [
        next(s for s in ds["systems"] if s["system"] == name)["metrics"]["TER"]["value"] for name in got
    ]
    assert set(got) == set(expected)
    # Undefined values (RR of a system with no failing rollout) sort last in both directions.
    rr = next(h for h in headers if h.text == "RR")
    rr.click()
    undefined = [s["system"] for s in ds["systems"] if s["metrics"]["RR"]["value"] is None]
    assert undefined and systems()[-len(undefined) :] == undefined
