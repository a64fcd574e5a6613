"""report.html's drill-down, driven in real headless Chromium through Selenium (REP-DRILL).

Needs Debian's `chromium` and `chromium-driver` (tests/run.sh installs both) and the `selenium`
package (test extra). Without them the test fails; it is never skipped. Real data: the tau-bench
v1 GPT-4o airline run; the expected counts are counted from the per-rollout rows the same report
wrote (rollouts.jsonl), which tests/test_rollouts.py checks against the raw file.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prefixexec.cli import main

from conftest import REAL

TAU = REAL / "tau-bench-v1" / "gpt-4o-airline.json"


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("drill") / "r"
    argv = ["report", "--adapter", "taubench", str(TAU), "--out", str(out), "--bootstrap", "0", "--quiet"]
    assert main(argv) == 0
    return out


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary = shutil.which("chromium")
    driver_path = shutil.which("chromedriver")
    assert binary and driver_path, (
        "Debian chromium and chromium-driver are needed (tests/run.sh installs them)"
    )
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--window-size=1400,1000",
    ):
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def rows_of(report_dir: Path) -> list[dict[str, Any]]:
    lines = (report_dir / "rollouts.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


@pytest.mark.spec("REP-DRILL", "REP-HTML")
def test_filter_expand_and_sort_in_chromium(report_dir: Path, browser: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    rows = rows_of(report_dir)
    failing = [r for r in rows if not r["executable"]]
    by_label = Counter(r["label"] or "unlabelled" for r in failing)
    assert len(failing) == 52 and by_label["information"] == 4  # README: TER 37/50 ... labels 13/19/4/16

    browser.get((report_dir / "report.html").as_uri())

    def visible_rows() -> list[Any]:
        return [r for r in browser.find_elements(By.CSS_SELECTOR, "#drill tr.rollout") if r.is_displayed()]

    assert len(visible_rows()) == 52
    assert browser.find_element(By.ID, "drill-count").text == "52 shown"
    Select(browser.find_element(By.ID, "filter-label")).select_by_value("information")
    shown = visible_rows()
    assert len(shown) == by_label["information"]
    assert browser.find_element(By.ID, "drill-count").text == "4 shown"
    assert all(r.get_attribute("data-label") == "information" for r in shown)

    first = shown[0]
    trace = browser.find_element(By.ID, first.get_attribute("id") + "-trace")
    assert not trace.is_displayed()
    first.find_element(By.CSS_SELECTOR, "button.expand").click()
    assert trace.is_displayed()
    failed = trace.find_elements(By.CSS_SELECTOR, "li.fail")
    assert len(failed) == 1
    cells = first.find_elements(By.TAG_NAME, "td")
    task, trial, fed, tool = cells[1].text, int(cells[2].text), int(cells[3].text), cells[5].text
    expected = next(r for r in failing if r["task_id"] == task and r["trial"] == trial)
    assert fed == expected["fed"] and tool == expected["failing"]["tool"]
    assert failed[0].text.startswith(f"FAIL  {tool}(") and "[information]" in failed[0].text
    items = trace.find_elements(By.TAG_NAME, "li")
    assert items.index(failed[0]) == fed - 1  # the highlighted action is a_FED
    assert len(items) == expected["T"]
    assert background(failed[0]) != background(items[0]) if fed > 1 else True

    # Sorting by FED (descending on the second click) orders the visible rows.
    Select(browser.find_element(By.ID, "filter-label")).select_by_value("")
    header = browser.find_elements(By.CSS_SELECTOR, "#drill thead th")[3]
    header.click()
    header.click()
    feds = [int(r.find_elements(By.TAG_NAME, "td")[3].text) for r in visible_rows()]
    assert feds == sorted((r["fed"] for r in failing), reverse=True)


def background(element: Any) -> str:
    return str(element.value_of_css_property("background-color"))


@pytest.mark.spec("REP-DRILL", "REP-HTML")
def test_the_file_list_links_to_the_files(report_dir: Path, browser: Any) -> None:
    from selenium.webdriver.common.by import By

    browser.get((report_dir / "report.html").as_uri())
    links = browser.find_elements(By.CSS_SELECTOR, "#files a")
    names = [link.text for link in links]
    assert "rollouts.jsonl" in names and "pec_elig.pdf" in names
    for link in links:
        target = Path(link.get_attribute("href").removeprefix("file://"))
        assert target.parent == report_dir and target.is_file()


@pytest.mark.spec("REP-DRILL")
def test_the_condition_column_stays_short_on_a_laptop(report_dir: Path, browser: Any) -> None:
    # Issue 30: in the demo's page the condition column wrapped to about 8 lines a row. At a
    # laptop's width (1366 px) each condition is its method on one line and its dataset / model
    # on at most two more, and the table fits the page.
    from selenium.webdriver.common.by import By

    browser.set_window_size(1366, 900)
    try:
        browser.get((report_dir / "report.html").as_uri())
        cells = browser.find_elements(By.CSS_SELECTOR, "#drill tr.rollout td.condition")
        assert len(cells) == 52
        lines = browser.execute_script(
            """
            return arguments[0].map(function (td) {
              var boxes = Array.from(td.querySelectorAll('span')).map(function (s) {
                return s.getBoundingClientRect();
              });
              var top = Math.min.apply(null, boxes.map(function (b) { return b.top; }));
              var bottom = Math.max.apply(null, boxes.map(function (b) { return b.bottom; }));
              return (bottom - top) / parseFloat(getComputedStyle(td).lineHeight);
            });
            """,
            cells,
        )
        assert max(lines) <= 3.2, max(lines)
        method = cells[0].find_element(By.CSS_SELECTOR, "span.method")
        assert method.text.endswith("tool-calling") and method.size["height"] < 30  # one line
        width = browser.execute_script("return document.querySelector('div.drill').scrollWidth")
        room = browser.execute_script("return document.querySelector('div.drill').clientWidth")
        assert width <= room  # no sideways scrolling needed
    finally:
        browser.set_window_size(1400, 1000)


@pytest.mark.spec("REP-DRILL", "OUT-REJECTIONS")
def test_the_trace_shows_later_rejections_not_counted(report_dir: Path, browser: Any) -> None:
    # Issue 42: the expanded trace shows every rejected call; the later ones in red, marked as not
    # counted, with their label. The rows the same report wrote (rollouts.jsonl) list them.
    from selenium.webdriver.common.by import By

    rows = [r for r in rows_of(report_dir) if not r["executable"]]
    index, row = next((i, r) for i, r in enumerate(rows) if len(r["rejections"]) > 1)
    browser.get((report_dir / "report.html").as_uri())
    browser.find_element(By.CSS_SELECTOR, f"#r{index} button.expand").click()
    trace = browser.find_element(By.ID, f"r{index}-trace")
    items = trace.find_elements(By.TAG_NAME, "li")
    later = trace.find_elements(By.CSS_SELECTOR, "li.rejected")
    assert [items.index(li) + 1 for li in later] == [r["position"] for r in row["rejections"][1:]]
    for li, r in zip(later, row["rejections"][1:], strict=True):
        assert li.text.startswith("REJ  ") and f"[{r['label'] or 'unlabelled'}]" in li.text
        assert "[after the first failure (not counted)]" in li.text and "recovered: " in li.text
    assert background(later[0]) == background(items[0]) or row["fed"] == 1  # not highlighted
    fail = trace.find_element(By.CSS_SELECTOR, "li.fail")
    assert "recovered: " in fail.text
