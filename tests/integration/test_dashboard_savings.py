"""The dashboard's Savings page (issue 36 item 5), asked of a real `lore-sidecar ui` over
HTTP and in headless Chromium: the days' totals are the ledger's (the same as `lore/status`),
drawn as an inline SVG (no script, nothing fetched) under the dashboard's security headers,
and a person sees which figures are reported and which estimated."""

from __future__ import annotations

import re
import subprocess
import sys
import urllib.parse
from datetime import UTC, datetime, timedelta

import pytest
from selenium.webdriver.common.by import By

from lore_sidecar.client import StdioClient, sidecar_command
from lore_sidecar.savings_table import money
from tests.e2e.test_context_economics import body, turn
from tests.e2e.test_savings import OPTIONS, usage_of
from tests.integration.test_dashboard_access import ask, assert_guarded
from tests.support import browser

pytestmark = pytest.mark.slow
DAYS, CALLS = 4, 20
HOSTILE = '<script>alert("lore")</script>'


def seed(root) -> dict:
    """A session a day for DAYS days (the usage of every other call fed back), then the status."""
    ws = root / "ws"
    (ws / ".git").mkdir(parents=True)
    c = StdioClient(sidecar_command("--store-dir", str(root / "store")))
    c.initialize(ws, options=OPTIONS)
    try:
        today = datetime.now(UTC).replace(hour=9, minute=0, second=0, microsecond=0)
        for d in range(DAYS):
            start, msgs, session = today - timedelta(days=DAYS - 1 - d), [], f"day-{d}"
            for k in range(CALLS):
                msgs += [*turn(k), {"role": "user", "content": [{"type": "text", "text": f"continue {k}"}]}]
                at = (start + timedelta(minutes=k)).strftime("%Y-%m-%dT%H:%M:%SZ")
                r = c.request("lore/assembleContext", {"sessionId": session, "body": body(msgs), "at": at}, timeout=60)
                if k % 2 == 0:
                    c.request("lore/recordUsage", {"sessionId": session, "usage": usage_of(k, r["estimate"]), "at": at})
        # A session id is the harness's to choose: on the page it is text, never markup
        c.request("lore/assembleContext", {"sessionId": HOSTILE, "body": body(turn(0))}, timeout=60)
        return c.request("lore/status", {})["savings"]
    finally:
        c.close()


@pytest.fixture(scope="module")
def ui(tmp_path_factory):
    root = tmp_path_factory.mktemp("savings")
    status = seed(root)
    proc = subprocess.Popen([sys.executable, "-m", "lore_sidecar", "ui", "--no-browser", "--store-dir",
                             str(root / "store")], cwd=root / "ws", stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        yield url, status
    finally:
        proc.terminate()
        proc.wait(10)


def test_the_savings_page_shows_the_ledger_totals_as_an_inline_chart_under_the_guards(ui):
    url, status = ui
    parts = urllib.parse.urlsplit(url)
    token = urllib.parse.parse_qs(parts.query)["token"][0]
    code, headers, page = ask(parts.port, f"/savings?token={token}")
    assert code == 200
    assert_guarded("/savings", headers)
    assert "<script" not in page and " src=" not in page and "<link" not in page  # nothing to run, nothing fetched
    assert len(status["days"]) == DAYS
    assert len(re.findall(r'<rect class="bar l0"', page)) == DAYS and len(re.findall(r'<rect class="bar sent"', page)) == DAYS
    total = status["total"]
    assert total["calls"] == DAYS * CALLS + 1 and total["source"] == "mixed"
    assert "&lt;script&gt;alert(&quot;lore&quot;)&lt;/script&gt;" in page  # the hostile id, as text
    summary = re.search(r"<div class=\"card\" id=summary>(.*?)</div>", page, re.S).group(1)
    for figure in (money(total["usd"]), money(total["l0Usd"]), money(total["savedUsd"])):
        assert figure in summary
    assert f"mixed ({total['reportedCalls']} reported, {total['estimatedCalls']} estimated)" in page
    for d in status["days"]:  # each day's row says its own figures
        assert re.search(rf"<td>{d['day']}</td><td>{d['calls']}</td>.*?{re.escape(money(d['usd']))}", page)
    # the control: the same page without the token is refused, with the same headers
    code, headers, _ = ask(parts.port, "/savings")
    assert code == 401
    assert_guarded("/savings refused", headers)


def test_the_savings_chart_in_a_real_browser(ui):
    url, status = ui
    driver = browser.chrome()
    try:
        driver.get(url.replace("/?", "/savings?"))
        l0 = [float(r.get_attribute("height")) for r in driver.find_elements(By.CSS_SELECTOR, "svg.chart rect.bar.l0")]
        sent = [float(r.get_attribute("height")) for r in driver.find_elements(By.CSS_SELECTOR, "svg.chart rect.bar.sent")]
        assert len(l0) == len(sent) == DAYS and min(l0) > 0 and min(sent) > 0
        days = sorted(status["days"], key=lambda d: d["day"])
        for h0, hs, d in zip(l0, sent, days, strict=True):  # the taller bar is the dearer one
            assert (h0 >= hs) == (d["l0Usd"] >= d["usd"]) or abs(h0 - hs) <= 1
        assert "Savings" in driver.find_element(By.TAG_NAME, "h1").text
        browser.screenshot(driver, "savings")
    finally:
        driver.quit()
