"""Dream in model mode when the judging call fails (docs/maintenance.md: a failed call keeps
the rules' verdicts), over stdio with a fake Anthropic API on 127.0.0.1."""

from __future__ import annotations

import json
import os

from lore_sidecar.client import StdioClient, sidecar_command
from tests.integration.test_maintenance import nodes
from tests.support.fake_anthropic import FakeAnthropic


def test_a_judge_call_that_fails_keeps_every_rules_verdict(tmp_path):
    """docs/maintenance.md: with a model, a failed judge call keeps the rules' verdicts — the
    run applies what the rules would, it does not skip everything. Three nodes cite files that
    are then deleted; the model refuses the call (a 400, not retried). The control: the call
    was made (model mode, one judge request seen) and each node is demoted one priority."""
    calls: list[dict] = []

    def responder(body):
        if "You review proposed maintenance" not in json.dumps(body.get("system")):
            return "- nothing"
        calls.append(body)
        return {"status": 400, "error_type": "invalid_request_error"}

    ws = tmp_path / "shop"
    (ws / ".git").mkdir(parents=True)
    with FakeAnthropic(responder) as fake:
        env = {**os.environ, "ANTHROPIC_API_KEY": "sk-test-not-a-real-key", "ANTHROPIC_BASE_URL": fake.url}
        c = StdioClient(sidecar_command(), env=env)
        c.initialize(ws, options={"storeDir": str(tmp_path / "store"), "watch": False, "indexWorkspace": False,
                                  "distillIdleMs": 3_600_000})
        try:
            for i in range(3):
                (ws / f"m{i}.py").write_text("x = 1\n")
                c.request("lore/createNode", {"uri": f"project://shop/gotcha/m{i}", "category": "gotcha", "priority": 2,
                                              "content": f"Module zq{i} handles x{i}", "sources": [{"path": f"m{i}.py"}]})
                (ws / f"m{i}.py").unlink()
            run = c.request("lore/dream", {})
            after = nodes(c)
        finally:
            c.close()
    assert run["mode"] == "model" and len(calls) == 1  # the judge was asked, and failed
    assert [ch["action"] for ch in run["changes"]] == ["stale-source"] * 3
    assert all(ch["applied"] for ch in run["changes"]) and run["applied"] == 3 and run["proposed"] == 0, run
    assert [after[f"project://shop/gotcha/m{i}"]["priority"] for i in range(3)] == [3, 3, 3]
