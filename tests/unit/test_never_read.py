"""The never-read rules (engine/never_read.py): credential files by name, ending and folder,
beside ordinary files with similar names that stay readable."""

from __future__ import annotations

import fnmatch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lore_sidecar.engine import never_read as rules
from lore_sidecar.engine.never_read import (
    SECRET_NAMES,
    drop_secret_diffs,
    grep_excludes,
    never_read,
)

NEVER = [".env", ".env.local", ".ENV.production", ".envrc", "config/prod.env", "id_rsa", "id_rsa.pub", "id_ed25519",
         "server.pem", "certs/TLS.KEY", "store.p12", ".npmrc", ".yarnrc.yml", ".pypirc", ".netrc", ".git-credentials",
         ".pgpass", "credentials.json", "deploy/terraform.tfvars", "state.tfstate", "home/.ssh/config",
         ".aws/credentials", ".aws/config", ".docker/config.json", ".kube/config", ".config/gh/hosts.yml",
         ".config/gcloud/application_default_credentials.json", ".config/gcloud/configurations/config_default",
         "/abs/where/ever/.env",
         # case: folders and trailing pieces compare like names do (`.SSH` on a case-insensitive disk is `.ssh`)
         ".SSH/config", "deploy/.Aws/config", ".KUBE/config", ".Docker/config.json", ".Config/GCloud/properties",
         # every `id_*` key name with what follows it, not only the bare names
         "id_ed25519.pub", "id_ed25519_sk", "id_ecdsa.old", "keys/id_dsa-2019",
         # a file directly inside a credential folder (not only one level further down)
         ".config/gcloud/properties", "gcloud/legacy_credentials/adc.json", "home/.config/gcloud/active_config"]
READABLE = ["src/app.py", "README.md", "environment.py", "docs/env-vars.md", "keys.py", "src/key_utils.py",
            "docs/pem-format.md", "config/settings.toml", "kube/config.yaml", "docker/config.json", "gcloud/deploy.sh",
            "credentials_test.py", "/root/.ssh-notes/readme.md", "/home/u/.aws/project/src/app.py",
            "SSH/config", "docs/Kube/config", "gcloud/properties", "config/gcloud.md", "id_card.py"]


@pytest.mark.parametrize("path", NEVER)
def test_credential_files_are_never_read(path):
    assert never_read(path)


@pytest.mark.parametrize("path", READABLE)
def test_control_ordinary_files_with_similar_names_stay_readable(path):
    assert not never_read(path)


def test_grep_excludes_cover_every_listed_name_whatever_its_case():
    globs = [g.split("=", 1)[1] for g in grep_excludes() if g.startswith("--exclude=")]
    for name in [*SECRET_NAMES, ".Env.Local", "SERVER.PEM", "Id_Rsa"]:
        assert any(fnmatch.fnmatchcase(name, g) or fnmatch.fnmatchcase(name.upper(), g) for g in globs), name
    assert not any(fnmatch.fnmatchcase("app.py", g) for g in globs)  # the control


PATCH = """abc1234 2026-12-03 add config
---
 .env   | 2 ++
 app.py | 3 +++

diff --git a/.env b/.env
new file mode 100644
index 0000000..1111111
--- /dev/null
+++ b/.env
@@ -0,0 +1,2 @@
+TOKEN=hidden-one
+diff --git a/app.py b/app.py
diff --git a/app.py b/app.py
index 2222222..3333333 100644
--- a/app.py
+++ b/app.py
@@ -1,2 +1,3 @@
 kept context
-kept removed
+kept added
+kept also
diff --git "a/keys/\\303\\251.pem" "b/keys/\\303\\251.pem"
new file mode 100644
--- /dev/null
+++ "b/keys/\\303\\251.pem"
@@ -0,0 +1 @@
+hidden-two
"""


def test_a_patch_loses_the_never_read_files_sections_and_keeps_the_rest():
    out = drop_secret_diffs(PATCH)
    assert "hidden" not in out  # a line inside .env's hunk that looks like a diff header did not end it early
    assert "diff --git a/app.py b/app.py" in out and "+kept also" in out and "-kept removed" in out
    assert " .env   | 2 ++" in out  # the stat names the file; its contents are what stays out
    assert drop_secret_diffs(PATCH.replace(".env", "env.txt").replace(".pem", ".txt")) == \
        PATCH.replace(".env", "env.txt").replace(".pem", ".txt")  # the control: nothing to drop


def _never_read_checking_each_tail_at_each_folder(path: str) -> bool:
    """never_read as it was written before its tails were looked up in sets: the reference."""
    text = path.replace("\\", "/")
    parts = [p.lower() for p in text.split("/") if p not in ("", ".")]
    if not parts:
        return False
    if rules.secret_name(parts[-1]):
        return True
    if text.startswith("/"):
        return False

    def ends_with(ps: list[str], tail: tuple[str, ...]) -> bool:
        return len(ps) >= len(tail) and tuple(ps[-len(tail):]) == tail

    folders = parts[:-1]
    if any(p in rules.SECRET_DIRS for p in folders):
        return True
    if any(ends_with(parts, tail) for tail in rules.SECRET_TAILS):
        return True
    return any(ends_with(folders[: i + 1], tail) for tail in rules.SECRET_DIR_TAILS for i in range(len(folders)))


_PIECES = sorted({p for t in (*rules.SECRET_TAILS, *rules.SECRET_DIR_TAILS) for p in t} | set(rules.SECRET_DIRS)
                 | {"src", "a", ".", "", "config", "Config", "GCLOUD", "x.py", "hosts.yml", "notes"})


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=7), st.sampled_from(["", "/", "./"]))
def test_never_read_with_its_tails_in_sets_answers_as_checking_each_tail_at_each_folder(pieces, lead):
    path = lead + "/".join(pieces)
    assert never_read(path) == _never_read_checking_each_tail_at_each_folder(path)
