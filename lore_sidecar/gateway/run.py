"""`lore-sidecar run <claude|codex|pi|opencode|copilot|hermes> [-- ARGS]`: make sure a gateway serves this
store (start one in the background if none answers), then run the harness pointed at it,
with the store's gateway secret as the first path segment of its base URL (Codex: in an
environment variable it sends as a header, see codex_command)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from lore_sidecar.gateway.guard import HEADER, gateway_secret
from lore_sidecar.gateway.leases import lease
from lore_sidecar.spawn import module_command

HARNESSES = {"claude": "claude", "codex": "codex", "pi": "pi", "opencode": "opencode", "copilot": "copilot",
             "hermes": "hermes"}


def alive(url: str) -> bool:
    """A gateway answers at `url` (its base URL, secret included) and knows that secret.
    Asked directly: urllib would send a loopback URL to an `http_proxy` of the environment,
    which would learn the secret and answer for a gateway it cannot reach."""
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with direct.open(url + "/lore/health", timeout=1) as r:
            answer = json.loads(r.read())
            return answer.get("ok") is True and "pid" in answer  # the pid is told only with the secret
    except (OSError, ValueError):
        return False


def ensure_gateway(store: Path, upstream: str | None) -> str:
    registry = store / "gateway.json"
    try:
        known = json.loads(registry.read_text())
        url = f"{known['url']}/{gateway_secret(store)}"
        if alive(url) and known.get("upstream") == upstream:
            return url
    except (OSError, ValueError, KeyError):
        pass
    args = module_command("lore_sidecar", "gateway", "--store-dir", str(store), "--leased")
    if upstream:
        args += ["--upstream", upstream]
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            start_new_session=True)  # outlives this command, like the hook daemon
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    deadline = time.monotonic() + 15
    while not (url and alive(url)):
        if time.monotonic() > deadline or proc.poll() is not None:
            raise RuntimeError("the gateway did not start (run `lore-sidecar gateway -v` to see why)")
        time.sleep(0.1)
    return url


def command_for(harness: str, url: str, args: list[str]) -> tuple[list[str], dict[str, str]]:
    exe = shutil.which(HARNESSES[harness]) or HARNESSES[harness]
    env: dict[str, str] = {}
    if harness == "claude":
        env["ANTHROPIC_BASE_URL"] = url
        return [exe, *args], env
    if harness == "codex":
        return codex_command(exe, url, args, chatgpt=codex_login(codex_auth(os.environ), os.environ) == "chatgpt")
    if harness == "copilot":
        # Bring-your-own-key mode: Chat Completions or Responses (COPILOT_PROVIDER_WIRE_API) under
        # /v1, or Anthropic Messages (COPILOT_PROVIDER_TYPE=anthropic) with the base URL bare.
        anthropic = os.environ.get("COPILOT_PROVIDER_TYPE", "").lower() == "anthropic"
        env["COPILOT_PROVIDER_BASE_URL"] = url if anthropic else f"{url}/v1"
        return [exe, *args], env
    if harness == "hermes":
        # Hermes' custom (OpenAI-compatible) endpoint: this variable wins over config.yaml's base_url.
        env["CUSTOM_BASE_URL"] = f"{url}/v1"
        return [exe, *args], env
    # Pi and OpenCode: the providers' SDKs read these.
    env.update(ANTHROPIC_BASE_URL=url, OPENAI_BASE_URL=f"{url}/v1")
    return [exe, *args], env


CODEX_TOKEN_ENV = "LORE_GATEWAY_TOKEN"


def codex_auth(env: dict[str, str] | os._Environ) -> object:
    """`$CODEX_HOME/auth.json` (default `~/.codex`), parsed; None when there is none or it
    does not parse (a login kept in the OS keyring, say)."""
    home = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else Path(env.get("HOME") or Path.home()) / ".codex"
    try:
        return json.loads((home / "auth.json").read_text())
    except (OSError, ValueError):
        return None


def codex_login(auth: object, env: dict[str, str] | os._Environ) -> str:
    """How Codex will sign its model calls: "key" (an API key: api.openai.com's `/v1/responses`)
    or "chatgpt" (a ChatGPT login: the ChatGPT backend's `codex/responses`, with the login's
    access token). CODEX_API_KEY in the environment, an `auth_mode` naming one, an API key in
    auth.json, then ChatGPT tokens, in that order; anything else is left as a key login (the
    route that has always been taken). Pure."""
    if env.get("CODEX_API_KEY"):
        return "key"
    if not isinstance(auth, dict):
        return "key"
    mode = str(auth.get("auth_mode") or "").replace("_", "").lower()
    if mode.startswith("chatgpt"):  # "chatgpt", "chatgptAuthTokens"
        return "chatgpt"
    if mode == "apikey" or auth.get("OPENAI_API_KEY") or auth.get("CODEX_API_KEY"):
        return "key"
    return "chatgpt" if isinstance(auth.get("tokens"), dict) and auth["tokens"].get("access_token") else "key"


def codex_command(exe: str, url: str, args: list[str], *, chatgpt: bool = False) -> tuple[list[str], dict[str, str]]:
    """Codex takes its base URL on the command line, which any local account can read in
    /proc/<pid>/cmdline; its environment is the owner's alone. So the base URL goes without
    the secret, and the secret goes in the environment, which a provider of our own sends as
    the `x-lore-token` header (`env_http_headers`; Codex refuses to redefine the built-in
    `openai` provider). `requires_openai_auth` makes that provider authenticate as the
    built-in one does: the user's own login (an API key or ChatGPT) or CODEX_API_KEY.
    Signed in with ChatGPT, Codex calls `<base>/responses` (and `<base>/models`) with the
    ChatGPT access token, which only the ChatGPT backend takes: the base is then
    `<gateway>/v1/codex`, which the gateway forwards there (proxy.upstream_of)."""
    base, _, secret = url.rpartition("/")
    provider = "model_providers.lore"
    argv = [exe, "-c", "model_provider=lore", "-c", f'{provider}.name="lore gateway"',
            "-c", f'{provider}.base_url="{base}/v1{"/codex" if chatgpt else ""}"', "-c", f'{provider}.wire_api="responses"',
            "-c", f"{provider}.requires_openai_auth=true",
            "-c", f'{provider}.env_http_headers={{"{HEADER}"="{CODEX_TOKEN_ENV}"}}', *args]
    return argv, {CODEX_TOKEN_ENV: secret}


def own_upstream(harness: str, env: dict[str, str] | os._Environ) -> str | None:
    """Where the harness itself would send its model calls, which the gateway then forwards
    to: Copilot's bring-your-own-key base URL, Hermes' custom endpoint (its environment
    variable, else config.yaml's `model.base_url`). The gateway appends `/v1/...` itself."""
    base = None
    if harness == "copilot":
        base = env.get("COPILOT_PROVIDER_BASE_URL")
    elif harness == "hermes":
        base = env.get("CUSTOM_BASE_URL")
        if not base:
            from lore_sidecar.errors import LoreError
            from lore_sidecar.setup.yaml_block import get

            home = Path(env.get("HERMES_HOME") or Path(env.get("HOME") or Path.home()) / ".hermes")
            try:
                base = get((home / "config.yaml").read_text(), "model", "base_url")
            except (OSError, ValueError, LoreError):
                base = None
    if not base:
        return None
    base = base.rstrip("/")
    return base[: -len("/v1")] if base.endswith("/v1") else base


def has_lore_server(harness: str, env: dict[str, str] | os._Environ, cwd: Path) -> bool:
    """The harness's own configuration already names a `lore` MCP server (`lore-sidecar
    install`, or the user's hand): then `run` adds none, so there are never two."""
    home = Path(env.get("HOME") or Path.home())
    try:
        if harness == "claude":
            config = Path(env["CLAUDE_CONFIG_DIR"]) / ".claude.json" if env.get("CLAUDE_CONFIG_DIR") else home / ".claude.json"
            docs = [json.loads(p.read_text()) for p in (config, cwd / ".mcp.json") if p.is_file()]
            scopes = [d for d in docs if isinstance(d, dict)]
            scopes += [v for d in scopes for k, v in (d.get("projects") or {}).items() if Path(k) == cwd and isinstance(v, dict)]
            return any(isinstance(d.get("mcpServers"), dict) and "lore" in d["mcpServers"] for d in scopes)
        if harness == "codex":
            import tomllib

            config = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"
            doc = tomllib.loads((config / "config.toml").read_text()) if (config / "config.toml").is_file() else {}
            return "lore" in (doc.get("mcp_servers") or {})
    except (OSError, ValueError):
        return False  # a config it cannot read: lore's tools are added for this run all the same
    return True  # Pi, OpenCode, Copilot, Hermes: their tools come from `lore-sidecar install`


def lore_tools(harness: str, store: Path, env: dict[str, str] | os._Environ, cwd: Path) -> list[str]:
    """Arguments that give this run lore's MCP tools (issue 36 item 3: what the compressed
    prompt evicted stays reachable through `lore_recall`, and the agent must have it).
    Appended after the user's own arguments: Claude Code's `--mcp-config` takes several
    values, and placed first it would swallow a bare prompt."""
    if has_lore_server(harness, env, cwd):
        return []
    from lore_sidecar.setup.hosts import CODEX_ENV_VARS, this_executable

    exe = this_executable()
    if harness == "claude":
        server = {"type": "stdio", "command": exe[0],
                  "args": [*exe[1:], "--store-dir", str(store), "mcp", "--harness", "claude-code"]}
        return ["--allowedTools", "mcp__lore", "--mcp-config", json.dumps({"mcpServers": {"lore": server}})]
    args = [*exe[1:], "--store-dir", str(store), "mcp", "--harness", "codex"]
    table = "mcp_servers.lore"
    # `required`: Codex waits for the server before its first model call (else a `codex exec`
    # whose model answers at once runs its whole turn without lore's tools). The server
    # answers the handshake and lists its tools whatever the store's state (a broken store is
    # an error of each call), so this waits for the process to start and fails nothing else.
    return ["-c", f"{table}.command={json.dumps(exe[0])}", "-c", f"{table}.args={json.dumps(args)}",
            "-c", f"{table}.env_vars={json.dumps(CODEX_ENV_VARS)}", "-c", f"{table}.startup_timeout_sec=20",
            "-c", f"{table}.required=true"]


def run_harness(harness: str, args: list[str], store_dir: str | None, upstream: str | None, *,
                tools: bool = True) -> int:
    from lore_sidecar.settings import load_settings

    settings, _ = load_settings(cli={"storeDir": store_dir} if store_dir else {})
    store = Path(settings.store_dir)
    with lease(store):  # taken before the gateway is looked for: it stays while this run lasts
        return _run_leased(harness, args, store, upstream, tools)


def _run_leased(harness: str, args: list[str], store: Path, upstream: str | None, tools: bool) -> int:
    url = ensure_gateway(store, upstream or own_upstream(harness, os.environ))
    extra = lore_tools(harness, store, os.environ, Path.cwd()) if tools else []
    if harness == "codex":  # -c options go before Codex's subcommand; Claude's after the prompt
        cmd, env = command_for(harness, url, [*extra, *args])
    else:
        cmd, env = command_for(harness, url, [*args, *extra])
    if harness == "claude" and extra and {"-p", "--print"} & set(args) and "MCP_CONNECTION_NONBLOCKING" not in os.environ:
        # Claude Code 2.1 sends a print run's first request before its MCP servers have
        # connected (offering a WaitForMcpServers tool instead): the one answer such a run
        # gets would come without lore's tools. Interactive, the user's first words come later.
        env["MCP_CONNECTION_NONBLOCKING"] = "false"
    # The address only: stderr is a terminal or a CI log, and the secret is never logged.
    print(f"lore-sidecar: {harness} through the gateway at {url.rpartition('/')[0]}", file=sys.stderr)
    try:
        return subprocess.call(cmd, env={**os.environ, **env})
    except FileNotFoundError:
        print(f"lore-sidecar: {cmd[0]} is not installed (or not on PATH)", file=sys.stderr)
        return 127
