"""How the dashboard's browser gets in, and what every answer says about itself.

`lore-sidecar ui` is started with a fake browser (BROWSER: a script that records its own
argv and /proc/self/cmdline): the long-lived token never reaches its command line, the
one-time launch code it gets logs in once (303 to a clean `/` with an HttpOnly,
SameSite=Strict cookie) and never twice. Another local user (uid 65534) reading /proc of the
ui process and its children learns no token, and is refused even with the launch code or the
token. Every answer — page, JSON, redirect, 401/403/404/405/421 — carries the security
headers."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

FAKE_BROWSER = """#!{python}
import os, sys, time
with open({record!r} + ".tmp", "w") as fh:
    fh.write(repr((sys.argv, open("/proc/self/cmdline", "rb").read().decode(errors="replace"), os.getpid())))
os.rename({record!r} + ".tmp", {record!r})
deadline = time.time() + 60
while time.time() < deadline and not os.path.exists({done!r}):
    time.sleep(0.1)
"""

# Run as uid 65534: every process under the ui's pid, its command line (and whether its
# environment is readable), then the dashboard asked with what was found and with the token.
OUTSIDER = r"""
import json, os, sys, http.client
from urllib.parse import urlsplit
root, token_url = int(sys.argv[1]), sys.argv[2]
kids = {}
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        ppid = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
    except OSError:
        continue
    kids.setdefault(ppid, []).append(int(pid))
todo, seen = [root], {}
while todo:
    pid = todo.pop()
    try:
        seen[pid] = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
    except OSError as exc:
        seen[pid] = "unreadable: " + exc.strerror
    try:
        open(f"/proc/{pid}/environ", "rb").read()
        seen[pid] += " [environ readable]"
    except OSError:
        pass
    todo += kids.get(pid, [])
codes = [w for line in seen.values() for w in line.split() if "/launch?code=" in w]
u = urlsplit(token_url)
asked = {}
for name, path in [("code", "/launch?" + urlsplit(codes[0]).query if codes else "/launch?code=none"),
                   ("token", "/?" + u.query)]:
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    conn.request("GET", path)
    r = conn.getresponse()
    asked[name] = [r.status, r.getheader("Set-Cookie")]
print(json.dumps({"seen": seen, "asked": asked}))
"""

HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
           "X-Frame-Options": "DENY"}


def ask(port: int, path: str, *, method: str = "GET", headers: dict | None = None, body: dict | None = None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    data = urllib.parse.urlencode(body).encode() if body is not None else None
    hdrs = {**({"Content-Type": "application/x-www-form-urlencoded"} if data else {}), **(headers or {})}
    conn.request(method, path, body=data, headers=hdrs)
    r = conn.getresponse()
    return r.status, dict(r.getheaders()), r.read().decode(errors="replace")


def assert_guarded(what: str, headers: dict) -> None:
    for k, v in HEADERS.items():
        assert headers.get(k) == v, (what, k, headers)
    csp = headers.get("Content-Security-Policy", "")
    assert "frame-ancestors 'none'" in csp and "default-src 'none'" in csp, (what, csp)
    assert not any(k.lower().startswith("access-control-") for k in headers), (what, headers)


def start_ui(tmp_path: Path):
    """`lore-sidecar ui` with the fake browser: (process, printed URL, browser's record, done flag)."""
    record, done = tmp_path / "browser.txt", tmp_path / "done"
    script = tmp_path / "fake-browser"
    script.write_text(FAKE_BROWSER.format(python=sys.executable, record=str(record), done=str(done)))
    script.chmod(0o755)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("hello\n")
    env = {**os.environ, "BROWSER": str(script)}
    proc = subprocess.Popen([sys.executable, "-m", "lore_sidecar", "ui", "--store-dir", str(tmp_path / "store")],
                            cwd=ws, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    deadline = time.monotonic() + 60
    while not record.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return proc, url, eval(record.read_text()), done  # noqa: S307 (our own fake browser's repr)


@pytest.fixture
def launched(tmp_path):
    proc, url, (argv, cmdline, _), done = start_ui(tmp_path)
    try:
        yield proc, url, argv, cmdline  # the fake browser is still running: the dashboard answers meanwhile
    finally:
        done.write_text("")
        proc.terminate()
        proc.wait(10)


def test_a_launch_code_is_good_for_sixty_seconds_and_once():
    from lore_sidecar.ui.guard import LAUNCH_TTL_S, Access

    assert LAUNCH_TTL_S == 60  # security.md: valid 60 seconds
    now = [1000.0]
    access = Access("the-token", clock=lambda: now[0])
    early, late = access.launch_code(), access.launch_code()
    now[0] += LAUNCH_TTL_S - 1
    assert access.redeem(early)  # the control: inside its minute it logs in
    assert not access.redeem(early)  # once
    now[0] += 2  # 61 s after both were made
    assert not access.redeem(late)
    assert not access.redeem("the-token") and not access.redeem("")
    fresh = access.launch_code()
    assert access.redeem(fresh)  # a code made now is good


def test_a_launch_code_is_still_good_at_its_sixtieth_second():
    from lore_sidecar.ui.guard import LAUNCH_TTL_S, Access

    now = [50.0]
    access = Access("the-token", clock=lambda: now[0])
    on_time, late = access.launch_code(), access.launch_code()
    now[0] += LAUNCH_TTL_S  # valid for sixty seconds: the sixtieth included
    assert access.redeem(on_time)
    now[0] += 0.001
    assert not access.redeem(late)


def test_a_browser_command_that_never_returns_neither_stalls_the_dashboard_nor_its_exit(tmp_path):
    proc, url, (_, _, browser_pid), done = start_ui(tmp_path)
    try:
        parts = urllib.parse.urlsplit(url)
        assert ask(parts.port, f"/?{parts.query}")[0] == 200  # answered while BROWSER has not returned
        proc.terminate()
        assert proc.wait(15) == 0
    finally:
        done.write_text("")  # the fake browser goes too
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    deadline = time.monotonic() + 10
    while Path(f"/proc/{browser_pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)


def test_the_browser_gets_a_one_time_code_never_the_token_and_the_code_logs_in_once(launched):
    proc, url, argv, cmdline = launched
    parts = urllib.parse.urlsplit(url)
    token = urllib.parse.parse_qs(parts.query)["token"][0]
    assert token not in " ".join(argv) and token not in cmdline
    launch = next(a for a in argv if "/launch?code=" in a)
    code = urllib.parse.parse_qs(urllib.parse.urlsplit(launch).query)["code"][0]
    port = parts.port
    path = f"/launch?code={code}"

    status, headers, _ = ask(port, path)
    assert status == 303 and headers["Location"] == "/", (status, headers)
    assert_guarded("launch redirect", headers)
    cookie = headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and token not in cookie
    session = cookie.split(";", 1)[0]
    status, headers, page = ask(port, "/", headers={"Cookie": session})
    assert status == 200 and "<h1>Search</h1>" in page and token not in page  # logged in, the token nowhere
    assert_guarded("page by cookie", headers)

    status, headers, _ = ask(port, path)  # the same code a second time
    assert status == 401 and "Set-Cookie" not in headers
    assert ask(port, "/launch?code=" + code[:-1] + ("A" if code[-1] != "A" else "B"))[0] == 401
    assert ask(port, "/")[0] == 401  # no cookie, no token
    assert ask(port, "/", headers={"Cookie": session[:-1] + ("x" if session[-1] != "x" else "y")})[0] == 401
    # the printed URL keeps working, with or without the cookie
    status, headers, page = ask(port, f"/?token={token}")
    assert status == 200 and "<h1>Search</h1>" in page and "HttpOnly" in headers["Set-Cookie"]


@pytest.mark.skipif(os.geteuid() != 0, reason="becoming uid 65534 needs root")
def test_another_local_user_learns_no_token_from_proc_and_is_refused(launched):
    proc, url, argv, _ = launched
    token = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)["token"][0]
    python = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable

    def as_nobody() -> None:
        os.setgid(65534)
        os.setgroups([])
        os.setuid(65534)

    out = subprocess.run([python, "-S", "-c", OUTSIDER, str(proc.pid), url], capture_output=True, text=True, timeout=60,
                         preexec_fn=as_nobody, cwd="/")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    seen = report["seen"]
    assert token not in json.dumps(seen)
    # the control: the outsider did read those command lines (the ui's own, and the browser's code)
    assert "lore_sidecar ui" in seen[str(proc.pid)]
    assert any("/launch?code=" in line for line in seen.values()), seen
    assert not any("[environ readable]" in line for line in seen.values())
    # and what it found, or even the token, gets it nothing: the peer is another user
    assert report["asked"]["code"] == [403, None] and report["asked"]["token"][0] == 403
    # the control: the code the outsider tried is still good for the user (not burned)
    launch = urllib.parse.urlsplit(next(a for a in argv if "/launch?code=" in a))
    assert ask(launch.port, f"{launch.path}?{launch.query}")[0] == 303


def test_every_answer_carries_the_security_headers(launched):
    _, url, _, _ = launched
    parts = urllib.parse.urlsplit(url)
    port, q = parts.port, parts.query
    cases = {
        "page": ask(port, f"/?{q}"),
        "json": ask(port, f"/status.json?{q}"),
        "401": ask(port, "/"),
        "403 foreign origin": ask(port, f"/?{q}", headers={"Origin": "http://127.0.0.1:1"}),
        "403 origin null, no fetch metadata": ask(port, "/retain", method="POST", headers={"Origin": "null"},
                                                  body={"token": q[6:], "content": "x"}),
        "404": ask(port, f"/nope?{q}"),
        "405": ask(port, f"/retain?{q}"),
        "421": ask(port, f"/?{q}", headers={"Host": "lore.attacker.example"}),
        "400 bad input": ask(port, f"/node?uri=nonsense&{q}"),
        "303 after a form": ask(port, "/retain", method="POST", headers={"Origin": "null", "Sec-Fetch-Site": "same-origin"},
                                body={"token": q[6:], "content": "the release train leaves on Thursdays"}),
    }
    statuses = {k: v[0] for k, v in cases.items()}
    assert statuses == {"page": 200, "json": 200, "401": 401, "403 foreign origin": 403,
                        "403 origin null, no fetch metadata": 403, "404": 404, "405": 405, "421": 421,
                        "400 bad input": 400, "303 after a form": 303}, statuses
    for what, (_, headers, _) in cases.items():
        assert_guarded(what, headers)
    assert cases["json"][1]["Content-Type"].startswith("application/json")
    assert json.loads(cases["json"][2])["role"] in ("writer", "follower")
    # a script's redirect keeps its token (it has no cookie jar); the node it made is there
    location = cases["303 after a form"][1]["Location"]
    assert location.startswith("/node?") and f"token={q[6:]}" in location
    assert "Thursdays" in ask(port, location)[2]


def test_a_rebound_dns_name_is_refused_even_when_it_carries_the_dashboards_port(launched):
    """DNS rebinding: a page at http://attacker.example:PORT/ whose name now resolves to
    127.0.0.1 sends its own name with the dashboard's port, and the browser would hand it the
    answers. Only the loopback names are answered; the control: the same request under each
    of them is."""
    _, url, _, _ = launched
    parts = urllib.parse.urlsplit(url)
    port, q = parts.port, parts.query
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"):
        assert ask(port, f"/?{q}", headers={"Host": host})[0] == 200, host
        # a form the dashboard served under that name posts with it as its Origin
        status, _, text = ask(port, "/retain", method="POST", headers={"Host": host, "Origin": f"http://{host}"},
                              body={"token": q[6:], "content": f"posted under {host}"})
        assert status == 303, (host, status, text)
    for host in (f"lore.attacker.example:{port}", f"127.0.0.1.attacker.example:{port}", f"localhost.:{port}"):
        status, headers, _ = ask(port, f"/?{q}", headers={"Host": host})
        assert status == 421, host
        assert "Set-Cookie" not in headers, host  # the token it carried logged nobody in


def test_a_launch_code_is_redeemed_only_by_the_browsers_get(launched):
    """A form posted to /launch (from anywhere) neither logs in nor burns the code."""
    _, url, argv, _ = launched
    launch = urllib.parse.urlsplit(next(a for a in argv if "/launch?code=" in a))
    path = f"{launch.path}?{launch.query}"
    status, headers, _ = ask(launch.port, path, method="POST", body={"x": "1"})
    assert status == 401 and "Set-Cookie" not in headers, (status, headers)
    status, headers, _ = ask(launch.port, path)  # the control: the browser's GET still logs in
    assert status == 303 and "HttpOnly" in headers["Set-Cookie"]


def test_a_page_on_another_loopback_port_is_refused_even_for_a_plain_get(launched):
    """A page served on another port of 127.0.0.1 is `same-site` to the dashboard: the browser
    sends it the SameSite=Strict cookie, so Sec-Fetch-Site is what tells it apart. Its GETs
    and its posts are refused; the controls — the dashboard's own navigation, a URL typed or
    opened by the user, and a script without fetch metadata — are answered."""
    _, url, _, _ = launched
    parts = urllib.parse.urlsplit(url)
    port, q = parts.port, parts.query
    for site in ("same-origin", "none", None):
        headers = {"Sec-Fetch-Site": site} if site else {}
        assert ask(port, f"/?{q}", headers=headers)[0] == 200, site
    for path in (f"/?{q}", f"/status.json?{q}", f"/search?{q}&q=hello"):
        status, headers, _ = ask(port, path, headers={"Sec-Fetch-Site": "same-site"})
        assert status == 403, (path, status)
        assert "Set-Cookie" not in headers, path
    status, _, _ = ask(port, "/retain", method="POST", headers={"Sec-Fetch-Site": "same-site"},
                       body={"token": q[6:], "content": "posted from another port"})
    assert status == 403
