"""The coverage HTML page in a real headless chromium: it loads from the file
alone, filters by vendor, category and text, sorts, and renders."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest

from deeplink_gen.interfaces.aten import installed_torch_version
from helpers import REPO, browser_session, chromium, coverage_report, run_cli

# The bundled workspace renders for DIPU's torch; these tests look at the installed one.
HERE = ("--torch-version", str(installed_torch_version()))
REQUIRE = os.environ.get("DEEPLINK_GEN_TEST_REQUIRE_BROWSER")


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("html") / "coverage.html"
    result = run_cli("coverage", *HERE, "--format", "html", "--out", str(out), cwd=REPO)
    assert result.exit_code == 0, result.output
    return out


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.mark.skipif(chromium() is None and not REQUIRE,
                    reason="no chromium (apt-get install chromium chromium-driver); "
                           "DEEPLINK_GEN_TEST_REQUIRE_BROWSER=1 makes this a failure")
def test_the_page_filters_and_sorts_in_a_browser(page: Path, tmp_path: Path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    report = coverage_report(REPO, *HERE)
    ops, vendors = len(report["ops"]), len(report["ops"][0]["vendors"])
    assert ops > 3000 and vendors >= 4, (ops, vendors)
    ascend_fallback = {o["op"]: o["schema"] for o in report["ops"] if o["vendors"]["ascend"]["reach"] == "cpu-fallback"}
    driver = browser_session(tmp_path / "profile")
    try:
        driver.get(page.as_uri())

        def visible() -> list[list[str]]:
            """The (op, vendor, served by) cells of the rows the page shows."""
            return driver.execute_script(
                "return Array.prototype.filter.call(document.querySelectorAll('#ops tbody tr'),"
                " function (r) { return r.offsetParent !== null; })"
                ".map(function (r) { return [r.cells[0].textContent, r.cells[1].textContent, r.cells[2].textContent]; });")

        rows = visible()
        assert len(rows) == vendors * ops
        assert driver.find_element(By.ID, "shown").text == f"{vendors * ops} of {vendors * ops} rows"
        Select(driver.find_element(By.ID, "vendor")).select_by_value("ascend")
        rows = visible()
        assert len(rows) == ops and {vendor for _, vendor, _ in rows} == {"ascend"}
        assert driver.find_element(By.ID, "shown").text == f"{ops} of {vendors * ops} rows"
        screenshot = tmp_path / "coverage-ascend.png"
        assert driver.save_screenshot(str(screenshot))
        Select(driver.find_element(By.ID, "reach")).select_by_value("cpu-fallback")
        rows = visible()
        assert sorted(op for op, _, _ in rows) == sorted(ascend_fallback) and len(rows) == 990
        driver.find_element(By.ID, "text").send_keys("_log_softmax")
        expected = sorted(op for op, schema in ascend_fallback.items() if "_log_softmax" in op + " " + schema)
        assert "_log_softmax.out" in expected
        assert sorted(op for op, _, _ in visible()) == expected
        # Sorting by op, twice: descending.
        header = driver.find_elements(By.CSS_SELECTOR, "#ops thead th")[0]
        header.click()
        header.click()
        assert [op for op, _, _ in visible()] == sorted(expected, reverse=True)
    finally:
        driver.quit()
    data = screenshot.read_bytes()
    width, height = _png_size(data)
    assert width >= 800 and height >= 600 and len(data) > 20_000, (width, height, len(data))
