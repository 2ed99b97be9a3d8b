"""Codex signed in with ChatGPT calls `/v1/codex/responses`: the gateway assembles it as it
does `/v1/responses` (issue 36 item 4), and an unknown path beside it stays a passthrough."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from tests.integration.test_gateway import start
from tests.support.fake_models import FakeModels


def call(url: str, body: dict) -> bytes:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={
        "content-type": "application/json", "authorization": "Bearer sk-test"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.read()


def health(url: str) -> dict:
    return json.loads(urllib.request.urlopen(url + "/lore/health", timeout=10).read())


def body(marker: str) -> dict:
    return {"model": "gpt-5-codex", "stream": True, "prompt_cache_key": f"conv-{marker}", "instructions": "Be terse.",
            "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"hi {marker}"}]}]}


def test_codex_chatgpt_path_is_assembled_like_responses_and_its_answer_streams_through(tmp_path, workspace):
    with FakeModels(lambda api, b: "hello from codex") as fake:
        proc, url = start(tmp_path / "store", workspace, fake.url)
        try:
            assert health(url)["assembled"] == 0
            call(url + "/v1/responses", body("cx1"))  # control: the public path
            assert health(url)["assembled"] == 1
            through = call(url + "/v1/codex/responses", body("cx2"))
            assert health(url)["assembled"] == 2, health(url)
            assert fake.requests[-1][1] == "/v1/codex/responses"  # forwarded to the path it asked for
            assert b"hello from codex" in through and b"response.completed" in through
            call(url + "/v1/other/responses", body("cx3"))  # not a model-call path lore knows: as it came
            assert health(url)["assembled"] == 2
            # Without the secret: refused in OpenAI's shape on both Responses paths, whatever
            # the headers suggest (an x-api-key alone would read as Anthropic's SDK).
            base = url.rsplit("/", 1)[0]
            for path in ("/v1/responses", "/v1/codex/responses"):
                req = urllib.request.Request(base + path, data=json.dumps(body("cx4")).encode(), headers={
                    "content-type": "application/json", "x-api-key": "sk-test"})
                try:
                    urllib.request.urlopen(req, timeout=30)
                    raise AssertionError(f"{path} answered without the secret")
                except urllib.error.HTTPError as exc:
                    err = json.loads(exc.read())
                    assert exc.code == 401 and err["error"]["code"] == "lore_gateway_refused", (path, err)
        finally:
            proc.terminate()
            proc.wait(10)


def test_without_an_upstream_the_codex_path_goes_to_the_chatgpt_backend_and_responses_to_openai(tmp_path, workspace):
    """No `--upstream`: `/v1/codex/...` (Codex signed in with ChatGPT, whose access token only
    the ChatGPT backend takes) is forwarded to chatgpt.com, `/v1/responses` (an API key) to
    api.openai.com, as Codex itself would call them. Seen offline at the user's HTTPS proxy,
    which is asked to CONNECT to the host and refuses; the path is the pure upstream_of's."""
    import os
    import subprocess
    import sys
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    seen: list[str] = []

    class Proxy(BaseHTTPRequestHandler):
        def do_CONNECT(self) -> None:  # noqa: N802
            seen.append(self.path)
            self.send_response(403)
            self.end_headers()

        def log_message(self, *args):
            pass

    proxy = ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    at = f"http://127.0.0.1:{proxy.server_address[1]}"
    env = {k: v for k, v in os.environ.items() if k.lower() not in ("http_proxy", "https_proxy", "no_proxy", "all_proxy")}
    proc = subprocess.Popen([sys.executable, "-m", "lore_sidecar", "gateway", "--store-dir", str(tmp_path / "store"),
                             "--workspace", str(workspace)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env={**env, "LORE_DISTILLER": "off", "https_proxy": at, "HTTPS_PROXY": at})
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        for path in ("/v1/codex/responses", "/v1/responses"):
            try:
                call(url + path, body("cx5"))
                raise AssertionError(f"{path} answered offline")
            except urllib.error.HTTPError as exc:
                assert exc.code == 502, exc.read()
        # Off the model-call paths the client's own headers say whose key it carries: Codex
        # listing models with an OpenAI key goes to OpenAI, never to Anthropic (rev9: every such
        # call went to api.anthropic.com, the OpenAI key with it); an Anthropic client
        # (x-api-key, or Claude Code's subscription token with anthropic-version) to Anthropic.
        for headers in ({"authorization": "Bearer sk-test"},
                        {"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01"},
                        {"authorization": "Bearer sk-ant-oat01-test", "anthropic-version": "2023-06-01"}):
            try:
                urllib.request.urlopen(urllib.request.Request(url + "/v1/models", headers=headers), timeout=30)
                raise AssertionError("/v1/models answered offline")
            except urllib.error.HTTPError as exc:
                assert exc.code == 502, exc.read()
        assert seen == ["chatgpt.com:443", "api.openai.com:443", "api.openai.com:443", "api.anthropic.com:443",
                        "api.anthropic.com:443"], seen
    finally:
        proc.terminate()
        proc.wait(10)
        proxy.shutdown()
        proxy.server_close()
    from lore_sidecar.gateway.proxy import upstream_of

    assert upstream_of(None, "openai-responses", "/v1/codex/responses") == ("https://chatgpt.com/backend-api",
                                                                            "/codex/responses")
    assert upstream_of(None, None, "/v1/codex/models") == ("https://chatgpt.com/backend-api", "/codex/models")
    # The controls: an explicit upstream (the fake server) takes the path as it came; the
    # public path and a look-alike keep their providers.
    assert upstream_of("http://127.0.0.1:9", "openai-responses", "/v1/codex/responses") == ("http://127.0.0.1:9",
                                                                                           "/v1/codex/responses")
    assert upstream_of(None, "openai-responses", "/v1/responses") == ("https://api.openai.com", "/v1/responses")
    assert upstream_of(None, None, "/v1/codexes") == ("https://api.anthropic.com", "/v1/codexes")
    assert upstream_of(None, None, "/v1/responses/resp_1", {}) == ("https://api.openai.com", "/v1/responses/resp_1")
    assert upstream_of(None, None, "/v1/embeddings", {}) == ("https://api.openai.com", "/v1/embeddings")
