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
