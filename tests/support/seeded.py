"""A store seeded with what memory maintenance must handle: duplicate nodes, a decision a
newer one replaces, nodes newer facts contradict (one of them priority 0), a node citing a
deleted file, a node recalled thirty times and never opened, and one opened each time."""

from __future__ import annotations

from pathlib import Path

from lore_sidecar.client import StdioClient, sidecar_command

NODES = [
    ("project://shop/pattern/retry-a", "pattern", 2,
     "Every HTTP call to the payment gateway retries three times with exponential backoff", None),
    ("project://shop/pattern/retry-b", "pattern", 3,
     "Every HTTP call to the payment gateway retries three times, with exponential backoff.", None),
    ("project://shop/architecture/payments", "architecture", 2, "The payments service uses Stripe for card charges", None),
    ("project://shop/decision/queue-redis", "decision", 2, "We queue background jobs in Redis with RQ workers", None),
    ("project://shop/decision/queue-sqs", "decision", 2,
     "We queue background jobs in SQS now, replacing the Redis RQ workers", None),
    ("project://shop/gotcha/old-module", "gotcha", 2, "src/old.py must be imported before the database layer",
     ["src/old.py"]),
    ("project://shop/pattern/colour", "pattern", 3, "The dashboard uses a teal colour scheme", None),
    ("project://shop/architecture/orders-db", "architecture", 0, "The orders service stores its data in MySQL", None),
    ("project://shop/pattern/deploy", "pattern", 3, "Deploys go through the blue-green pipeline", None),
]


def seed(tmp: Path, env: dict | None = None) -> tuple[StdioClient, Path]:
    ws = tmp / "shop"
    (ws / ".git").mkdir(parents=True)
    (ws / "src").mkdir()
    (ws / "src/old.py").write_text("import db\n")
    c = StdioClient(sidecar_command(), env=env)
    c.initialize(ws, options={"storeDir": str(tmp / "store"), "watch": False, "indexWorkspace": False,
                              "distillIdleMs": 3_600_000})
    for uri, category, priority, content, sources in NODES:
        c.request("lore/createNode", {"uri": uri, "content": content, "category": category, "priority": priority,
                                      **({"sources": [{"path": p} for p in sources]} if sources else {})})
    for subject, obj_old, obj_new, predicate in (("payments service", "Stripe", "Adyen", "uses"),
                                                  ("orders service", "MySQL", "PostgreSQL", "stores its data in")):
        c.request("lore/assertFact", {"subject": subject, "predicate": predicate, "object": obj_old,
                                      "validFrom": "2024-01-01T00:00:00Z"})
        c.request("lore/assertFact", {"subject": subject, "predicate": predicate, "object": obj_new,
                                      "validFrom": "2025-01-01T00:00:00Z"})
    (ws / "src/old.py").unlink()
    for i in range(30):  # the colour node is shown thirty times and never opened
        r = c.request("lore/recall", {"query": "dashboard teal colour scheme", "sources": ["knowledge"],
                                      "sessionId": f"s{i}"})
        assert r["hits"][0]["uri"] == "project://shop/pattern/colour"
    for i in range(30):  # the deploy node is shown as often, and opened each time (the control)
        r = c.request("lore/recall", {"query": "blue-green deploys pipeline", "sources": ["knowledge"],
                                      "sessionId": f"d{i}"})
        c.request("lore/getNode", {"uri": r["hits"][0]["uri"], "queryId": r["queryId"], "sessionId": f"d{i}"})
    return c, ws
