"""The dashboard in a real headless browser (Debian's Chromium through Selenium), served by
`lore-sidecar ui` as a follower of a store a sidecar writes: search, open, edit (history
shows it), suppress, dream accept and rollback, the usage chart, facts on two time axes,
health — screenshots of each page kept as test artefacts. And who may not use it: no token,
a foreign Host, a foreign Origin, a page on another origin."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest
from selenium.webdriver.common.by import By

from tests.support import browser
from tests.support.loopback import LoopbackServer, QuietHandler
from tests.support.seeded import seed

pytestmark = pytest.mark.slow


@pytest.fixture
def dashboard(tmp_path):
    writer, ws = seed(tmp_path)  # stays the writer: the dashboard is a follower, its writes spool
    proc = subprocess.Popen([sys.executable, "-m", "lore_sidecar", "ui", "--no-browser", "--store-dir",
                             str(tmp_path / "store")], cwd=ws, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and "?token=" in url, proc.stderr.read() if proc.poll() else url
        yield url, writer
    finally:
        proc.terminate()
        proc.wait(10)
        writer.close()


@pytest.fixture
def chrome():
    driver = browser.chrome()
    try:
        yield driver
    finally:
        driver.quit()


def base_and_token(url: str) -> tuple[str, str]:
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}", urllib.parse.parse_qs(parts.query)["token"][0]


def text(driver) -> str:
    return driver.find_element(By.TAG_NAME, "main").text


def test_search_open_edit_suppress_dream_and_charts_in_a_real_browser(dashboard, chrome):
    url, writer = dashboard
    chrome.get(url)
    box = chrome.find_element(By.NAME, "q")
    box.send_keys("teal colour scheme")
    browser.submit(chrome, "main form button")
    browser.screenshot(chrome, "search")
    browser.submit(chrome, "a.hit")
    assert chrome.find_element(By.ID, "content").text == "The dashboard uses a teal colour scheme"
    area = chrome.find_element(By.CSS_SELECTOR, "form[name=edit] textarea")
    area.clear()
    area.send_keys("The dashboard uses a dark teal colour scheme (since the 2026 redesign)")
    browser.submit(chrome, "form[name=edit] button")
    assert "saved" in chrome.find_element(By.ID, "note").text
    history = chrome.find_element(By.XPATH, "//h2[text()='History']/following-sibling::table[1]").text
    assert "update dashboard v2" in history and "dark teal colour scheme" in history
    browser.screenshot(chrome, "node")
    # the edit went through the store's writer: a client of the store sees it too
    assert writer.request("lore/getNode", {"uri": "project://shop/pattern/colour"})["content"].startswith("The dashboard uses a dark teal")

    browser.submit(chrome, "form[name=suppress] button")
    assert "suppressed" in chrome.find_element(By.ID, "note").text and "suppressed\nyes" in text(chrome).replace(" yes", "\nyes")
    assert writer.request("lore/getNode", {"uri": "project://shop/pattern/colour"})["metadata"]["suppressed"] is True

    chrome.get(url.replace("/?", "/review?"))
    assert "project://shop/pattern/colour" in text(chrome) and "recalled 30 times, opened 0" in text(chrome)
    assert "project://shop/pattern/deploy" not in text(chrome)  # recalled as often, opened each time
    browser.screenshot(chrome, "review")

    chrome.get(url.replace("/?", "/dream?"))
    browser.submit(chrome, "form[name=propose] button")
    assert "0 applied" in chrome.find_element(By.ID, "note").text
    browser.submit(chrome, "form[name=accept] button")  # accept the proposals
    note = chrome.find_element(By.ID, "note").text
    assert "applied" in note and not note.split(": ")[1].startswith("0 applied")
    assert writer.request("lore/getNode", {"uri": "project://shop/decision/queue-redis"})["metadata"]["suppressed"] is True
    browser.screenshot(chrome, "dream")
    browser.submit(chrome, "form[name=rollback] button")
    assert "rolled back" in chrome.find_element(By.ID, "note").text
    assert writer.request("lore/getNode", {"uri": "project://shop/decision/queue-redis"})["metadata"]["suppressed"] is False
    assert "rolled back" in chrome.find_element(By.CSS_SELECTOR, "div.run").text

    chrome.get(url.replace("/?", "/analytics?"))
    used = [int(float(r.get_attribute("height"))) for r in chrome.find_elements(By.CSS_SELECTOR, "svg.chart rect.bar.used")]
    recalled = [int(float(r.get_attribute("height"))) for r in chrome.find_elements(By.CSS_SELECTOR, "svg.chart rect.bar.recalled")]
    assert max(used) > 0 and max(recalled) > 0  # the chart has data: thirty opened leads, sixty shown
    browser.screenshot(chrome, "usage")

    chrome.get(url.replace("/?", "/facts?subject=payments+service&"))
    assert len(chrome.find_elements(By.CSS_SELECTOR, "svg.chart rect.valid")) == 2
    assert len(chrome.find_elements(By.CSS_SELECTOR, "svg.chart rect.recorded")) == 2
    browser.screenshot(chrome, "facts")

    chrome.get(url.replace("/?", "/health?"))
    assert "follower" in text(chrome) and "quarantined" in text(chrome)
    browser.screenshot(chrome, "health")


def request(url: str, *, data: dict | None = None, headers: dict | None = None) -> int:
    body = urllib.parse.urlencode(data).encode() if data is not None else None
    req = urllib.request.Request(url, data=body, headers=headers or {}, method="POST" if data is not None else "GET")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_no_token_a_foreign_host_or_origin_and_a_page_on_another_origin_are_refused(dashboard, chrome):
    url, writer = dashboard
    base, token = base_and_token(url)
    uri = "project://shop/pattern/deploy"
    assert request(f"{base}/?token={token}") == 200  # the control
    assert request(f"{base}/") == 401
    wrong = token[:-1] + ("y" if token.endswith("x") else "x")  # one character off, never the token itself
    assert request(f"{base}/?token={wrong}") == 401
    assert request(f"{base}/?token={token}", headers={"Host": "lore.attacker.example"}) == 421
    assert request(f"{base}/?token={token}", headers={"Origin": "http://127.0.0.1:1"}) == 403
    assert request(f"{base}/node/forget", data={"token": token, "uri": uri}, headers={"Sec-Fetch-Site": "cross-site"}) == 403

    # A page on another origin (another loopback port) that knows the token posts a form here.
    attack = (f'<html><body><form id=f method=post action="{base}/node/forget"><input name=token value="{token}">'
              f'<input name=uri value="{uri}"></form><script>document.getElementById("f").submit()</script></body></html>')

    class Evil(QuietHandler):
        def do_GET(self) -> None:  # noqa: N802
            data = attack.encode()
            self.send_response(200)
            self.send_header("content-type", "text/html")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    with LoopbackServer(Evil, lifetime_s=60) as evil:
        chrome.get(evil.url + "/")
        chrome.implicitly_wait(2)
        body = chrome.find_element(By.TAG_NAME, "body").text
    assert "another origin" in body or "another site" in body
    assert writer.request("lore/getNode", {"uri": uri})["content"] == "Deploys go through the blue-green pipeline"
    # the control: the same form from the dashboard's own page forgets it
    chrome.get(f"{base}/node?uri={urllib.parse.quote(uri)}&token={token}")
    browser.submit(chrome, "form[name=forget] button")
    assert "forgot" in chrome.find_element(By.ID, "note").text
    gone = writer.request_full("lore/getNode", {"uri": uri})
    assert gone["error"]["data"]["kind"] == "notFound"
    # The form's redirect went to a clean URL: the browser is signed in by its session cookie
    # (HttpOnly, SameSite=Strict), and the token left the address bar.
    assert token not in chrome.current_url and chrome.current_url.startswith(base + "/?")
    cookies = chrome.get_cookies()
    assert [(c["httpOnly"], c.get("sameSite")) for c in cookies] == [(True, "Strict")] and token not in json.dumps(cookies)


def test_a_page_on_another_origin_cannot_frame_the_dashboard(dashboard, chrome):
    url, _ = dashboard
    frame = f'<html><body><iframe id=f src="{url}" width=800 height=600></iframe></body></html>'

    class Framer(QuietHandler):
        def do_GET(self) -> None:  # noqa: N802
            data = frame.encode()
            self.send_response(200)
            self.send_header("content-type", "text/html")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    chrome.get(url)  # the control: the same URL as a page of its own shows the dashboard
    assert chrome.find_element(By.NAME, "q")
    with LoopbackServer(Framer, lifetime_s=60) as framer:
        chrome.get(framer.url + "/")
        time.sleep(1.0)
        chrome.switch_to.frame(chrome.find_element(By.ID, "f"))
        framed = chrome.find_elements(By.NAME, "q")
        chrome.switch_to.default_content()
    assert framed == []  # frame-ancestors 'none' / X-Frame-Options DENY: the browser refused to render it


def test_the_browser_ui_opens_is_signed_in_by_a_one_time_code(tmp_path, chrome):
    """`lore-sidecar ui` as a user runs it: the browser it opens (here a script that hands the
    URL to the headless Chromium) lands on a clean, signed-in dashboard; the code is spent."""
    writer, ws = seed(tmp_path)
    opened = tmp_path / "opened.txt"
    script = tmp_path / "browser"
    script.write_text(f"#!/bin/sh\nprintf '%s' \"$1\" > {opened}.tmp && mv {opened}.tmp {opened}\n")
    script.chmod(0o755)
    proc = subprocess.Popen([sys.executable, "-m", "lore_sidecar", "ui", "--store-dir", str(tmp_path / "store")],
                            cwd=ws, env={**os.environ, "BROWSER": str(script)}, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        base, token = base_and_token(proc.stdout.readline().strip())
        deadline = time.monotonic() + 60
        while not opened.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        launch = opened.read_text()
        assert launch.startswith(base + "/launch?code=") and token not in launch
        chrome.get(launch)
        assert chrome.current_url == base + "/" and chrome.find_element(By.NAME, "q")
        chrome.get(base + "/review")  # signed in by the cookie alone
        assert "Review" in chrome.find_element(By.TAG_NAME, "h1").text
        chrome.delete_all_cookies()
        chrome.get(launch)  # the same code again: spent
        assert "used already or has expired" in chrome.find_element(By.TAG_NAME, "body").text
    finally:
        proc.terminate()
        proc.wait(10)
        writer.close()
