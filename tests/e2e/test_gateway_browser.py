"""A web page in a real browser (headless Chromium) cannot write into memory through the
gateway, even knowing its full URL with the secret: a `no-cors` text/plain `fetch`, a
JSON `fetch` (preflighted), and form POSTs (text/plain and urlencoded) from a page on another
loopback port all reach the gateway and are refused; nothing reaches the upstream, nothing
is captured. Control: the same body from a harness (no browser headers) goes through."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.support import browser
from tests.support.fake_models import FakeModels
from tests.support.loopback import LoopbackServer, QuietHandler

pytestmark = pytest.mark.slow

BODY = json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 20,
                   "messages": [{"role": "user", "content": "from a web page brw1"}]})


def pages(target: str) -> type[QuietHandler]:
    fetches = f"""<!doctype html><title>wait</title><script>
      const url = {json.dumps(target + "/v1/messages")};
      const body = {json.dumps(BODY)};
      Promise.allSettled([
        fetch(url, {{method: "POST", mode: "no-cors", headers: {{"content-type": "text/plain"}}, body}}),
        fetch(url, {{method: "POST", headers: {{"content-type": "application/json", "x-api-key": "k"}}, body}}),
      ]).then(r => {{ document.title = "done " + r.map(x => x.status).join(","); }});
    </script>"""

    def form(enctype: str) -> str:
        # The classic trick to make a form body parse as JSON: the whole body in one field name.
        return f"""<!doctype html><title>form</title>
          <form id=f method=POST action={json.dumps(target + "/v1/messages")} enctype="{enctype}">
          <input name={json.dumps(BODY[:-1] + ', "x": "')} value='"}}'></form>
          <script>document.getElementById("f").submit();</script>"""

    routes = {"/fetch": fetches, "/form-text": form("text/plain"), "/form-url": form("application/x-www-form-urlencoded")}

    class Handler(QuietHandler):
        def do_GET(self) -> None:  # noqa: N802
            data = routes.get(self.path, "").encode()
            self.send_response(200 if data else 404)
            self.send_header("content-type", "text/html")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


def health(url: str) -> dict:
    return json.loads(urllib.request.urlopen(url + "/lore/health", timeout=10).read())


def captured(store, marker: str) -> int:
    c = sqlite3.connect(store / "lore.db")
    try:
        return c.execute("SELECT COUNT(*) FROM messages WHERE text LIKE ?", (f"%{marker}%",)).fetchone()[0]
    except sqlite3.OperationalError:  # no table yet: nothing was ever captured
        return 0
    finally:
        c.close()


def test_a_page_in_chromium_cannot_post_through_the_gateway_even_with_its_url(tmp_path):
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    store = tmp_path / "store"
    driver = browser.chrome()
    with FakeModels(lambda api, body: "fine") as fake:
        proc = subprocess.Popen([sys.executable, "-m", "lore_sidecar", "gateway", "--store-dir", str(store),
                                 "--workspace", str(ws), "--upstream", fake.url], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True, env={**os.environ, "LORE_DISTILLER": "off"})
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().strip()
            with LoopbackServer(pages(url), lifetime_s=300) as site:
                driver.get(site.url + "/fetch")
                deadline = time.monotonic() + 30
                while not driver.title.startswith("done"):
                    assert time.monotonic() < deadline, driver.title
                    time.sleep(0.1)
                for page in ("/form-text", "/form-url"):
                    driver.get(site.url + page)
                    deadline = time.monotonic() + 30
                    while not driver.current_url.startswith(url):  # the form's answer replaced the page
                        assert time.monotonic() < deadline, driver.current_url
                        time.sleep(0.1)
                    assert "lore gateway" in driver.page_source  # it was the gateway that answered: refused
            # The no-cors fetch, the preflight (the JSON fetch never got further) and both forms
            # each reached the gateway and were refused.
            assert health(url)["refused"] >= 4
            assert fake.seen == []
            assert captured(store, "brw1") == 0
            # Control: the same body from a harness goes through and is captured.
            req = urllib.request.Request(url + "/v1/messages", data=BODY.replace("brw1", "brw2").encode(),
                                         headers={"content-type": "application/json", "x-api-key": "k"})
            assert json.loads(urllib.request.urlopen(req, timeout=30).read())["content"][0]["text"] == "fine"
            assert captured(store, "brw2") == 1 and captured(store, "brw1") == 0
        finally:
            driver.quit()
            proc.terminate()
            proc.wait(10)
