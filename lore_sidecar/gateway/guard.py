"""Who may use the gateway: the user's own harness, known by the store's gateway secret.

Anything that can reach a loopback port can send it a request: the user's harness, but also
a web page in the user's browser (a `no-cors` POST or a form needs no preflight) and every
other local account. So:
- every request must present the store's secret, as the first path segment of the base URL
  (`http://127.0.0.1:<port>/<secret>/v1/messages`: every SDK keeps a base URL's path) or in
  the `x-lore-token` header; the secret lives in `<store>/gateway.secret`, mode 0600, made
  once per store, so only the store's owner can read it;
- a request a browser made is refused even with the secret: an `Origin` header, a
  `Sec-Fetch-Site` other than `none` / `same-origin`, or a content type a page may send
  without a preflight (`text/plain`, a form) on a model-call path.
Refusals answer in the provider's error shape; nothing is forwarded, nothing captured.
"""

from __future__ import annotations

import hmac
import os
import re
import secrets
from collections.abc import Mapping
from pathlib import Path

from lore_sidecar.store.filesystem import make_store_dir

SECRET_FILE = "gateway.secret"
HEADER = "x-lore-token"
_SHAPE = re.compile(r"[0-9a-f]{32,128}")
OPENAI_PATHS = ("/v1/chat/completions", "/v1/responses", "/v1/codex/responses")
# Paths only OpenAI's API has (a stored response, a chat completion's messages, embeddings).
OPENAI_PREFIXES = ("/v1/chat/", "/v1/responses/", "/v1/embeddings")
# What a page may POST without a preflight (the CORS-safelisted types). Harnesses send JSON.
SIMPLE_TYPES = ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data")


def gateway_secret(store: Path) -> str:
    """The store's gateway secret, made (0600, atomically: two starters agree) on first use."""
    make_store_dir(store)
    path = store / SECRET_FILE
    for _ in range(3):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            _create(path)
            continue
        try:
            st = os.fstat(fd)
            if st.st_mode & 0o077:  # loosened by hand or by a copy: only the owner may read it
                os.fchmod(fd, 0o600)
            text = os.read(fd, 256).decode("ascii", "replace").strip()
        finally:
            os.close(fd)
        if _SHAPE.fullmatch(text):
            return text
        _create(path, replace=True)  # empty or damaged: a new one (old base URLs stop working)
    raise OSError(f"cannot make the gateway secret {path}")


def _create(path: Path, *, replace: bool = False) -> None:
    tmp = path.with_name(f".{SECRET_FILE}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, (secrets.token_hex(24) + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        if replace:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)  # fails if another starter made one first: theirs wins
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)


def split_secret(path: str, headers: Mapping[str, str], secret: str) -> tuple[bool, str]:
    """(presented, the path without the secret prefix)."""
    head, sep, rest = path.lstrip("/").partition("/")
    if hmac.compare_digest(head.encode(), secret.encode()):
        return True, "/" + rest if sep else "/"
    given = headers.get(HEADER)
    return bool(given) and hmac.compare_digest(str(given).encode(), secret.encode()), path


def from_browser(headers: Mapping[str, str], model_call: bool) -> str | None:
    """Why this request looks like a web page's, or None."""
    if headers.get("origin") is not None:
        return "an Origin header"
    site = str(headers.get("sec-fetch-site", "")).lower()
    if site and site not in ("none", "same-origin"):
        return f"Sec-Fetch-Site: {site}"
    kind = str(headers.get("content-type", "")).split(";")[0].strip().lower()
    if kind in SIMPLE_TYPES and (model_call or kind != "multipart/form-data"):
        # Multipart stays allowed off the model-call paths: file uploads through an SDK use it.
        return f"Content-Type: {kind}"
    return None


def openai_caller(path: str, headers: Mapping[str, str]) -> bool:
    """An OpenAI client, not an Anthropic one: an OpenAI model-call path (or one below it), or
    a bearer key without the header every Anthropic client sends (`anthropic-version`, or its
    key as `x-api-key`). Claude Code signed in with its subscription sends a bearer token
    *and* `anthropic-version`: Anthropic's."""
    bare = path.rstrip("/")
    return bare.endswith(OPENAI_PATHS) or bare.startswith(OPENAI_PREFIXES) or (
        "anthropic-version" not in headers and "x-api-key" not in headers
        and str(headers.get("authorization", "")).lower().startswith("bearer "))


def refusal(path: str, headers: Mapping[str, str], status: int, message: str) -> dict:
    """The error body in the shape the caller's SDK reads (OpenAI's on its paths or with a
    bearer key and no Anthropic header; Anthropic's otherwise)."""
    if openai_caller(path, headers):
        return {"error": {"message": message, "type": "invalid_request_error", "param": None,
                          "code": "lore_gateway_refused"}}
    kind = "authentication_error" if status == 401 else "permission_error"
    return {"type": "error", "error": {"type": kind, "message": message}}
