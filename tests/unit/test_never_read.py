"""The never-read rules (engine/never_read.py): credential files by name, ending and folder,
beside ordinary files with similar names that stay readable."""

from __future__ import annotations

import fnmatch

import pytest

from lore_sidecar.engine.never_read import SECRET_NAMES, grep_excludes, never_read

NEVER = [".env", ".env.local", ".ENV.production", ".envrc", "config/prod.env", "id_rsa", "id_rsa.pub", "id_ed25519",
         "server.pem", "certs/TLS.KEY", "store.p12", ".npmrc", ".yarnrc.yml", ".pypirc", ".netrc", ".git-credentials",
         ".pgpass", "credentials.json", "deploy/terraform.tfvars", "state.tfstate", "home/.ssh/config",
         ".aws/credentials", ".aws/config", ".docker/config.json", ".kube/config", ".config/gh/hosts.yml",
         ".config/gcloud/application_default_credentials.json", ".config/gcloud/configurations/config_default",
         "/abs/where/ever/.env"]
READABLE = ["src/app.py", "README.md", "environment.py", "docs/env-vars.md", "keys.py", "src/key_utils.py",
            "docs/pem-format.md", "config/settings.toml", "kube/config.yaml", "docker/config.json", "gcloud/deploy.sh",
            "credentials_test.py", "/root/.ssh-notes/readme.md", "/home/u/.aws/project/src/app.py"]


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
