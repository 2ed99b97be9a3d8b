"""A store lore makes is its owner's alone (`0700` whatever the umask): it holds every
conversation. Each process that may be first to make it — the sidecar, a hook with no daemon,
the gateway's secret — is run under the common `022` umask, which would leave a plain
`mkdir` readable by every local user. A folder the user made themselves keeps its mode, and
`doctor` says when others can read it."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from lore_sidecar.client import StdioClient, sidecar_command
from lore_sidecar.gateway.guard import gateway_secret

UMASK_022 = ["sh", "-c", 'umask 022 && exec "$@"', "sh"]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def clean_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "LORE_")) and k != "ANTHROPIC_API_KEY"}
    return {**env, "HOME": str(home)}


def test_the_sidecar_makes_a_new_store_and_its_parents_private_to_its_owner(tmp_path):
    store = tmp_path / "data" / "lore"
    c = StdioClient([*UMASK_022, *sidecar_command("--store-dir", str(store))], env=clean_env(tmp_path))
    try:
        c.initialize(tmp_path, options={"watch": False, "indexWorkspace": False})
        c.request("lore/recordMessages", {"sessionId": "s1", "messages": [{"role": "user", "content": "deploys are blue-green"}]})
    finally:
        c.close()
    assert (store / "lore.db").is_file()
    assert mode(store) == 0o700
    assert mode(store.parent) == 0o755  # a parent is an ordinary folder: only the store is lore's


def test_a_hook_with_no_daemon_makes_the_store_private_and_still_captures_the_prompt(tmp_path):
    store = tmp_path / "store"
    payload = {"hook_event_name": "UserPromptSubmit", "session_id": "s1", "cwd": str(tmp_path),
               "prompt": "how do deploys switch traffic?"}
    env = {**clean_env(tmp_path), "LORE_STORE_DIR": str(store), "LORE_HOOK_DAEMON": "0",
           "LORE_HOOK_TIMEOUT_MS": "20000"}
    done = subprocess.run([*UMASK_022, sys.executable, "-m", "lore_sidecar", "hook", "UserPromptSubmit"],
                          input=json.dumps(payload), env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert mode(store) == 0o700
    assert any((store / "spool").iterdir()), "the prompt was not spooled"


def test_the_gateway_secret_makes_its_store_private(tmp_path):
    store = tmp_path / "fresh"
    old = os.umask(0o022)
    try:
        secret = gateway_secret(store)
    finally:
        os.umask(old)
    assert len(secret) >= 32
    assert mode(store) == 0o700 and mode(store / "gateway.secret") == 0o600


def test_a_folder_the_user_made_keeps_its_mode_and_doctor_says_others_can_read_it(tmp_path):
    store = tmp_path / "mine"
    store.mkdir(mode=0o755)
    store.chmod(0o755)
    c = StdioClient(sidecar_command("--store-dir", str(store)), env=clean_env(tmp_path))
    try:
        c.initialize(tmp_path, options={"watch": False, "indexWorkspace": False})
    finally:
        c.close()
    assert mode(store) == 0o755  # lore does not change a mode the user chose

    def doctor() -> str:
        out = subprocess.run([sys.executable, "-m", "lore_sidecar", "--store-dir", str(store), "doctor"],
                             env=clean_env(tmp_path), cwd=tmp_path, capture_output=True, text=True, timeout=120)
        return out.stdout + out.stderr

    shared = doctor()
    assert "other users can read the store" in shared and f"chmod 700 {store}" in shared
    store.chmod(0o700)
    private = doctor()  # the control: the same store, closed, draws no warning
    assert "other users can" not in private and "store" in private
