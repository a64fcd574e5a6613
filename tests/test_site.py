"""``leaderboard --site DIR``: a static site from real tau2 submissions, checked in headless
Chromium (spec/site.md, SITE-*).

Needs Debian's `chromium` and `chromium-driver` (tests/run.sh installs both), as
tests/test_report_drill.py, whose browser fixture this module uses. Real data: three tau2-bench
airline submissions and the two retail runs of tau2's gym split (tests/data/real/tau2-leaderboard);
the failing counts are the independent counts of tests/test_leaderboard.py's ``tau2_counts``
(simulations minus fully executable ones), pinned there against the raw files.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest
from test_leaderboard import AIRLINE, RETAIL_GYM, tau2_counts
from test_report_drill import browser  # noqa: F401  # the shared Chromium fixture

import prefixexec
from prefixexec.cli import main
from prefixexec.site import ClaimRow, DomainBoard, write_site

from conftest import REAL

FILES = [*AIRLINE, *RETAIL_GYM]

#: Text boxes of a page that overlap (1 px of slack): every text node's client rectangles,
#: compared pairwise after a sweep over x. Returns the first few overlapping pairs.
OVERLAPS_JS = """
var rects = [];
var walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
var node, n = 0;
while ((node = walker.nextNode())) {
  if (!node.textContent.trim()) { continue; }
  var range = document.createRange();
  range.selectNodeContents(node);
  Array.from(range.getClientRects()).forEach(function (r) {
    if (r.width > 0 && r.height > 0) {
      rects.push({id: n, x0: r.left + window.scrollX, x1: r.right + window.scrollX,
                  y0: r.top + window.scrollY, y1: r.bottom + window.scrollY,
                  text: node.textContent.slice(0, 40)});
    }
  });
  n += 1;
}
rects.sort(function (a, b) { return a.y0 - b.y0; });
var found = [];
for (var i = 0; i < rects.length && found.length < 5; i++) {
  for (var j = i + 1; j < rects.length && rects[j].y0 < rects[i].y1 - 1; j++) {
    var a = rects[i], b = rects[j];
    if (a.id !== b.id && a.x0 < b.x1 - 1 && b.x0 < a.x1 - 1 && a.y0 < b.y1 - 1 && b.y0 < a.y1 - 1) {
      found.push(a.text + ' / ' + b.text);
    }
  }
}
return found;
"""


#: Titles, headings, captions and links of the navigation that the window's edge cuts.
CUT_JS = """
var shown = document.querySelectorAll('caption, p.table-title, p.caption, h1, h2, nav a');
return Array.from(shown).filter(function (t) {
  var r = t.getBoundingClientRect(); return r.left < 0 || r.right > window.innerWidth;
}).map(function (t) { return t.textContent.slice(0, 60); });
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site") / "s"
    argv = ["leaderboard", *map(str, FILES), "--bootstrap", "200", "--site", str(out), "--quiet"]
    assert main([*argv, "--output", str(out.parent / "board.md"), "--format", "md"]) == 0
    return out


SUBMISSIONS = REAL / "tau2-submissions"


@pytest.fixture(scope="module")
def submissions_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site of tau2's real submissions folder (LB-SITE-HOOK: per domain, with its claims)."""
    out = tmp_path_factory.mktemp("site") / "s"
    argv = ["leaderboard", str(SUBMISSIONS), "--bootstrap", "200", "--site", str(out), "--quiet"]
    assert main([*argv, "--output", str(out.parent / "board.json"), "--format", "json"]) == 0
    return out


def pages(site: Path) -> list[Path]:
    return sorted(site.glob("*.html"))


@pytest.mark.spec("SITE-PAGES", "SITE-STATIC")
def test_the_site_has_its_pages(site: Path) -> None:
    manifest = json.loads((site / "site.json").read_text(encoding="utf-8"))
    assert manifest["format"] == "prefixexec-site" and sorted(manifest["files"]) == sorted(
        p.name for p in site.iterdir()
    )
    # two domains (tau-bench/airline: 3 systems, tau-bench/retail: 2): index, claims, 2 domain
    # pages, 5 system pages and their 5 figures, site.json
    names = {p.name for p in site.iterdir()}
    assert names == {
        "index.html",
        "claims.html",
        "domain-1.html",
        "domain-2.html",
        *(f"system-1-{s}.{ext}" for s in (1, 2, 3) for ext in ("html", "svg")),
        *(f"system-2-{s}.{ext}" for s in (1, 2) for ext in ("html", "svg")),
        "site.json",
    }
    for page in pages(site):
        text = page.read_text(encoding="utf-8")
        assert "<script" not in text and "url(" not in text and "@import" not in text, page.name
        targets = re.findall(r'(?:href|src)="([^"]*)"', text)
        assert targets and all(re.fullmatch(r"[a-z0-9-]+\.(html|svg)", t) for t in targets), page.name
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "tau-bench/airline" in index and "tau-bench/retail" in index


@pytest.mark.spec("SITE-NUMBERS")
def test_domain_cells_are_the_leaderboards_cells(site: Path) -> None:
    md = (site.parent / "board.md").read_text(encoding="utf-8")
    page = (site / "domain-1.html").read_text(encoding="utf-8")
    # The Markdown's systems table of the first dataset: every value cell is on the page.
    rows = [line for line in md.splitlines() if line.startswith("| claude-sonnet-4-5 / llm_agent")]
    assert rows
    cells = [c.strip() for c in rows[0].strip("|").split("|")][2:]
    assert cells and all(f'<td class="num">{c}</td>' in page for c in cells)


@pytest.mark.spec("SITE-FAILING")
def test_each_system_page_lists_its_failing_rollouts(site: Path) -> None:
    doc = prefixexec.leaderboard(FILES, bootstrap=0).document
    expected: dict[str, int] = {}
    names = {
        AIRLINE[0].name: "claude-sonnet-4-5 / llm_agent",
        AIRLINE[1].name: "openai/gpt-oss-120b / langchain_agent",
        AIRLINE[2].name: "gpt-4.1-mini-2025-04-14 / llm_agent",
        RETAIL_GYM[0].name: "gpt-4.1 / llm_agent",
        RETAIL_GYM[1].name: "ft:gpt-4.1-2025-04-14:sierra:tau2-full-sft:BzrYdMNm / llm_agent",
    }
    for path in FILES:
        n, _, executable = tau2_counts(path)  # independent count from the raw file
        expected[names[path.name]] = n - executable
    seen = {}
    for d, ds in enumerate(doc["datasets"], start=1):
        for s, entry in enumerate(ds["systems"], start=1):
            page = (site / f"system-{d}-{s}.html").read_text(encoding="utf-8")
            body = page.split('<table class="failing">', 1)[1]
            seen[entry["system"]] = body.count("<tr><td>")
            assert f"Failing rollouts: {seen[entry['system']]} of {entry['N']} rollouts" in page
    assert seen == expected  # airline 1, 8, 4; retail 8, 17


@pytest.mark.spec("SITE-STATIC", "SITE-LAYOUT")
@pytest.mark.parametrize("width", [1400, 390])
@pytest.mark.parametrize("built", ["site", "submissions_site"])
def test_pages_in_chromium(built: str, request: pytest.FixtureRequest, browser: Any, width: int) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By

    site: Path = request.getfixturevalue(built)

    browser.set_window_size(width, 900)
    try:
        for page in pages(site):
            browser.get(page.as_uri())
            inner = browser.execute_script("return window.innerWidth")
            assert abs(inner - width) <= 20, (page.name, inner)  # the window is that wide
            scroll = browser.execute_script("return document.scrollingElement.scrollWidth")
            assert scroll <= inner, f"{page.name} scrolls sideways at {width} px: {scroll} > {inner}"
            assert browser.execute_script(OVERLAPS_JS) == [], page.name
            assert browser.execute_script(CUT_JS) == [], page.name  # no title cut by the window
            for link in browser.find_elements(By.CSS_SELECTOR, "a[href]"):
                href = link.get_attribute("href")
                url = urlparse(href)
                assert url.scheme == "file", (page.name, href)  # relative links, resolved to files
                assert Path(unquote(url.path)).is_file(), (page.name, href)
            for image in browser.find_elements(By.TAG_NAME, "img"):
                loaded = browser.execute_script(
                    "return arguments[0].complete && arguments[0].naturalWidth", image
                )
                assert loaded and loaded > 0, (page.name, image.get_attribute("src"))
    finally:
        browser.set_window_size(1400, 1000)


@pytest.mark.spec("SITE-OVERWRITE")
def test_what_the_site_folder_may_be(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = [str(p) for p in AIRLINE]
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine\n", encoding="utf-8")
    code = main(["leaderboard", *files, "--site", str(busy), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "is not empty and is not a site an earlier --site wrote" in err
    assert sorted(p.name for p in busy.iterdir()) == ["notes.txt"]
    code = main(["leaderboard", files[0], "--site", files[0], "--quiet"])
    assert code == 2 and "refusing to overwrite an input" in capsys.readouterr().err
    plain = tmp_path / "plain.txt"
    plain.write_text("mine\n", encoding="utf-8")
    code = main(["leaderboard", files[0], "--site", str(plain), "--quiet"])
    assert code == 2 and "exists and is not a directory" in capsys.readouterr().err
    assert plain.read_text(encoding="utf-8") == "mine\n"
    # An earlier site is rewritten; what it wrote and the new one does not is removed.
    out = tmp_path / "site"
    assert main(["leaderboard", *files, "--site", str(out), "--quiet"]) == 0
    assert (out / "system-1-3.html").is_file()
    (out / "keep.txt").write_text("mine\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["leaderboard", *files[:2], "--site", str(out), "--quiet"]) == 0
    assert not (out / "system-1-3.html").exists() and not (out / "system-1-3.svg").exists()
    assert (out / "system-1-2.html").is_file() and (out / "keep.txt").read_text(encoding="utf-8") == "mine\n"


@pytest.mark.spec("SITE-PAGES", "SITE-NUMBERS")
def test_write_site_takes_claims(tmp_path: Path) -> None:
    doc = prefixexec.leaderboard(AIRLINE[:2], bootstrap=0).document
    rollouts = prefixexec.read("auto", AIRLINE[:2])
    from prefixexec.site import domains_of

    domains = domains_of(doc, rollouts)
    assert [d.name for d in domains] == ["tau-bench/airline"] and isinstance(domains[0], DomainBoard)
    claims = [ClaimRow("claude-sonnet-4-5", "airline", "pass^1", "0.72", "18/25", "agrees")]
    names = write_site(tmp_path / "s", domains, claims)
    assert names[0] == "index.html"
    page = (tmp_path / "s" / "claims.html").read_text(encoding="utf-8")
    # 18/25 = 0.72 exactly, printed half up to two decimals by prefixexec.numbers
    assert re.search(r'<td class="num">0\.72</td><td class="num">0\.72</td><td>agrees</td>', page)
    with pytest.raises(ValueError, match="'board' must be a leaderboard document's dataset entry"):
        DomainBoard("x", {"systems": []}, {}, {})


@pytest.mark.spec("SITE-STATIC", "SITE-PAGES")
def test_names_from_the_input_are_text(tmp_path: Path) -> None:
    # A system named with markup and a control character: shown escaped, never as markup, and
    # never in a file name.
    from prefixexec.kernel import ConditionKey, Outcome, Rollout
    from prefixexec.kernel.accumulator import AccumulatorSet
    from prefixexec.ranking import LeaderboardOptions, leaderboard_document
    from prefixexec.site import domains_of

    name = '<img src="http://x/y.png">\x1b[31m'
    rollouts = [
        Rollout(ConditionKey("d<b>", name, "m"), f"t{t}", 0, Outcome(T=2, fed=2 if t % 2 else 3), t % 3 == 0)
        for t in range(6)
    ]
    doc = leaderboard_document(AccumulatorSet.from_rollouts(rollouts), None, LeaderboardOptions(), "sig")
    names = write_site(tmp_path / "s", domains_of(doc, rollouts))
    assert all(re.fullmatch(r"[a-z0-9-]+\.(html|svg)", n) for n in names)
    for n in names:
        text = (tmp_path / "s" / n).read_text(encoding="utf-8")
        assert "<img src=\"http" not in text and "\x1b" not in text and "<b>" not in text
    page = (tmp_path / "s" / "system-1-1.html").read_text(encoding="utf-8")
    assert "&lt;img src=&quot;http://x/y.png&quot;&gt;\\x1b[31m" in page


@pytest.mark.spec("SITE-PAGES")
def test_the_site_needs_the_rollouts_here(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    site = str(tmp_path / "s")
    code = main(["leaderboard", str(AIRLINE[0]), "--engine", "dask", "--site", site, "--quiet"])
    assert code == 2 and "--site: cannot be combined with --engine dask" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()


@pytest.mark.spec("SITE-FAILING", "OUT-EXPLAIN-SUCCESS")
def test_a_bfcl_site_says_why_executable_entries_failed(tmp_path: Path) -> None:
    # glyphh-ada-1.1's real multi_turn_base run: the entries whose every call ran yet that BFCL's
    # score file lists as invalid (tests/test_explain_success.py checks each reason against it).
    from conftest import REAL, real_text

    result = REAL / "bfcl-glyphh-ada" / "result" / "glyphh-ada-1.1" / "multi_turn"
    score = REAL / "bfcl-glyphh-ada" / "score" / "glyphh-ada-1.1" / "multi_turn"
    invalid = {
        json.loads(line)["id"]
        for line in real_text(score / "BFCL_v4_multi_turn_base_score.json.zst").splitlines()[1:]
    }
    out = tmp_path / "s"
    argv = ["leaderboard", "--adapter", "bfcl", str(result / "BFCL_v4_multi_turn_base_result.json")]
    assert main([*argv, "--site", str(out), "--quiet"]) == 0
    page = (out / "system-1-1.html").read_text(encoding="utf-8")
    table = page.split('<table class="failing unsuccessful">', 1)[1].split("</table>", 1)[0]
    tasks = re.findall(r"<tr><td>(multi_turn_base_\d+)</td>", table)
    rows = prefixexec.explain(str(result / "BFCL_v4_multi_turn_base_result.json"), adapter="bfcl").document
    expected = {r["task_id"] for r in rows if r["executable"] and not r["success"]}
    assert set(tasks) == expected and expected <= invalid and len(tasks) == 31
    assert "instance_state_mismatch: turn " in table and "execution_response_mismatch: turn " in table


@pytest.mark.spec("SITE-PAGES", "LB-API")
def test_the_python_function_writes_the_site(tmp_path: Path) -> None:
    result = prefixexec.leaderboard(AIRLINE[:1], bootstrap=0, site=tmp_path / "s")
    assert result.ok and result.document["datasets"][0]["systems"][0]["N"] == 50
    assert sorted(p.name for p in (tmp_path / "s").iterdir()) == [
        "claims.html",
        "domain-1.html",
        "index.html",
        "site.json",
        "system-1-1.html",
        "system-1-1.svg",
    ]


@pytest.mark.spec("LB-SITE-HOOK", "LB-CLAIMS", "SITE-PAGES")
def test_the_submissions_site_has_a_page_per_domain_and_every_claim(submissions_site: Path) -> None:
    """tau2's real submissions folder: one domain page per domain the trajectories cover (the
    domain each trajectory file's name gives, as tau2 names them; a submission.json that lists
    its trajectory_files keeps only those, LB-LISTED), and claims.html holds every row of the
    document's claims table with its verdict."""
    document = json.loads((submissions_site.parent / "board.json").read_text(encoding="utf-8"))
    domains = set()
    for claims in SUBMISSIONS.glob("*/submission.json"):
        listed = json.loads(claims.read_text(encoding="utf-8")).get("trajectory_files")
        for path in (claims.parent / "trajectories").glob("*.json*"):
            name = path.name.removesuffix(".zst")
            if listed is None or name in listed.values():
                domains |= {d for d in ("airline", "retail", "telecom", "medical") if d in name}
    assert sorted(domains) == ["airline", "retail"]
    assert [ds["dataset"] for ds in document["datasets"]] == [f"tau-bench/{d}" for d in sorted(domains)]
    for d, ds in enumerate(document["datasets"], start=1):
        page = (submissions_site / f"domain-{d}.html").read_text(encoding="utf-8")
        assert all(html.escape(s["system"]) in page for s in ds["systems"])
    claims_page = (submissions_site / "claims.html").read_text(encoding="utf-8")
    rows = document["claims"]["claims"]
    assert claims_page.count("<tr>") - 1 == len(rows) > 0  # one row per claim below the header
    for row in rows:
        assert html.escape(row["verdict"]) in claims_page
    assert "differs" in claims_page and "reproduced" in claims_page
