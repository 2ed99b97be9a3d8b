"""What each dashboard page shows and what each of its forms does (lore_sidecar/ui/pages.py,
ui/html.py, ui/guard.py), asked over HTTP of a real `lore-sidecar ui` the way a script does
(`?token=` on each request). One store for the module: nodes in two projects, a node whose
cited file changed and one whose cited file is gone, two versions of a fact per subject.
Each negative check stands beside the same request shaped to succeed."""

from __future__ import annotations

import re
import subprocess
import sys
import urllib.parse
from http.cookies import SimpleCookie

import pytest

from lore_sidecar.client import StdioClient, sidecar_command
from tests.integration.test_dashboard_access import ask

pytestmark = pytest.mark.slow

SHOP = "project://shop/decision/invoices"
OTHER = "project://garden/pattern/watering"
REDIS = "project://shop/decision/queue-redis"


def _seed(root):
    """Two projects' nodes and the shop's facts, written by a sidecar that then exits."""
    for name, nodes in (("garden", [(OTHER, "Tomatoes in the greenhouse are watered at dawn", None)]),
                        ("shop", [(SHOP, "Invoices are numbered per year and greenhouse branch", None),
                                  ("project://shop/gotcha/changed", "The tax table lives in src/tax.py", ["src/tax.py"]),
                                  ("project://shop/gotcha/gone", "The legacy importer lives in src/old.py",
                                   ["src/old.py"]),
                                  # a decision a newer one replaces: what a dream proposes to change
                                  (REDIS, "We queue background jobs in Redis with RQ workers", None),
                                  ("project://shop/decision/queue-sqs",
                                   "We queue background jobs in SQS now, replacing the Redis RQ workers", None)])):
        ws = root / name
        (ws / ".git").mkdir(parents=True)
        (ws / "src").mkdir()
        (ws / "src" / "tax.py").write_text("RATE = 0.2\n")
        (ws / "src" / "old.py").write_text("import legacy\n")
        c = StdioClient(sidecar_command())
        c.initialize(ws, options={"storeDir": str(root / "store"), "watch": False, "indexWorkspace": False,
                                  "distillIdleMs": 3_600_000})
        for uri, content, sources in nodes:
            c.request("lore/createNode", {"uri": uri, "content": content, "category": "decision",
                                          **({"sources": [{"path": p} for p in sources]} if sources else {})})
        if name == "shop":
            for i in range(32):  # more than one page of search results
                c.request("lore/createNode", {"uri": f"project://shop/pattern/lighthouse-{i}",
                                              "content": f"Lighthouse keeper rota {i} rotates on {i % 7 + 1} day"})
            for subject, old, new in (("payments service", "Stripe", "Adyen"), ("orders service", "MySQL", "Postgres")):
                c.request("lore/assertFact", {"subject": subject, "predicate": "uses", "object": old,
                                              "validFrom": "2024-01-01T00:00:00Z"})
                c.request("lore/assertFact", {"subject": subject, "predicate": "uses", "object": new,
                                              "validFrom": "2025-01-01T00:00:00Z"})
        c.close()
    shop = root / "shop"
    (shop / "src" / "tax.py").write_text("RATE = 0.21\n")
    (shop / "src" / "old.py").unlink()
    return shop


@pytest.fixture(scope="module")
def ui(tmp_path_factory):
    root = tmp_path_factory.mktemp("pages")
    shop = _seed(root)
    proc = subprocess.Popen([sys.executable, "-m", "lore_sidecar", "ui", "--no-browser", "--store-dir",
                             str(root / "store")], cwd=shop, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        parts = urllib.parse.urlsplit(proc.stdout.readline().strip())
        yield parts.port, urllib.parse.parse_qs(parts.query)["token"][0]
    finally:
        proc.terminate()
        proc.wait(10)


def get(ui, path: str, **params):
    port, token = ui
    return ask(port, f"{path}?{urllib.parse.urlencode({**params, 'token': token}, doseq=True)}")


def post(ui, path: str, **fields):
    port, token = ui
    return ask(port, path, method="POST", body={**fields, "token": token})


def cell(page: str, field: str) -> str:
    """The value beside `field` in a node page's two-column table."""
    found = re.search(rf"<tr><td>{re.escape(field)}</td><td>(.*?)</td></tr>", page)
    assert found, (field, page)
    return found.group(1)


def test_search_keeps_to_the_project_unless_every_project_is_ticked(ui):
    status, _, page = get(ui, "/", q="greenhouse")
    assert status == 200 and SHOP in page and OTHER not in page, page
    status, _, page = get(ui, "/", q="greenhouse", scope="all")
    assert status == 200 and SHOP in page and OTHER in page, page
    assert 'name=scope value=all checked' in page


def test_search_keeps_to_the_ticked_tiers(ui):
    _, _, page = get(ui, "/", q="invoices numbered", source="knowledge")
    assert SHOP in page and 'value="knowledge" checked' in page and 'value="messages">' in page, page
    _, _, page = get(ui, "/", q="invoices numbered", source="messages")
    assert SHOP not in page and "nothing matches" in page, page


def test_a_search_says_how_many_it_found_only_when_it_shows_fewer(ui):
    _, _, page = get(ui, "/", q="lighthouse keeper rota")
    assert page.count('<a class=hit ') == 30 and re.search(r"\d+ found, first 30 shown", page), page
    _, _, page = get(ui, "/", q="greenhouse branch invoices")
    assert SHOP in page and "found, first" not in page


def test_a_remembered_note_keeps_its_category_and_is_recorded_as_the_dashboards(ui):
    status, headers, _ = post(ui, "/retain", content="Refunds over 500 EUR need a second approver", category="gotcha")
    assert status == 303, headers
    location = headers["Location"]
    assert "note=remembered" in location
    uri = urllib.parse.parse_qs(urllib.parse.urlsplit(location).query)["uri"][0]
    _, _, page = get(ui, "/node", uri=uri)
    assert cell(page, "category") == "gotcha", page
    history = page.split("<h2>History</h2>", 1)[1]
    assert "<td>dashboard</td>" in history, history
    assert 'id="note">remembered<' in get(ui, "/node", uri=uri, note="remembered")[2]


def test_the_edit_form_saves_a_new_priority_and_the_suppress_form_toggles(ui):
    uri = "project://shop/gotcha/changed"
    _, _, page = get(ui, "/node", uri=uri)
    version = re.search(r'name="version" value="(\d+)"', page).group(1)
    content = re.search(r"<pre id=content>(.*?)</pre>", page, re.S).group(1)
    assert cell(page, "priority") != "4"
    status, _, text = post(ui, "/node/edit", uri=uri, version=version, content=content, priority="4")
    assert status == 303, text
    _, _, page = get(ui, "/node", uri=uri)
    assert cell(page, "priority") == "4", page

    # Unsuppressed, the page offers to suppress (value 1); once suppressed, to unsuppress (0).
    assert cell(page, "suppressed") == "no" and 'name="suppressed" value="1"' in page and ">Suppress<" in page
    status, headers, _ = post(ui, "/node/suppress", uri=uri, suppressed="1")
    assert status == 303 and "note=suppressed" in headers["Location"]
    _, _, page = get(ui, "/node", uri=uri)
    assert "yes" in cell(page, "suppressed") and 'name="suppressed" value="0"' in page and ">Unsuppress<" in page
    status, headers, _ = post(ui, "/node/suppress", uri=uri, suppressed="0")
    assert status == 303 and "note=unsuppressed" in headers["Location"]
    assert cell(get(ui, "/node", uri=uri)[2], "suppressed") == "no"


def test_the_evidence_ledger_tells_a_changed_source_from_a_missing_one(ui):
    changed = get(ui, "/node", uri="project://shop/gotcha/changed")[2].split("<h2>Evidence</h2>", 1)[1]
    gone = get(ui, "/node", uri="project://shop/gotcha/gone")[2].split("<h2>Evidence</h2>", 1)[1]
    assert "src/tax.py" in changed and "<b class=bad>changed</b>" in changed and "missing" not in changed.split("<h2>")[0]
    assert "src/old.py" in gone and "<b class=bad>missing</b>" in gone and "changed" not in gone.split("<h2>")[0]
    assert "no sources cited" in get(ui, "/node", uri=SHOP)[2]


def test_a_node_that_is_not_there_is_a_404_and_one_that_is_a_page(ui):
    status, _, text = get(ui, "/node", uri="project://shop/decision/no-such-node")
    assert status == 404 and "[notFound]" in text, (status, text)
    assert get(ui, "/node", uri=SHOP)[0] == 200


def test_a_form_the_wire_refuses_as_bad_input_is_a_400_saying_why(ui):
    status, _, text = post(ui, "/node/edit", uri=SHOP, content="x", priority="9")
    assert status == 400 and text.startswith("bad input: "), (status, text)


def test_facts_of_a_subject_list_its_versions_and_no_other_subjects(ui):
    status, _, page = get(ui, "/facts", subject="payments service")
    assert status == 200
    rows = page.split("<table>", 1)[1]
    assert "Stripe" in rows and "Adyen" in rows, rows  # the superseded version is listed too (history)
    assert "Postgres" not in rows and "MySQL" not in rows, rows
    assert page.count('<rect class="valid"') == 2
    everything = get(ui, "/facts")[2]
    assert all(o in everything for o in ("Stripe", "Adyen", "MySQL", "Postgres")) and '<rect class="valid"' not in everything


def test_a_note_in_the_address_is_shown_as_text_never_as_markup(ui):
    _, _, page = get(ui, "/", note='<script>alert("x")</script>')
    assert '<div class="card" id="note">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;</div>' in page, page
    assert "<script>" not in page


def test_a_cookie_is_scoped_to_its_dashboard_and_its_whole_site(ui):
    port, token = ui
    status, headers, _ = ask(port, f"/nope?token={token}")  # any answer to the token logs in, a 404 too
    assert status == 404
    jar = SimpleCookie(headers["Set-Cookie"])
    [(name, morsel)] = jar.items()
    assert name == f"lore_ui_{port}" and morsel["path"] == "/" and morsel["httponly"], headers["Set-Cookie"]
    status, _, page = ask(port, "/review", headers={"Cookie": f"{name}={morsel.value}"})
    assert status == 200 and "<h1>Review</h1>" in page


def test_a_nodes_stored_markup_is_shown_as_text_never_as_markup(ui):
    """docs/security.md: stored text is quoted inertly wherever it is rendered. A remembered
    note holding markup is shown on its page escaped, in its content and everywhere else;
    the control: the same page shows that content, as text."""
    hostile = '</pre><script>alert("lore")</script><img src=x onerror=alert(1)>'
    _, headers, _ = post(ui, "/retain", content=f"Escaping check {hostile}", category="gotcha")
    uri = urllib.parse.parse_qs(urllib.parse.urlsplit(headers["Location"]).query)["uri"][0]
    status, _, page = get(ui, "/node", uri=uri)
    assert status == 200
    content = re.search(r"<pre id=content>(.*?)</pre>", page, re.S).group(1)
    assert content == "Escaping check &lt;/pre&gt;&lt;script&gt;alert(&quot;lore&quot;)&lt;/script&gt;" \
                      "&lt;img src=x onerror=alert(1)&gt;", content
    assert "<script>" not in page and "<img" not in page, page


def runs_on(page: str) -> dict[str, str]:
    """Each dream run's card on the dream page, by run id."""
    cards = re.findall(r'<div class="card run"><h3>(\S+) (.*?)</div>(?=<div class="card run">|</main>)', page, re.S)
    return {run_id: card for run_id, card in cards}


def test_a_dream_proposed_accepted_and_rolled_back_by_its_run_id(ui):
    """Last in this file: it changes the shop's knowledge."""
    status, headers, _ = post(ui, "/dream/run", advisory="1")
    assert status == 303, headers
    note = urllib.parse.parse_qs(urllib.parse.urlsplit(headers["Location"]).query)["note"][0]
    advisory = note.split(":")[0]
    assert ": 0 applied," in note and not note.endswith(" 0 proposed"), note
    card = runs_on(get(ui, "/dream")[2])[advisory]
    assert "advisory" in card and "<td>proposed</td>" in card and "<td>applied</td>" not in card, card
    assert 'name=accept' in card and 'name=rollback' not in card
    assert get(ui, "/node", uri=REDIS)[2].count("<b class=bad>yes</b>") == 0  # proposed: nothing changed yet

    status, headers, _ = post(ui, "/dream/run", advisory="0")
    note = urllib.parse.parse_qs(urllib.parse.urlsplit(headers["Location"]).query)["note"][0]
    applied = note.split(":")[0]
    assert not note.split(": ")[1].startswith("0 applied"), note
    card = runs_on(get(ui, "/dream")[2])[applied]
    assert "<td>applied</td>" in card and f'name="runId" value="{applied}"' in card and "name=rollback" in card, card
    _, headers, _ = post(ui, "/dream/run", advisory="0")  # a later run, the latest: the default rollback's
    later = urllib.parse.parse_qs(urllib.parse.urlsplit(headers["Location"]).query)["note"][0].split(":")[0]
    assert later != applied

    status, headers, _ = post(ui, "/dream/rollback", runId=applied)  # the earlier run, chosen by its id
    assert status == 303, headers
    note = urllib.parse.parse_qs(urllib.parse.urlsplit(headers["Location"]).query)["note"][0]
    assert note.startswith(f"rolled back {applied}:") and not note.endswith(" 0 nodes restored"), note
    runs = runs_on(get(ui, "/dream")[2])
    assert "rolled back" in runs[applied] and "name=rollback" not in runs[applied], runs[applied]
    assert "name=rollback" in runs[later] and "rolled back" not in runs[later].split("</h3>")[0]


# -- independent review, fresh round 5 (tools/rounds/2026-12-07-fresh5.py) --------------------------

def test_a_search_hits_stored_markup_is_shown_as_text_never_as_markup(ui):
    """docs/security.md: stored text is quoted inertly wherever it is rendered, the search
    page's snippets too (a snippet is a piece of a conversation, a file or a note). The
    control: the hit and its words are on the page, as text."""
    hostile = '<script>alert("snip")</script><img src=x onerror=alert(2)>'
    post(ui, "/retain", content=f"Quarterly snippet escaping walrus check {hostile}", category="gotcha")
    status, _, page = get(ui, "/", q="quarterly snippet escaping walrus")
    assert status == 200 and "Quarterly snippet escaping walrus check" in page, page  # the control
    assert "&lt;script&gt;alert(&quot;snip&quot;)&lt;/script&gt;" in page, page
    assert "<script>" not in page and "<img" not in page, page


def test_the_health_page_answers_while_files_and_folders_of_the_store_come_and_go(tmp_path):
    """The Health page sums the store's file sizes while the store changes under it (spool
    files applied, segments merged, deltas folded, epochs removed). It listed with `rglob` and
    then looked at each file: one gone in between made the page a 500 (about half the loads
    while a folder churned). The control: the same page, asked before the churn, is a 200."""
    import shutil
    import threading

    ws, store = tmp_path / "ws", tmp_path / "store"
    (ws / ".git").mkdir(parents=True)
    proc = subprocess.Popen([sys.executable, "-m", "lore_sidecar", "ui", "--no-browser", "--store-dir", str(store)],
                            cwd=ws, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    stop = threading.Event()
    try:
        assert proc.stdout is not None
        parts = urllib.parse.urlsplit(proc.stdout.readline().strip())
        ui = (parts.port, urllib.parse.parse_qs(parts.query)["token"][0])
        status, _, before = get(ui, "/health")
        assert status == 200 and "writer" in before  # control
        churn = store / "spool" / "churn"
        churn.mkdir(parents=True)

        def come_and_go():  # folders (a spool's) and the files of one folder (segments, deltas)
            i, flat = 0, churn / "flat"
            flat.mkdir()
            while not stop.is_set():
                folder = churn / f"op{i % 200}"
                if folder.exists():
                    shutil.rmtree(folder, ignore_errors=True)
                else:
                    folder.mkdir()
                    (folder / "op.json").write_text("x" * 100)
                name = flat / f"f{i % 500}"
                if name.exists():
                    name.unlink()
                else:
                    name.write_text("y")
                i += 1

        threading.Thread(target=come_and_go, daemon=True).start()
        answers = [get(ui, "/health") for _ in range(50)]
        assert [a[0] for a in answers if a[0] != 200] == [], next(a[2] for a in answers if a[0] != 200)
        assert all(re.search(r"\(\d+\.\d MB\)", a[2]) for a in answers)  # the size is still shown
    finally:
        stop.set()
        proc.terminate()
        proc.wait(10)


def test_the_health_pages_store_size_is_the_bytes_of_its_files_in_every_folder(tmp_path):
    """What the Health page shows: the regular files' bytes, in the store's folders at every
    depth (the indexes live in folders of folders); a link is not followed (its target may be
    anywhere); a store folder that is not there is no disk and no bytes, not an error."""
    import os

    from lore_sidecar.ui.pages import _disk_and_size

    store = tmp_path / "store"
    (store / "index" / "epoch-1" / "text").mkdir(parents=True)
    (store / "lore.db").write_bytes(b"d" * 1000)
    (store / "index" / "epoch-1" / "vectors.bin").write_bytes(b"v" * 300)
    (store / "index" / "epoch-1" / "text" / "segment").write_bytes(b"t" * 20)
    elsewhere = tmp_path / "elsewhere.bin"
    elsewhere.write_bytes(b"x" * 50_000)
    os.symlink(elsewhere, store / "linked.bin")
    disk, size = _disk_and_size(store)
    assert disk is not None and disk.total > 0
    assert size == 1000 + 300 + 20
    assert _disk_and_size(tmp_path / "gone") == (None, 0)
