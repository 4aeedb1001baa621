"""The HTML report's interactive parts in a real headless browser (Debian's chromium driven by selenium through
chromedriver): the page of a failing run opens on its failures, the filter, a cell's link to its cases, the copy
buttons, and a hostile report that runs no script. Skipped with the reason when no browser is installed."""

from __future__ import annotations

import json
import shutil
import tempfile
import time

import pytest

from simdbind.conformance import deviations, report, runner
from simdbind.conformance.implementations import implementations
from tests.runner_doubles import Corrupting
from tests.test_report_merge import hostile_report

HEADLESS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--window-size=1280,900")


@pytest.fixture(scope="module")
def browser():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("selenium is not installed (it is in the 'test' extra: pip install -e '.[test]')")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not chromium or not driver:
        pytest.skip("no headless browser: install Debian's chromium and chromium-driver "
                    "(apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    profile = tempfile.TemporaryDirectory(prefix="chromium-profile-")
    for argument in HEADLESS + (f"--user-data-dir={profile.name}",):
        options.add_argument(argument)
    session = webdriver.Chrome(service=Service(driver), options=options)
    session.execute_cdp_cmd("Browser.grantPermissions", {"permissions": ["clipboardReadWrite",
                                                                         "clipboardSanitizedWrite"]})
    try:
        yield session
    finally:
        session.quit()
        profile.cleanup()


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A real run of the eltwise smoke cases at two ISAs, with two cases broken in both and one of them
    catalogued: rows that fail, a row with a known deviation, rows that pass."""
    directory = tmp_path_factory.mktemp("catalogue")
    (directory / "elementwise.json").write_text(json.dumps([{
        "id": "TEST-SUM", "function": "eltwise", "when": "op == 'sum' and size == 1", "versions": "all",
        "spec": "the eltwise kernel", "behaviour": "sum of one element is off", "affects": "bundled"}]))
    impls, catalogue = implementations(["bundled"], "all")[:2], deviations.load(directory)
    clean = runner.run(impls, ["eltwise"], "smoke", seed=5, catalogue=catalogue)
    broken = {next(r.descriptor for r in clean.results if r.variant == op and r.max_ulp == 0 and r.total > 1)
              for op in ("max", "product")}
    broken |= {r.descriptor for r in clean.results if r.status == "xpass"}  # the catalogued ones
    result = runner.run([Corrupting(impl, broken, ulps=100) for impl in impls], ["eltwise"], "smoke", seed=5,
                        catalogue=catalogue)
    result.meta = report.make_meta(impls, profile="smoke", seed=5, command="test")
    return result


@pytest.fixture(scope="module")
def pages(run, tmp_path_factory):
    directory = tmp_path_factory.mktemp("pages")
    passing = runner.Run([r for r in run.results if r.variant == "min"], run.seconds, run.meta)
    hostile = directory / "hostile.json"
    hostile.write_text(json.dumps(hostile_report()))
    return {"failing": report.write_html(run, directory / "failing.html").as_uri(),
            "passing": report.write_html(passing, directory / "passing.html").as_uri(),
            "hostile": report.write_html(report.read_json(hostile), directory / "hostile.html").as_uri()}


def visible_rows(browser) -> list[tuple[str, str]]:
    """(data-status, variant) of the matrix rows the reader sees."""
    return [tuple(row) for row in browser.execute_script(
        "return Array.from(document.querySelectorAll('tr.row')).filter(r => r.offsetParent !== null)"
        ".map(r => [r.dataset.status, r.cells[1].textContent]);")]


def choose(browser, show: str, words: str = "") -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element(By.ID, "show")).select_by_value(show)
    field = browser.find_element(By.ID, "filter")
    field.clear()
    if words:
        field.send_keys(words)


def test_a_failing_page_opens_on_its_failures_and_a_passing_page_on_everything(browser, pages, run):
    browser.get(pages["failing"])
    assert sorted(visible_rows(browser)) == [("fail", "max"), ("fail", "product")]
    assert browser.execute_script("return document.getElementById('shown').textContent") == "2 of 4 rows shown"
    failures = browser.execute_script("var s = document.getElementById('failures').getBoundingClientRect();"
                                      "return [s.top, s.height, window.innerHeight];")
    assert 0 < failures[0] < failures[2] / 3 and failures[1] > 100  # what failed is on the first screen
    listed = browser.execute_script("return Array.from(document.querySelectorAll('#failures code.desc'))"
                                    ".map(c => c.textContent);")
    assert sorted(listed) == sorted(r.descriptor for r in run.results if r.status == "fail")
    browser.get(pages["passing"])
    assert visible_rows(browser) == [("ok", "min")]
    assert browser.execute_script("return [document.getElementById('show').value, "
                                  "document.getElementById('failures')]") == ["all", None]


def test_the_filter_shows_rows_by_status_and_by_words(browser, pages):
    browser.get(pages["failing"])
    choose(browser, "all")
    assert sorted(v for _, v in visible_rows(browser)) == ["max", "min", "product", "sum"]
    choose(browser, "notpass")
    assert sorted(visible_rows(browser)) == [("deviation", "sum"), ("fail", "max"), ("fail", "product")]
    choose(browser, "all", "MAX float32")  # every word, any case
    assert visible_rows(browser) == [("fail", "max")]
    assert browser.execute_script("return document.getElementById('shown').textContent") == "1 of 4 rows shown"
    choose(browser, "all", "bfloat16")
    assert visible_rows(browser) == []


def test_a_cell_and_a_listed_failure_link_to_the_cases_of_that_cell(browser, pages, run):
    from selenium.webdriver.common.by import By

    browser.get(pages["failing"])
    choose(browser, "all")
    cell = browser.find_element(By.CSS_SELECTOR, "tr.row[data-status=deviation] td.cell.known a")
    target = cell.get_attribute("href").split("#")[1]
    place = "var s = document.getElementById(arguments[0]); return [s.getBoundingClientRect().top, innerHeight];"
    before = browser.execute_script(place, target)
    assert before[0] > before[1]  # below the first screen
    cell.click()
    where = browser.execute_script("var s = document.getElementById(arguments[0]);"
                                   "return [location.hash, s.getBoundingClientRect().top, s.textContent];", target)
    assert where[0] == "#" + target and 0 <= where[1] < before[1] / 2  # scrolled to the section
    known = [r for r in run.results if r.status == "known" and r.implementation == run.results[0].implementation]
    assert len(known) == 1 and known[0].descriptor in where[2] and "TEST-SUM" in where[2]
    first = browser.find_element(By.CSS_SELECTOR, "#failures td a")
    descriptor = first.text
    first.click()
    section = browser.execute_script("var s = document.querySelector(':target');"
                                     "return [s.id, s.getBoundingClientRect().top, s.textContent];")
    assert section[0] == browser.execute_script("return location.hash.slice(1)") and 0 <= section[1] < 450
    assert descriptor in section[2] and "1/" in section[2]


def test_a_copy_button_puts_the_repro_on_the_clipboard(browser, pages, run):
    from selenium.webdriver.common.by import By

    browser.get(pages["failing"])
    button = browser.find_element(By.CSS_SELECTOR, "#failures button.copy")
    shown = button.find_element(By.XPATH, "../code").text
    button.click()
    time.sleep(0.1)
    assert button.text == "copied"
    copied = browser.execute_async_script(
        "var done = arguments[0]; navigator.clipboard.readText().then(done, e => done('no clipboard: ' + e));")
    repros = {r.repro for r in run.results if r.status == "fail"}
    assert copied == shown and copied in repros and copied.startswith("simdbind conformance --library bundled")
    time.sleep(1.7)
    assert button.text == "copy"
    # a page served over plain http has no clipboard API: the button copies through a selection instead
    browser.execute_script("window.clipboardApi = navigator.clipboard; navigator.clipboard.writeText('');"
                           "Object.defineProperty(Navigator.prototype, 'clipboard', {get: () => undefined});")
    other = browser.find_elements(By.CSS_SELECTOR, "#failures button.copy")[1]
    other.click()
    copied = browser.execute_async_script("var done = arguments[0]; clipboardApi.readText().then(done, done);")
    assert other.text == "copied" and copied == other.find_element(By.XPATH, "../code").text != shown


def test_a_hostile_report_runs_no_script(browser, pages):
    from selenium.webdriver.common.by import By

    browser.get(pages["hostile"])
    browser.execute_script("document.querySelectorAll('*').forEach(e => ['mouseover', 'focus', 'error']"
                           ".forEach(t => e.dispatchEvent(new Event(t, {bubbles: true}))));")
    browser.execute_script("document.querySelectorAll('a, button').forEach(e => e.click());")
    assert browser.execute_script("return [typeof window.pwned, document.scripts.length, document.images.length]") \
        == ["undefined", 1, 0]
    assert "F-descriptor</style></script><script>window.pwned=1</script>" in browser.find_element(
        By.ID, "failures").text
