"""`lore-sidecar run codex` tells a ChatGPT login from an API key (issue 36 item 4): signed in
with ChatGPT, Codex's calls carry the ChatGPT access token, which only the ChatGPT backend
takes, so Codex is given `<gateway>/v1/codex` as its base URL; with a key, `<gateway>/v1`."""

from __future__ import annotations

import json

from lore_sidecar.gateway.run import codex_auth, codex_command, codex_login

TOKENS = {"id_token": "h.p.s", "access_token": "at-fake", "refresh_token": "rt-fake", "account_id": "acct"}


def test_tokens_without_a_key_are_a_chatgpt_login_a_key_is_a_key_login():
    assert codex_login({"OPENAI_API_KEY": None, "tokens": TOKENS}, {}) == "chatgpt"
    assert codex_login({"auth_mode": "chatgpt", "OPENAI_API_KEY": None, "tokens": TOKENS}, {}) == "chatgpt"
    assert codex_login({"auth_mode": "chatgptAuthTokens", "tokens": TOKENS}, {}) == "chatgpt"
    # The controls: a key in auth.json, in the environment, or named by auth_mode; nothing to go by.
    assert codex_login({"OPENAI_API_KEY": "sk-own"}, {}) == "key"
    assert codex_login({"OPENAI_API_KEY": "sk-own", "tokens": TOKENS}, {}) == "key"
    assert codex_login({"auth_mode": "apikey", "OPENAI_API_KEY": "sk-own", "tokens": TOKENS}, {}) == "key"
    assert codex_login({"OPENAI_API_KEY": None, "tokens": TOKENS}, {"CODEX_API_KEY": "sk-env"}) == "key"
    assert codex_login(None, {}) == "key"
    assert codex_login({"tokens": None}, {}) == "key"
    assert codex_login(["not", "an", "object"], {}) == "key"



def test_an_auth_mode_naming_a_key_wins_over_chatgpt_tokens_left_in_auth_json():
    # Reviewer round 2026-12-07-gateway-recall, gr-codex-apikey-mode-ignored: "an `auth_mode`
    # naming one" decides before the tokens: a login switched to an API key may leave the old
    # ChatGPT tokens in auth.json, and that user's calls go to api.openai.com, not ChatGPT.
    assert codex_login({"auth_mode": "apikey", "tokens": TOKENS}, {}) == "key"
    assert codex_login({"auth_mode": "apikey", "OPENAI_API_KEY": None, "tokens": TOKENS}, {}) == "key"
    # The control: the same tokens with no auth_mode (or a ChatGPT one) are a ChatGPT login.
    assert codex_login({"tokens": TOKENS}, {}) == "chatgpt"
    assert codex_login({"auth_mode": "chatgpt", "tokens": TOKENS}, {}) == "chatgpt"

def test_auth_json_is_read_from_codex_home_and_a_chatgpt_login_gets_the_codex_base_url(tmp_path):
    home = tmp_path / "codex-home"
    home.mkdir()
    assert codex_auth({"CODEX_HOME": str(home)}) is None  # none yet
    (home / "auth.json").write_text(json.dumps({"OPENAI_API_KEY": None, "tokens": TOKENS}))
    assert codex_login(codex_auth({"CODEX_HOME": str(home)}), {}) == "chatgpt"
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "auth.json").write_text("{not json")
    assert codex_auth({"HOME": str(tmp_path)}) is None
    url = "http://127.0.0.1:5/s3cret"
    argv, env = codex_command("codex", url, ["exec", "hi"], chatgpt=True)
    assert 'model_providers.lore.base_url="http://127.0.0.1:5/v1/codex"' in argv
    argv_key, env_key = codex_command("codex", url, ["exec", "hi"])
    assert 'model_providers.lore.base_url="http://127.0.0.1:5/v1"' in argv_key
    assert env == env_key == {"LORE_GATEWAY_TOKEN": "s3cret"}
    assert not any("s3cret" in a for a in argv + argv_key)  # the secret stays out of argv either way
