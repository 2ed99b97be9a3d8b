"""Independent review round: the team record (PostgreSQL), recall paging and every capped
list, install/uninstall/doctor, context assembly outside the gateway, and the wire's error
contract (issue 35 item 2). Product code: lore_sidecar/shared/, engine/recall/recaller.py and
engine/service.py (commit 2f05228: the fade inside the ranking), the paging of
queryFacts/timeline/review/listNodes, lore_sidecar/setup/, engine/context/, rpc/. The bugs
were chosen from that code and from docs/team.md, docs/protocol.md, docs/context.md, the
README's install section and the promise column of docs/architecture.md "Promises, guarded",
before the tests were read.

Outcomes (first run, against the tests as they were; see the report of this round): the
machine was at load 20-40 on 2 cores, and test_shared's six-machine tests and the wheel test
failed under it for mutations they cannot see - those "caught" are counted as survivors."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mutations import Mutation  # noqa: E402

BY = "reviewer: independent, team/paging/install/context/wire round"
REC = "lore_sidecar/shared/record.py"
REP = "lore_sidecar/shared/replica.py"
NODES = "lore_sidecar/engine/memory/nodes.py"
RECALLER = "lore_sidecar/engine/recall/recaller.py"
SERVICE = "lore_sidecar/engine/service.py"
FQ = "lore_sidecar/engine/facts/queries.py"
MREQ = "lore_sidecar/engine/maintenance/requests.py"
NREQ = "lore_sidecar/engine/memory/requests.py"
TYPES = "lore_sidecar/wire/types.py"
INST = "lore_sidecar/setup/install.py"
HOSTS = "lore_sidecar/setup/hosts.py"
CMDS = "lore_sidecar/setup/commands.py"
DOCTOR = "lore_sidecar/setup/doctor.py"
BODIES = "lore_sidecar/engine/context/bodies.py"
GRAD = "lore_sidecar/engine/context/gradient.py"
CREQ = "lore_sidecar/engine/context/requests.py"
HANDLERS = "lore_sidecar/rpc/handlers.py"
TRANSPORT = "lore_sidecar/rpc/transport.py"

SHR = ("tests/integration/test_shared.py",)
PAGING = ("tests/integration/test_paging.py",)
INSTALL = ("tests/integration/test_install.py", "tests/integration/test_doctor.py")
DOCTOR_T = ("tests/integration/test_doctor.py", "tests/integration/test_install.py")
CTX = ("tests/e2e/test_context_assembly.py",)
WIRE = ("tests/integration/test_stdio_contract.py", "tests/integration/test_hostile_input.py")

ROUND = [
    # --- the team record -------------------------------------------------------------------
    # pull forgets the team: one team replays another's operations on a shared database.
    Mutation("shared-pull-every-team", REC,
             'WHERE team=%s AND project=%s AND seq>%s ORDER BY seq LIMIT %s",\n'
             '                                (self.team, project, after, limit)',
             'WHERE project=%s AND seq>%s ORDER BY seq LIMIT %s",\n'
             '                                (project, after, limit)', SHR, by=BY),
    # A retried op id is judged again before it is found in the log: its arbitration's
    # effect (a version bump) is recorded twice, or its own first copy refuses it.
    Mutation("shared-opid-judged-before-lookup", REC,
             '                if seen:\n                    return int(seen[0])\n'
             '                if op.get("kind") == "nodeOp" and op.get("method") not in ("countUse", "logRecall"):\n'
             '                    arbitrate(conn, self.team, project, op["method"], op["args"])  # usage changes no node\n',
             '                if op.get("kind") == "nodeOp" and op.get("method") not in ("countUse", "logRecall"):\n'
             '                    arbitrate(conn, self.team, project, op["method"], op["args"])  # usage changes no node\n'
             '                if seen:\n                    return int(seen[0])\n', SHR, by=BY),
    # The priority budget counts every team's nodes on the database.
    Mutation("shared-budget-every-team", REC,
             '"SELECT COUNT(*) FROM lore_nodes WHERE team=%s AND scope=%s AND project=%s AND priority=%s"\n'
             '                        " AND uri IS DISTINCT FROM %s",\n'
             '                        (team, scope,',
             '"SELECT COUNT(*) FROM lore_nodes WHERE scope=%s AND project=%s AND priority=%s"\n'
             '                        " AND uri IS DISTINCT FROM %s",\n'
             '                        (scope,', SHR, by=BY),
    # An update that moves a node to another scope at the same priority escapes the budget.
    # First run: 'caught' only by test_six_concurrent_creates failing under load (it makes no update);
    # no test moved a node's scope. Added: test_shared.py::test_a_forgotten_node_frees_its_uri_and_its_budget_slot_and_a_scope_move_is_budgeted (caught).
    Mutation("shared-budget-skips-scope-move", REC,
             "        if (new_priority, new_scope) != (priority, scope):\n",
             "        if new_priority != priority:\n", SHR, by=BY),
    # `forget` leaves the node's row in the record: it still counts against the budget and
    # blocks re-creating its URI.
    # First run: 'caught' only by test_six_machines failing under load (no test forgets in the record).
    # Added: test_shared.py::test_a_forgotten_node_frees_its_uri_and_its_budget_slot_and_a_scope_move_is_budgeted (caught).
    Mutation("shared-forget-keeps-row", REC,
             '    elif method in ("deleteNode", "forget"):\n', '    elif method == "deleteNode":\n', SHR, by=BY),
    # The outbox pushed newest first: the last acknowledged edit is overwritten by an older one.
    Mutation("shared-outbox-newest-first", REP,
             "        for path in self.outbox.pending(256):\n",
             "        for path in reversed(self.outbox.pending(256)):\n", SHR, by=BY),
    # Conversations travel for every project, not only those in shareMessages.
    Mutation("shared-messages-every-project", REP,
             '            return project_name(op["project"]) in self.share_messages\n',
             "            return True\n", SHR, by=BY),
    # An update's changed text is not redacted: a secret in updateNode's `changes` reaches the
    # shared record (create is still redacted).
    # First run: 'caught' only by test_six_machines failing under load (its update holds no secret).
    # Added to test_shared.py::test_a_secret_in_a_write_is_redacted_before_it_reaches_the_shared_record: an updateNode (caught).
    Mutation("shared-update-not-redacted", NODES,
             '        out["changes"] = redacted_node_args(out["changes"])\n',
             '        out["changes"] = dict(out["changes"])\n',
             (*SHR, "tests/unit/test_settings_and_wire.py"), by=BY),

    # --- paging ------------------------------------------------------------------------------
    # The word leg's cut at the pool never seen (`>` where `>=`): a page ending the pool says
    # truncated false and hides every match past recallCandidates.
    Mutation("recall-cut-off-by-one", RECALLER, "            cut = len(lex) >= pool\n",
             "            cut = len(lex) > pool\n", PAGING, by=BY),
    # The pool does not grow with the offset: past recallCandidates every page is empty.
    Mutation("recall-pool-ignores-offset", RECALLER, "        pool = max(s.candidates, offset + limit)\n",
             "        pool = s.candidates\n", PAGING, by=BY),
    # The fade taken out of the ranking (2f05228 undone from the service side).
    Mutation("recall-fade-dropped", SERVICE,
             "            fade=self.maintenance.retrievability,  # faded knowledge ranks lower, across every page\n",
             "            fade=None,\n", (*PAGING, "tests/integration/test_maintenance.py"), by=BY),
    # The fade applied to priority-0/1 nodes too? No: the factor is passed a priority; here
    # the fade is computed from the wrong key, so every node keeps retrievability 1.0.
    Mutation("recall-fade-by-wrong-key", RECALLER,
             '                score *= fade_factor(retrievable.get(row["uri"], 1.0), row["priority"])\n',
             '                score *= fade_factor(retrievable.get(c.key, 1.0), row["priority"])\n',
             (*PAGING, "tests/integration/test_maintenance.py"), by=BY),
    # queryFacts current: `truncated` counted from the page, not from the offset.
    Mutation("facts-truncated-ignores-offset", FQ, "    more = offset + len(items) < total\n",
             "    more = len(items) < total\n", PAGING, by=BY),
    # asKnownAt: the page is cut from the wrong end of the sorted list (newest slots first).
    # Expected survivor, not a broken promise: queryFacts' order is not documented and the pages
    # stay slices of the one (reversed) listing. No test added.
    Mutation("facts-asknown-page-unsorted", FQ, "    found.sort(key=lambda t: t[0])\n",
             "    found.sort(key=lambda t: t[0], reverse=True)\n", PAGING, by=BY),
    # review: the page's end ignores the offset.
    Mutation("review-page-end-ignores-offset", MREQ,
             "                 for rv, uri, prio, f in faded[offset: offset + limit]]",
             "                 for rv, uri, prio, f in faded[offset: limit]]", PAGING, by=BY),
    # listNodes: `total` is the page's length.
    Mutation("listnodes-total-of-page", NREQ,
             '        return {"nodes": page, "total": len(found), "truncated": more,',
             '        return {"nodes": page, "total": len(page), "truncated": more,', PAGING, by=BY),
    # timeline accepts a negative offset (a slice from the end), not -32602.
    # Survivor by reading: the bad-page test asks listNodes only. Added:
    # test_paging.py::test_every_paged_method_refuses_a_negative_offset (caught).
    Mutation("timeline-negative-offset", TYPES, '    (TimelineParams, "offset"): (0, 1_000_000),\n',
             '    (TimelineParams, "offset"): (-1_000_000, 1_000_000),\n', (*PAGING, *WIRE), by=BY),

    # --- install / uninstall / doctor ------------------------------------------------------
    # uninstall leaves the .lore-backup files behind.
    Mutation("uninstall-keeps-backups", INST, "        if backup.exists():\n            backup.unlink()\n",
             "        if False:\n            backup.unlink()\n", INSTALL, by=BY),
    # A re-install with something to change records lore's own file as "the original": the
    # next uninstall restores a file with lore's entries in it.
    # First run: every install test passed; only the wheel test failed (pip under load). Added:
    # test_install.py::test_a_reinstall_from_another_executable_still_uninstalls_to_the_original_bytes (caught).
    Mutation("reinstall-overwrites-original", INST, "        if entry is None:  # the original",
             "        if True:  # the original", INSTALL, by=BY),
    # --dry-run installs.
    Mutation("dry-run-writes", CMDS, "        changes = inst.plan(args.host, w, removing=removing)\n",
             "        changes = (inst.uninstall if removing else inst.install)(args.host, w)\n", INSTALL, by=BY),
    # CLAUDE_CONFIG_DIR honoured for settings but the MCP entry goes to ~/.claude.json.
    # Survivor by reading (the moved-variable test checks settings.json only). Added:
    # test_install.py::test_claude_config_dir_moves_the_mcp_entry_too_and_nothing_lands_in_home (caught).
    Mutation("claude-mcp-at-default-place", HOSTS,
             '    mcp_file = config / ".claude.json" if w.env.get("CLAUDE_CONFIG_DIR") else w.home / ".claude.json"\n',
             '    mcp_file = w.home / ".claude.json"\n', INSTALL, by=BY),
    # CODEX_HOME ignored.
    Mutation("codex-home-ignored", HOSTS,
             '    home = Path(w.env["CODEX_HOME"]) if w.env.get("CODEX_HOME") else w.home / ".codex"\n',
             '    home = w.home / ".codex"\n', INSTALL, by=BY),
    # doctor no longer names a missing file (it then says "configured").
    Mutation("doctor-missing-unnamed", DOCTOR,
             '        missing = [p for p in m["files"] if not Path(p).exists()]\n',
             "        missing = []\n", DOCTOR_T, by=BY),
    # doctor exits 0 with a failed check.
    Mutation("doctor-exit-0", DOCTOR, "    return 1 if failed else 0\n", "    return 0\n", DOCTOR_T, by=BY),

    # --- context assembly ------------------------------------------------------------------
    # Five breakpoints when the harness placed three of its own on system and tools.
    # Survivor by reading (no body with the harness's own markers). Added:
    # test_context_assembly.py::test_the_harness_own_breakpoints_are_left_alone_and_never_make_more_than_four.
    Mutation("ctx-five-breakpoints", CREQ, "        spare = 4 - kept\n", "        spare = 5 - kept\n", CTX, by=BY),
    # At L0, lore adds its markers to a body that carries the harness's own.
    # Same gap; same added test.
    Mutation("ctx-l0-marks-over-harness", CREQ,
             "        if api != b.ANTHROPIC or b.count_marks(body) or not conv:\n",
             "        if api != b.ANTHROPIC or not conv:\n", CTX, by=BY),
    # A cut point between two consecutive model-output items: parallel function calls of the
    # Responses dialect parted from their outputs.
    # Survivor by reading (the Responses body has one call per model output). Added:
    # test_context_assembly.py::test_parallel_function_calls_of_the_responses_dialect_stay_with_their_outputs.
    Mutation("ctx-cut-between-parallel-calls", BODIES,
             '        if role_of(api, conv[i]) == "assistant" and role_of(api, conv[i - 1]) != "assistant":\n',
             '        if role_of(api, conv[i]) == "assistant":\n', CTX, by=BY),
    # L2 keeps only the last call's tool outputs (docs: the last two model calls).
    # Survivor by reading (each turn has one call before the reply). Added:
    # test_context_assembly.py::test_l2_keeps_the_outputs_of_the_last_two_model_calls_whole.
    Mutation("ctx-l2-protects-one-call", CREQ,
             "        protect = calls[-2] if p.layer == 2 and len(calls) >= 2 else",
             "        protect = calls[-1] if p.layer == 2 and len(calls) >= 2 else", CTX, by=BY),
    # After "prompt is too long" the raw window is not halved when it is under the pinned size.
    # Added: test_context_assembly.py::test_prompt_too_long_halves_the_raw_window_at_once (caught).
    Mutation("ctx-floor-not-halved", GRAD, "        target = min(pinned, sum(sizes[start:]) // 2)\n",
             "        target = pinned\n", CTX, by=BY),
    # Layers are not sticky: a session may go back to L0 after compressing.
    Mutation("ctx-layer-goes-down", GRAD, "    layer = max(state.layer, state.force_min_layer)\n",
             "    layer = state.force_min_layer\n", CTX, by=BY),

    # --- the wire's error contract ---------------------------------------------------------
    # -32803 without `retryable` (only the kind).
    Mutation("wire-retryable-dropped", HANDLERS,
             "            raise JsonRpcException(exc.message, code=EXPECTED_FAILURE, data=exc.data()) from None\n",
             '            raise JsonRpcException(exc.message, code=EXPECTED_FAILURE, data={"kind": exc.kind}) from None\n',
             WIRE, by=BY),
    # A domain BadParams (-32602) without data.errors.
    Mutation("wire-badparams-without-errors", HANDLERS,
             '            raise JsonRpcInvalidParams(exc.message, data={"errors": exc.errors}) from None\n',
             "            raise JsonRpcInvalidParams(exc.message) from None\n", WIRE, by=BY),
    # A request without a method answered -32601 instead of -32600.
    Mutation("wire-no-method-is-32601", TRANSPORT,
             '                self._error(reply_id, INVALID_REQUEST, "Invalid Request: no method")\n',
             '                self._error(reply_id, METHOD_NOT_FOUND, "Invalid Request: no method")\n', WIRE, by=BY),
    # A structuring failure's -32602 loses data.errors.
    # First run: survived (no test reads data.errors of a -32602 that pygls' structuring gives).
    # Added: test_stdio_contract.py::test_params_that_fail_to_structure_are_32602_with_data_errors_naming_the_field (caught).
    Mutation("wire-structure-errors-dropped", TRANSPORT,
             '"Invalid params: " + "; ".join(errors[:5]), {"errors": errors})',
             '"Invalid params: " + "; ".join(errors[:5]))', WIRE, by=BY),
]
