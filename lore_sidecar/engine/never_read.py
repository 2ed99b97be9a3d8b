"""The never-read list: files that hold credentials by convention. Pure rules, no I/O.

Whatever such a file contains, no face of lore reads it: not the indexer, not `lore/getNode`,
hover, the dashboard, the ask agent's Read/Grep/Glob, MCP or export. The one place a read
happens (engine/jail.py, and the indexer's `walk.read_text`) asks `never_read` about the
path as given *and* about the real path it resolves to, so a harmless-looking link to `.env`
is refused like `.env` itself. Names compare case-insensitively (`.ENV` on a case-insensitive
disk is the same file).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

KIND = "secretFile"

# Whole names.
SECRET_NAMES = frozenset({
    ".npmrc", ".yarnrc", ".yarnrc.yml", ".pypirc", ".netrc", "_netrc", ".git-credentials", ".htpasswd", ".pgpass",
    ".my.cnf", ".dockercfg", ".s3cfg", ".boto", ".vault-token", ".terraformrc", "terraform.rc", ".gem-credentials",
    "credentials", "credentials.json", "credentials.yml", "credentials.yaml", "credentials.toml", "credentials.db",
    "secrets.json", "secrets.yml", "secrets.yaml", "service-account.json", "application_default_credentials.json",
    "access_tokens.db", "accesstokens.json", "msal_token_cache.json", "msal_token_cache.bin", "azureprofile.json",
    "terraform.tfvars", "kubeconfig", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "known_hosts", "authorized_keys",
})
# Name endings: keys, keystores, certificates' private halves, encrypted vaults, state with secrets.
SECRET_SUFFIXES = (".pem", ".key", ".p12", ".pfx", ".p8", ".jks", ".jceks", ".keystore", ".keychain",
                   ".keychain-db", ".kdbx", ".kdb", ".asc", ".gpg", ".ppk", ".tfstate", ".tfvars", ".env")
# Name beginnings: `.env`, `.env.local`, `.envrc`, `id_rsa.old`, `id_ed25519_sk` ...
SECRET_PREFIXES = (".env", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519")
# Folders whose every file is a credential (SSH, GnuPG, cloud CLIs, pass).
SECRET_DIRS = frozenset({".ssh", ".gnupg", ".aws", ".azure", ".password-store"})
# Trailing path pieces: `<anything>/.docker/config.json`, `.kube/config`, `gh/hosts.yml` ...
SECRET_TAILS = ((".docker", "config.json"), (".kube", "config"), ("gh", "hosts.yml"), (".config", "hub"))
# Folders (as trailing pieces) whose every file is a credential: gcloud's configuration.
SECRET_DIR_TAILS = ((".config", "gcloud"), ("gcloud", "legacy_credentials"))


def secret_name(name: str) -> bool:
    """Whether a bare file name is on the list (`.env.local`, `server.pem`, `.npmrc` ...)."""
    low = name.lower()
    return low in SECRET_NAMES or low.endswith(SECRET_SUFFIXES) or low.startswith(SECRET_PREFIXES)


def never_read(path: str | PurePosixPath) -> bool:
    """Whether `path` (relative to a workspace root, `/`-separated; an absolute path is judged
    by its name only, since the folders above a root are the user's business) is never read."""
    text = str(path).replace("\\", "/")
    parts = [p.lower() for p in text.split("/") if p not in ("", ".")]
    if not parts:
        return False
    if secret_name(parts[-1]):
        return True
    if text.startswith("/"):
        return False
    folders = parts[:-1]
    if not SECRET_DIRS.isdisjoint(folders):
        return True
    # Trigger: every path a scan walks, before any preparation worker starts. Why: each tail
    # checked at each folder, with slices, cost 4.8 us a path (now 2.8). Outcome: each tail
    # length looked up once in a set: the path's last pieces for SECRET_TAILS, each run of
    # folders for SECRET_DIR_TAILS.
    if any(tuple(parts[-n:]) in tails for n, tails in _TAILS_BY_LEN if len(parts) >= n):
        return True
    return any(tuple(folders[i - n : i]) in tails for n, tails in _DIR_TAILS_BY_LEN for i in range(n, len(folders) + 1))


def _by_len(tails: tuple[tuple[str, ...], ...]) -> tuple[tuple[int, frozenset[tuple[str, ...]]], ...]:
    return tuple((n, frozenset(t for t in tails if len(t) == n)) for n in sorted({len(t) for t in tails}))


_TAILS_BY_LEN, _DIR_TAILS_BY_LEN = _by_len(SECRET_TAILS), _by_len(SECRET_DIR_TAILS)


def grep_excludes() -> list[str]:
    """`grep --exclude=` / `--exclude-dir=` options for the names above, case-insensitive
    (grep's globs are case-sensitive: `.env` becomes `.[eE][nN][vV]`). The tool filters its
    output by `never_read` as well; these keep grep from opening the files at all."""
    names = [_nocase(n) for n in sorted(SECRET_NAMES)]
    names += ["*" + _nocase(s) for s in SECRET_SUFFIXES]
    names += [_nocase(p) + "*" for p in SECRET_PREFIXES]
    return [f"--exclude={n}" for n in names] + [f"--exclude-dir={_nocase(d)}" for d in sorted(SECRET_DIRS)]


def drop_secret_diffs(patch: str) -> str:
    """`git log -p` output without the file sections of never-read paths (a credential file
    committed once keeps its old contents in history). Pure text work: the git command runs
    with literal pathspecs, so exclusion by pathspec magic is not available to it. A section
    starts at `diff --git a/X b/Y`; its hunks are consumed by the line counts their `@@`
    headers give, so a hunk line that looks like a header cannot end it early."""
    out: list[str] = []
    lines = patch.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.startswith("diff --git "):
            out.append(line)
            i += 1
            continue
        keep = not any(never_read(p) for p in _diff_paths(line))
        section = [line]
        i += 1
        while i < len(lines) and lines[i].startswith(DIFF_HEADERS):
            section.append(lines[i])
            i += 1
        while i < len(lines) and lines[i].startswith("@@ "):
            old, new = _hunk_counts(lines[i])
            section.append(lines[i])
            i += 1
            while i < len(lines) and (old > 0 or new > 0 or lines[i].startswith("\\")):
                tag = lines[i][:1]
                if tag == "-":
                    old -= 1
                elif tag == "+":
                    new -= 1
                elif tag != "\\":
                    old, new = old - 1, new - 1
                section.append(lines[i])
                i += 1
        if keep:
            out.extend(section)
    return "\n".join(out)


DIFF_HEADERS = ("index ", "old mode ", "new mode ", "deleted file mode ", "new file mode ", "similarity index ",
                "dissimilarity index ", "rename from ", "rename to ", "copy from ", "copy to ", "--- ", "+++ ",
                "Binary files ")
_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')


def _hunk_counts(header: str) -> tuple[int, int]:
    m = _HUNK.match(header)
    if m is None:
        return 0, 0
    return int(m.group(1) or 1), int(m.group(2) or 1)


def _diff_paths(line: str) -> list[str]:
    """Every reading of `diff --git a/X b/Y` (a path may hold " b/"; git quotes odd names)."""
    rest = line[len("diff --git "):]
    if '"' in rest:
        return [q.encode().decode("unicode_escape", errors="replace") for q in _QUOTED.findall(rest)] + [rest]
    found = [rest]
    at = rest.find(" b/")
    while at != -1:
        found += [rest[:at], rest[at + 1:]]
        at = rest.find(" b/", at + 1)
    return [f[2:] if f.startswith(("a/", "b/")) else f for f in found]


def _nocase(text: str) -> str:
    out = []
    for ch in text:
        if ch.isalpha():
            out.append(f"[{ch.lower()}{ch.upper()}]")
        elif ch in "*?[]\\":
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)
