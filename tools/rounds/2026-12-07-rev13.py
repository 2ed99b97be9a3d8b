"""rev13: independent review of 50cb344 (the answer's room from each dialect's own key),
46d3ebc (every gzip member decoded), aa1fb31 (a request without a body goes without one),
5d13f01 (uninstall takes back the Codex trust install granted).

Bugs chosen from the code before any file under tests/ was opened; guarding tests chosen by
file name and `grep -rl` only. Caveat: the four commits carry their own new tests, and the
first `git show` of them printed those test diffs along with the code (they were seen, not
the test files themselves).

First run (16:11 UTC, once, `python tools/mutations.py <the 18 names>`, 25 m 57 s wall, load
16-18 on 2 cores): 15 of 18 caught.
  caught:   the six rev13-ctx-*, rev13-dec-eof-inverted, rev13-dec-leftover-dropped,
            rev13-dec-error-loses-decoded, the six rev13-inst-*
  survived: rev13-dec-x-gzip-one-member, rev13-px-length-header-ignored, rev13-px-by-method
  error:    none

Survivors, after reading the tests (all three real gaps, none equivalent):
  rev13-dec-x-gzip-one-member: `Content-Encoding: x-gzip` (gzip's alias, RFC 9110 8.4.1.3)
    read only its first member, so usage in later members went unrecorded; every test named
    "gzip". New tests/unit/test_gateway_sse.py::test_x_gzip_and_any_spelling_of_gzip_read_every_member
    (x-gzip, X-GZIP, " gzip "; fails for the first two with the bug planted).
  rev13-px-length-header-ignored / rev13-px-by-method: a GET that does send
    `Content-Length: 0` reached the upstream without it (aiohttp adds `Content-Length: 0`
    for a POST given no data, so the POST control cannot tell; the by-method bug also drops
    a GET's body and gives HEAD/OPTIONS a length they did not send). The test's loop now
    also sends ("GET", "0"); it fails with either bug planted and passes without.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mutations import Mutation  # noqa: E402

BY = "reviewer: rev13"
T = "tests/"
CTX = (T + "unit/test_context_window_economics.py", T + "e2e/test_context_assembly.py")
DEC = (T + "unit/test_gateway_sse.py", T + "integration/test_gateway_peers.py")
PX = (T + "integration/test_gateway_peers.py", T + "integration/test_gateway.py")
INST = (T + "unit/test_install_edits.py", T + "integration/test_install.py")
BODIES = "lore_sidecar/engine/context/bodies.py"
DECODING = "lore_sidecar/gateway/decoding.py"
PROXY = "lore_sidecar/gateway/proxy.py"
HOSTS = "lore_sidecar/setup/hosts.py"
INSTALL = "lore_sidecar/setup/install.py"

ROUND = [
    # -- the answer's room (bodies.max_output and its use)
    Mutation("rev13-ctx-chat-legacy-key-wins", BODIES,
             'CHAT: ("max_completion_tokens", "max_tokens")', 'CHAT: ("max_tokens", "max_completion_tokens")', CTX, by=BY),
    Mutation("rev13-ctx-chat-legacy-key-ignored", BODIES,
             'CHAT: ("max_completion_tokens", "max_tokens")', 'CHAT: ("max_completion_tokens",)', CTX, by=BY),
    Mutation("rev13-ctx-responses-reads-max-tokens", BODIES,
             'RESPONSES: ("max_output_tokens",)}', 'RESPONSES: ("max_tokens",)}', CTX, by=BY),
    Mutation("rev13-ctx-fraction-truncated", BODIES,
             "if value >= 1 and float(value).is_integer():", "if value >= 1:", CTX, by=BY),
    Mutation("rev13-ctx-bool-counts-as-one", BODIES,
             "if isinstance(value, bool) or not isinstance(value, (int, float))",
             "if not isinstance(value, (int, float))", CTX, by=BY),
    Mutation("rev13-ctx-anthropic-key-for-every-api", "lore_sidecar/engine/context/requests.py",
             "max_output=b.max_output(api, body)", "max_output=b.max_output(b.ANTHROPIC, body)", CTX, by=BY),
    # -- the decoded copy (Decoder.feed)
    Mutation("rev13-dec-eof-inverted", DECODING,
             "                if not self._z.eof:\n                    break",
             "                if self._z.eof:\n                    break", DEC, by=BY),
    Mutation("rev13-dec-leftover-dropped", DECODING,
             "chunk, self._z = self._z.unused_data, None", 'chunk, self._z = b"", None', DEC, by=BY),
    # (re-expressed after the decoder named gzip's two names once, GZIP; same bug)
    Mutation("rev13-dec-x-gzip-one-member", DECODING,
             'if self._name not in GZIP:', 'if self._name != "gzip":', DEC, by=BY),
    Mutation("rev13-dec-error-loses-decoded", DECODING,
             "        except zlib.error:\n            self.readable = False\n",
             "        except zlib.error:\n            self.readable = False\n            return b\"\"\n", DEC, by=BY),
    # -- a request without a body (Gateway._forward)
    Mutation("rev13-px-length-header-ignored", PROXY,
             'framed = request.body_exists or "content-length" in request.headers', "framed = request.body_exists",
             PX, by=BY),
    Mutation("rev13-px-by-method", PROXY,
             "data=sent if sent or framed else None", 'data=sent if request.method != "GET" else None', PX, by=BY),
    # -- uninstall's restore (install.render/uninstall, hosts.codex untrust)
    Mutation("rev13-inst-original-not-passed", INSTALL,
             "render(by_path[path_s], current, removing=True, original=original)",
             "render(by_path[path_s], current, removing=True)", INST, by=BY),
    Mutation("rev13-inst-absent-original-skips-restore", INSTALL,
             "and edit.restore is not None and original is not False:", "and edit.restore is not None and original:",
             INST, by=BY),
    Mutation("rev13-inst-untrust-reads-now", HOSTS,
             # (re-expressed after e229fd4 read both documents through entry(); same bug)
             'was = (entry(before) or {}).get("trust_level")', 'was = (entry(doc) or {}).get("trust_level")', INST, by=BY),
    Mutation("rev13-inst-untrust-overrides-user", HOSTS,
             'if here is None or here.get("trust_level") != "trusted" or was == "trusted":',
             'if here is None or was == "trusted":', INST, by=BY),
    Mutation("rev13-inst-untrust-untrusted-dropped", HOSTS,
             '        if was is not None:\n            here["trust_level"] = was',
             '        if False:\n            here["trust_level"] = was', INST, by=BY),
    Mutation("rev13-inst-untrust-prunes-project", HOSTS,
             'f.prune_empty(doc, "projects", str(project), "trust_level")', 'f.prune_empty(doc, "projects", str(project))',
             INST, by=BY),
]
