"""Dream and review over stdio on a seeded store: duplicates, a superseded decision, a node a
newer fact contradicts, a node citing a deleted file, a faded node, a priority-0 node, and a
used node as the control — in rule mode, advisory mode and model mode (fake Anthropic)."""

from __future__ import annotations

import json
import os

import pytest

from lore_sidecar.client import StdioClient, sidecar_command
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.seeded import seed

EXPECTED = {
    "project://shop/pattern/retry-b": "merge",
    "project://shop/decision/queue-redis": "supersede",
    "project://shop/architecture/payments": "contradiction",
    "project://shop/gotcha/old-module": "stale-source",
    "project://shop/pattern/colour": "faded",
    "project://shop/architecture/orders-db": "contradiction",
}


def nodes(c: StdioClient) -> dict[str, dict]:
    return {n["uri"]: n for n in c.request("lore/listNodes", {})["nodes"]}


def test_review_lists_the_faded_node_and_not_the_used_one(tmp_path):
    c, _ = seed(tmp_path)
    try:
        r = c.request("lore/review", {})
        bad = c.request_full("lore/review", {"threshold": 2})
    finally:
        c.close()
    faded = {i["uri"]: i for i in r["items"]}
    assert list(faded) == ["project://shop/pattern/colour"] and r["total"] == 1 and not r["truncated"]
    assert "recalled 30 times, opened 0" in faded["project://shop/pattern/colour"]["reason"]
    # the control: recalled just as often, but opened each time — not listed
    assert "project://shop/pattern/deploy" not in faded
    assert bad["error"]["code"] == -32602


def test_dream_handles_each_case_with_a_review_mark_and_rolls_back_exactly(tmp_path):
    c, _ = seed(tmp_path)
    try:
        before = nodes(c)
        advisory = c.request("lore/dream", {"dryRun": True})
        assert nodes(c) == before  # advisory: nothing changed
        run = c.request("lore/dream", {})
        after = nodes(c)
        history = c.request("lore/nodeHistory", {"uri": "project://shop/pattern/retry-b"})
        undone = c.request("lore/dreamRollback", {})
        restored = nodes(c)
        again = c.request("lore/nodeHistory", {"uri": "project://shop/decision/queue-redis"})
        twice = c.request_full("lore/dreamRollback", {"runId": run["runId"]})
    finally:
        c.close()
    assert {ch["uri"]: ch["action"] for ch in advisory["changes"]} == EXPECTED
    assert advisory["applied"] == 0 and advisory["advisory"] is True
    got = {ch["uri"]: ch for ch in run["changes"]}
    assert {u: ch["action"] for u, ch in got.items()} == EXPECTED and run["mode"] == "rules"
    assert got["project://shop/architecture/orders-db"]["applied"] is False  # priority 0: only proposed
    assert got["project://shop/architecture/orders-db"]["protected"] is True
    assert after["project://shop/architecture/orders-db"] == before["project://shop/architecture/orders-db"]
    assert "project://shop/pattern/retry-b" not in after and "project://shop/pattern/retry-a" in after
    assert after["project://shop/decision/queue-redis"]["suppressed"] is True
    assert after["project://shop/architecture/payments"]["suppressed"] is True
    assert after["project://shop/gotcha/old-module"]["priority"] == 3
    assert after["project://shop/pattern/colour"]["priority"] == 4
    assert after["project://shop/pattern/deploy"] == before["project://shop/pattern/deploy"]  # the control
    mark = history["entries"][-1]
    assert mark["action"] == "delete" and mark["runtime"] == "dream"
    assert mark["node"]["review"]["runId"] == run["runId"] and mark["node"]["review"]["before"]["content"] == \
        before["project://shop/pattern/retry-b"]["content"]
    # Rollback: every changed node has its content and fields back exactly; history says so.
    assert sorted(undone["restored"]) == sorted(u for u in EXPECTED if u != "project://shop/architecture/orders-db")
    keep = ("content", "category", "priority", "disclosure", "suppressed", "scope")
    for uri in EXPECTED:
        assert {k: restored[uri][k] for k in keep} == {k: before[uri][k] for k in keep}, uri
    assert again["entries"][-1]["node"]["review"] == {"runId": run["runId"], "reason": f"rollback of {run['runId']}",
                                                      "rollback": True}
    assert twice["error"]["data"]["kind"] == "alreadyRolledBack"


def test_an_advisory_run_after_an_applied_one_leaves_the_default_rollback_undoing_the_applied_one(tmp_path):
    c, _ = seed(tmp_path)
    try:
        before = nodes(c)
        run = c.request("lore/dream", {})
        changed = nodes(c)
        advisory = c.request("lore/dream", {"dryRun": True})  # only looks: it is no run to undo
        refused = c.request_full("lore/dreamRollback", {"runId": advisory["runId"]})
        undone = c.request("lore/dreamRollback", {})  # "the latest" is the latest applied run
        restored = nodes(c)
    finally:
        c.close()
    assert run["applied"] > 0 and changed != before and advisory["advisory"] is True
    assert refused["error"]["data"]["kind"] == "notFound"
    assert undone["runId"] == run["runId"] and undone["restored"]
    keep = ("content", "category", "priority", "suppressed")
    assert {u: {k: n[k] for k in keep} for u, n in restored.items()} == {u: {k: n[k] for k in keep} for u, n in before.items()}


def judged(body) -> list[str]:
    """The proposals a dream judge call sends, one JSON line each."""
    text = body["messages"][0]["content"]
    return (text if isinstance(text, str) else text[0]["text"]).splitlines()


def test_dream_in_model_mode_follows_the_models_verdicts(tmp_path):
    def responder(body):
        system = json.dumps(body.get("system"))
        if "You review proposed maintenance" not in system:
            return "- nothing"
        out = []
        for line in judged(body):
            p = json.loads(line)
            if p["uri"].endswith("/colour"):
                out.append({"uri": p["uri"], "decision": "skip", "reason": "the colour is still current"})
            elif p["action"] == "merge":
                out.append({"uri": p["uri"], "decision": "apply", "reason": "same rule twice",
                            "content": "HTTP calls to the payment gateway retry three times with exponential backoff."})
            else:
                out.append({"uri": p["uri"], "decision": "apply", "reason": f"model agrees: {p['action']}"})
        return "\n".join(json.dumps(o) for o in out)

    with FakeAnthropic(responder) as fake:
        env = {**os.environ, "ANTHROPIC_API_KEY": "sk-test-not-a-real-key", "ANTHROPIC_BASE_URL": fake.url}
        c, _ = seed(tmp_path, env)
        try:
            before = nodes(c)
            run = c.request("lore/dream", {})
            after = nodes(c)
            c.request("lore/dreamRollback", {"runId": run["runId"]})
            restored = nodes(c)
        finally:
            c.close()
    got = {ch["uri"]: ch for ch in run["changes"]}
    assert run["mode"] == "model"
    assert got["project://shop/pattern/colour"]["applied"] is False and after["project://shop/pattern/colour"]["priority"] == 3
    assert after["project://shop/pattern/retry-a"]["content"].startswith("HTTP calls to the payment gateway retry")
    assert got["project://shop/decision/queue-redis"]["reason"] == "model agrees: supersede"
    assert got["project://shop/architecture/orders-db"]["applied"] is False  # priority 0 even when the model agrees
    # the merged text the model wrote is undone byte for byte
    assert restored["project://shop/pattern/retry-a"]["content"] == before["project://shop/pattern/retry-a"]["content"]


@pytest.mark.parametrize("priority", [0, 1])
def test_a_merge_into_a_priority_0_or_1_node_never_rewrites_its_text_though_the_model_offers_one(tmp_path, priority):
    """The model may write a merged text for the kept node; a priority 0-1 keeper keeps its own
    words (docs/maintenance.md: they are never changed) while its lower-priority duplicates
    still go — both ends of that range (fresh round 5 planted a bug that protected only 0).
    The control is the model-mode test above: a priority-2 keeper is rewritten."""
    merged = "MERGED TEXT the model wrote for the keeper"

    def responder(body):
        if "You review proposed maintenance" not in json.dumps(body.get("system")):
            return "- nothing"
        return "\n".join(json.dumps({"uri": json.loads(line)["uri"], "decision": "apply", "reason": "same",
                                      "content": merged}) for line in judged(body))

    words = "Every HTTP call to the payment gateway retries three times with exponential backoff!"
    with FakeAnthropic(responder) as fake:
        env = {**os.environ, "ANTHROPIC_API_KEY": "sk-test-not-a-real-key", "ANTHROPIC_BASE_URL": fake.url}
        c, _ = seed(tmp_path, env)
        try:
            c.request("lore/createNode", {"uri": "project://shop/pattern/retry-rule", "priority": priority,
                                          "category": "pattern", "content": words})
            run = c.request("lore/dream", {})
            after = nodes(c)
        finally:
            c.close()
    assert run["mode"] == "model"
    got = {ch["uri"]: ch for ch in run["changes"]}
    merged_away = [u for u, ch in got.items() if ch["action"] == "merge" and ch["related"] == "project://shop/pattern/retry-rule"]
    assert merged_away and all(got[u]["applied"] for u in merged_away)  # the duplicates went
    assert after["project://shop/pattern/retry-rule"]["content"] == words  # ... the keeper kept its words
    assert merged not in json.dumps(after)


def test_recall_ranks_a_node_that_is_never_opened_below_one_that_is_and_never_touches_priority_0_1(tmp_path):
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    c = StdioClient(sidecar_command())
    c.initialize(ws, options={"storeDir": str(tmp_path / "store"), "watch": False, "indexWorkspace": False})
    try:
        for name, priority in (("ignored", 3), ("opened", 3), ("rule-a", 1), ("rule-b", 1)):
            c.request("lore/createNode", {"uri": f"project://ws/pattern/{name}", "priority": priority, "category": "pattern",
                                          "content": f"The cobalt widget cache expires hourly ({name})"})
        query = {"query": "cobalt widget cache expires hourly", "sources": ["knowledge"]}
        first = [h["uri"] for h in c.request("lore/recall", query)["hits"]]
        for i in range(20):
            r = c.request("lore/recall", {**query, "sessionId": f"s{i}"})
            for h in r["hits"]:
                if h["uri"].endswith(("/opened", "/rule-b")):
                    c.request("lore/getNode", {"uri": h["uri"], "queryId": r["queryId"], "sessionId": f"s{i}"})
        after = [h["uri"] for h in c.request("lore/recall", query)["hits"]]
    finally:
        c.close()
    rank = {u: i for i, u in enumerate(after)}
    assert rank["project://ws/pattern/opened"] < rank["project://ws/pattern/ignored"]
    # priority 1: disuse never moves them, so they keep the order they had before any usage
    assert [u for u in after if "/rule-" in u] == [u for u in first if "/rule-" in u]
    assert set(first) == set(after)  # the control: the same hits, only reordered


VOLATILE = ("version", "updatedAt")  # a rollback is a new version, written now
RECREATED = (*VOLATILE, "createdAt", "uses")  # a node dream deleted is created again


def test_dream_rollback_gives_back_every_field_of_each_node_and_never_changes_priority_1(tmp_path):
    """The whole node is compared, not a chosen few fields: a re-created node that came back
    without its expiresAt (immortal) or its recorded source hashes would fail here."""
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / "src").mkdir()
    (ws / "src/sign.py").write_text("KEY = 'team'\n")
    (ws / "src/gone.py").write_text("x = 1\n")
    sha = "ab" * 32
    c = StdioClient(sidecar_command())
    c.initialize(ws, options={"storeDir": str(tmp_path / "store"), "watch": False, "indexWorkspace": False,
                              "distillIdleMs": 3_600_000})
    made = [
        ("project://ws/pattern/keep", 2, "Release builds are signed with the team key before upload", None, None),
        ("project://ws/pattern/dup", 3, "Release builds are signed with the team key before the upload",
         "2031-01-01T00:00:00Z", [{"path": "src/sign.py", "sha256": sha}]),
        ("project://ws/gotcha/low", 2, "The gone module configures the cron scheduler at import",
         "2030-06-01T00:00:00Z", [{"path": "src/gone.py"}]),
        ("project://ws/gotcha/rule", 1, "Webhooks must be verified by src/gone.py before parsing payloads",
         "2030-06-01T00:00:00Z", [{"path": "src/gone.py"}]),
        ("project://ws/architecture/invoices-low", 2, "The billing service keeps invoices in MySQL", None, None),
        ("project://ws/architecture/invoices-rule", 1, "Invoice rows of the billing service live in MySQL tables",
         None, None),
    ]
    try:
        for uri, priority, content, expires, sources in made:
            c.request("lore/createNode", {"uri": uri, "priority": priority, "content": content, "category": uri.split("/")[3],
                                          **({"expiresAt": expires} if expires else {}),
                                          **({"sources": sources} if sources else {})})
        for obj, since in (("MySQL", "2024-01-01T00:00:00Z"), ("PostgreSQL", "2025-01-01T00:00:00Z")):
            c.request("lore/assertFact", {"subject": "billing service", "predicate": "stores invoices in",
                                          "object": obj, "validFrom": since})
        (ws / "src/gone.py").unlink()
        before = nodes(c)
        run = c.request("lore/dream", {})
        after = nodes(c)
        c.request("lore/dreamRollback", {"runId": run["runId"]})
        restored = nodes(c)
    finally:
        c.close()
    got = {ch["uri"]: ch for ch in run["changes"]}
    # the lower-priority controls are changed by dream ...
    assert got["project://ws/pattern/dup"]["action"] == "merge" and "project://ws/pattern/dup" not in after
    assert got["project://ws/gotcha/low"]["applied"] and after["project://ws/gotcha/low"]["priority"] == 3
    assert got["project://ws/architecture/invoices-low"]["action"] == "contradiction"
    assert after["project://ws/architecture/invoices-low"]["suppressed"] is True
    # ... their priority-1 twins are only proposed, and left exactly as they were
    for uri in ("project://ws/gotcha/rule", "project://ws/architecture/invoices-rule"):
        assert got[uri]["applied"] is False and got[uri]["protected"] is True, uri
        assert after[uri] == before[uri], uri
    # rollback: every node, every field (the deleted one re-created with its expiry and hashes)
    assert set(restored) == set(before)
    for uri, node in before.items():
        skip = RECREATED if uri == "project://ws/pattern/dup" else VOLATILE if uri in after and after[uri] != node else ()
        assert {k: v for k, v in restored[uri].items() if k not in skip} == \
            {k: v for k, v in node.items() if k not in skip}, uri
    assert restored["project://ws/pattern/dup"]["expiresAt"] == "2031-01-01T00:00:00Z"
    assert restored["project://ws/pattern/dup"]["sources"] == [{"path": "src/sign.py", "sha256": sha}]


def test_dream_rollback_gives_back_the_stale_flag_of_a_demoted_and_of_a_re_created_node(tmp_path):
    """A node flagged stale (its cited file changed since it was written) that dream demoted,
    and a stale duplicate dream merged away: rollback gives both back flagged, with the hash
    they recorded (docs/maintenance.md: "the stale flag"). Then a client's update of the
    restored stale node that brings new sources keeps those sources (knowledge.update_in)."""
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / "src").mkdir()
    for name in ("a", "b", "c"):
        (ws / f"src/{name}.py").write_text(f"def {name}():\n    return '{name}'\n")
    c = StdioClient(sidecar_command())
    c.initialize(ws, options={"storeDir": str(tmp_path / "store"), "watch": False, "distillIdleMs": 3_600_000})
    made = [
        ("project://ws/gotcha/edited", 2, "The cron scheduler reads its table from the a module at import", "src/a.py"),
        ("project://ws/pattern/keep", 2, "Invoices are exported nightly to the billing bucket as CSV files", None),
        ("project://ws/pattern/dup", 3, "Invoices are exported nightly to the billing bucket as the CSV files", "src/b.py"),
        ("project://ws/gotcha/untouched", 2, "Webhook payloads are parsed by the c module after verification", "src/c.py"),
    ]
    try:
        c.request("lore/reindex", {"scope": "workspace"})
        for uri, priority, content, source in made:
            c.request("lore/createNode", {"uri": uri, "priority": priority, "content": content,
                                          "category": uri.split("/")[3],
                                          **({"sources": [{"path": source}]} if source else {})})
        (ws / "src/a.py").write_text("def a():\n    return 'A'\n")
        (ws / "src/b.py").write_text("def b():\n    return 'B'\n")
        c.request("lore/reindex", {"scope": "workspace"})
        before = nodes(c)
        run = c.request("lore/dream", {})
        after = nodes(c)
        c.request("lore/dreamRollback", {"runId": run["runId"]})
        restored = nodes(c)
        c.request("lore/updateNode", {"uri": "project://ws/gotcha/edited", "sources": [{"path": "src/c.py"}]})
        updated = nodes(c)["project://ws/gotcha/edited"]
    finally:
        c.close()
    # the setup holds: two stale nodes, the control citing an untouched file is not
    for uri, path in (("project://ws/gotcha/edited", "src/a.py"), ("project://ws/pattern/dup", "src/b.py")):
        assert before[uri]["stale"] == {**before[uri]["stale"], "path": path, "reason": "changed"}, uri
    assert before["project://ws/gotcha/untouched"]["stale"] is None
    got = {ch["uri"]: ch for ch in run["changes"]}
    assert got["project://ws/gotcha/edited"]["action"] == "stale-source" and got["project://ws/gotcha/edited"]["applied"]
    assert got["project://ws/pattern/dup"]["action"] == "merge" and "project://ws/pattern/dup" not in after
    assert after["project://ws/gotcha/edited"]["priority"] == 3
    # rollback: both back as they were, the stale flag and the recorded hash included
    assert set(restored) == set(before)
    for uri, node in before.items():
        skip = RECREATED if uri == "project://ws/pattern/dup" else VOLATILE if after.get(uri) != node else ()
        assert {k: v for k, v in restored[uri].items() if k not in skip} == \
            {k: v for k, v in node.items() if k not in skip}, uri
    assert restored["project://ws/gotcha/edited"]["stale"] == before["project://ws/gotcha/edited"]["stale"]
    assert restored["project://ws/pattern/dup"]["stale"] == before["project://ws/pattern/dup"]["stale"]
    # an update that names new sources takes them (re-confirmed: the flag clears), never the old paths
    c_sha = before["project://ws/gotcha/untouched"]["sources"][0]["sha256"]
    assert c_sha and updated["sources"] == [{"path": "src/c.py", "sha256": c_sha}] and updated["stale"] is None


REVIEWED = [  # (uri, priority, a word only it holds, how many recalls show it and are not opened from)
    ("project://shop/pattern/one", 3, "aardvark", 1),
    ("project://shop/pattern/two", 2, "bandicoot", 2),
    ("project://shop/pattern/three", 3, "capybara", 3),
    ("project://shop/pattern/four", 4, "dugong", 4),
    ("project://shop/pattern/standing", 1, "echidna", 6),  # priority 1: never reviewed
]


def test_review_pages_most_faded_first_from_priority_2_to_4_and_says_where_the_next_page_starts(tmp_path):
    """lore/review (docs/maintenance.md): priority 2-4 nodes below the threshold, most faded
    first; a page of `limit` from `offset`, `truncated` and `nextOffset` while more are left.
    Each node here is shown by its own recalls and never opened, so the more recalls, the more
    faded. The controls: the default threshold (0.3) lists none of them, and the priority-1
    node shown most of all is never listed. Before any dream, a rollback has nothing to undo."""
    ws = tmp_path / "shop"
    (ws / ".git").mkdir(parents=True)
    c = StdioClient(sidecar_command())
    c.initialize(ws, options={"storeDir": str(tmp_path / "store"), "watch": False, "indexWorkspace": False,
                              "distiller": "off"})
    try:
        nothing = c.request_full("lore/dreamRollback", {})
        for uri, priority, word, shown in REVIEWED:
            c.request("lore/createNode", {"uri": uri, "category": "pattern", "priority": priority,
                                          "content": f"The {word} module keeps its own cache"})
            for i in range(shown):
                r = c.request("lore/recall", {"query": word, "sources": ["knowledge"], "sessionId": f"{word}{i}"})
                assert [h["uri"] for h in r["hits"]] == [uri]
        default = c.request("lore/review", {})
        first = c.request("lore/review", {"threshold": 0.99, "limit": 2})
        second = c.request("lore/review", {"threshold": 0.99, "limit": 2, "offset": first["nextOffset"]})
        whole = c.request("lore/review", {"threshold": 0.99})
    finally:
        c.close()
    assert nothing["error"]["data"]["kind"] == "notFound"
    assert default["items"] == [] and default["total"] == 0 and default["threshold"] == 0.3
    assert "nextOffset" not in default and default["truncated"] is False
    order = [u for u, *_ in reversed(REVIEWED[:4])]  # most recalls ignored first
    assert [i["uri"] for i in whole["items"]] == order and whole["total"] == 4 and whole["truncated"] is False
    assert [i["uri"] for i in first["items"]] == order[:2] and first["truncated"] is True and first["nextOffset"] == 2
    assert [i["uri"] for i in second["items"]] == order[2:] and second["truncated"] is False
    assert "nextOffset" not in second and second["total"] == 4 and second["threshold"] == 0.99
    item = whole["items"][0]
    assert (item["priority"], item["recalled"], item["used"], item["stabilityDays"]) == (4, 4, 0, 15.66)
    assert item["retrievability"] < whole["items"][1]["retrievability"] < 0.99
    assert "recalled 4 times, opened 0 (4 recalls ignored); never opened" in item["reason"]


def test_the_model_judges_forty_proposals_and_the_rest_keep_the_rules_verdict(tmp_path):
    """docs/maintenance.md: one batched call judges the proposals (40 at most: its budget); a
    proposal it does not answer keeps the rule's verdict. The model here skips every one it
    sees, so exactly the two it was not shown are applied; the control is the 40 it skipped."""
    seen: list[str] = []

    def responder(body):
        if "You review proposed maintenance" not in json.dumps(body.get("system")):
            return "- nothing"
        lines = [json.loads(line) for line in judged(body)]
        seen.extend(p["uri"] for p in lines)
        return "\n".join(json.dumps({"uri": p["uri"], "decision": "skip", "reason": "keep it"}) for p in lines)

    ws = tmp_path / "shop"
    (ws / ".git").mkdir(parents=True)
    with FakeAnthropic(responder) as fake:
        env = {**os.environ, "ANTHROPIC_API_KEY": "sk-test-not-a-real-key", "ANTHROPIC_BASE_URL": fake.url}
        c = StdioClient(sidecar_command(), env=env)
        c.initialize(ws, options={"storeDir": str(tmp_path / "store"), "watch": False, "indexWorkspace": False,
                                  "distillIdleMs": 3_600_000})
        try:
            for i in range(42):  # 42 nodes citing files that are then deleted: 42 stale-source proposals
                (ws / f"m{i}.py").write_text("x = 1\n")
                c.request("lore/createNode", {"uri": f"project://shop/gotcha/m{i:02d}", "category": "gotcha",
                                              "content": f"Module zq{i} handles x{i}", "sources": [{"path": f"m{i}.py"}]})
                (ws / f"m{i}.py").unlink()
            run = c.request("lore/dream", {})
        finally:
            c.close()
    assert run["mode"] == "model" and len(run["changes"]) == 42
    assert len(seen) == len(set(seen)) == 40
    applied = {ch["uri"] for ch in run["changes"] if ch["applied"]}
    assert len(applied) == 2 and applied.isdisjoint(seen) and run["applied"] == 2 and run["proposed"] == 40
    assert {ch["reason"] for ch in run["changes"] if ch["uri"] in seen} == {"keep it"}


def test_the_evidence_of_a_node_tells_a_current_source_from_a_changed_and_a_missing_one(tmp_path):
    """What the dashboard's node page shows (MaintenanceRequests.evidence): each cited file with
    the hash recorded when the node was written and the file's hash now. The control: the
    untouched file is `current`."""
    import hashlib
    from pathlib import Path

    from lore_sidecar.app import open_engine
    from lore_sidecar.settings import load_settings

    ws = tmp_path / "shop"
    (ws / ".git").mkdir(parents=True)
    for name in ("kept.py", "edited.py", "gone.py"):
        (ws / name).write_text(f"# {name}\n")
    settings, _ = load_settings(env={}, user_file=Path("/nonexistent"),
                                init_options={"storeDir": str(tmp_path / "store"), "embedder": "none"})
    engine = open_engine(settings, [str(ws)])
    try:
        uri = "project://shop/gotcha/evidence"
        engine.memory.node_op("createNode", project=str(ws), uri=uri, content="three files", category="gotcha",
                              sources=[{"path": p, "sha256": hashlib.sha256((ws / p).read_bytes()).hexdigest()}
                                       for p in ("kept.py", "edited.py", "gone.py")])
        (ws / "edited.py").write_text("# changed\n")
        (ws / "gone.py").unlink()
        got = {e["path"]: e for e in engine.maintenance.evidence(uri)}
    finally:
        engine.close()
    assert {p: (e["exists"], e["current"]) for p, e in got.items()} == {
        "kept.py": (True, True), "edited.py": (True, False), "gone.py": (False, False)}
    assert got["kept.py"]["currentSha256"] == got["kept.py"]["sha256"] and got["gone.py"]["currentSha256"] is None
    assert got["edited.py"]["sha256"] and got["edited.py"]["currentSha256"] != got["edited.py"]["sha256"]
