"""A corpus of hostile git repositories, each a real `git init` repository with commits, built
under a test's temporary folder. Every hostile program is a script that appends a line to
`<base>/canaries/<case>` when it runs, so "nothing ran" is an empty canary folder.

Each case builds twice: `hostile=True` with the option that would run a program, and the
control (`hostile=False`): the same repository without that option (the tracked files, the
`.gitattributes`, the `.git` file stay), which must answer normally. `expect` says what the
hostile one does under lore: "answers" (the option is neutralised) or "refused" (a tool error
the model reads).
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

SUBJECT = "Add the walrus parser"
SSH_SIG = "-----BEGIN SSH SIGNATURE-----\nU1NIU0lHAAAAAQ==\n-----END SSH SIGNATURE-----"
PGP_SIG = "-----BEGIN PGP SIGNATURE-----\n\niQEzBAABCAAdFiEE\n=abcd\n-----END PGP SIGNATURE-----"
HOOKS = ("pre-commit", "post-checkout", "post-index-change", "reference-transaction", "fsmonitor-watchman",
         "post-rewrite", "pre-auto-gc", "push-to-checkout")


def builder_env(home: Path) -> dict[str, str]:
    """The environment the corpus itself is built with: nothing of the user's or the test's."""
    home.mkdir(parents=True, exist_ok=True)
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t", "LC_ALL": "C"}


@dataclass
class Corpus:
    base: Path

    @property
    def canaries(self) -> Path:
        return self.base / "canaries"

    def fired(self) -> dict[str, str]:
        return {p.name: p.read_text() for p in sorted(self.canaries.iterdir())} if self.canaries.exists() else {}

    def evil(self, case: str, name: str = "prog") -> str:
        """A script that records that it ran (then passes its input through, as a pager or a
        filter would)."""
        folder = self.base / "evil"
        folder.mkdir(parents=True, exist_ok=True)
        self.canaries.mkdir(exist_ok=True)
        path = folder / f"{case}-{name}"
        path.write_text(f'#!/bin/sh\necho "{name} $*" >> {self.canaries / case}\ncat\n')
        path.chmod(0o755)
        return str(path)

    def git(self, root: Path, *args: str, stdin: str | None = None) -> str:
        done = subprocess.run(["git", *args], cwd=root, env=builder_env(self.base / "builder-home"), input=stdin,
                              capture_output=True, text=True, check=True)
        return done.stdout

    def config(self, root: Path, *pairs: tuple[str, str], file: str | None = None) -> None:
        for key, value in pairs:
            self.git(root, "config", *(("--file", file) if file else ()), "--add", key, value)

    def build(self, case: str, hostile: bool) -> Path:
        root = self.base / ("hostile" if hostile else "control") / case
        root.mkdir(parents=True)
        self.git(root, "init", "-q", "-b", "main")
        prep, after = CASES[case].prep, CASES[case].after
        if prep:
            prep(self, root, case, hostile)
        (root / "a.txt").write_text("walrus one\n")
        (root / "b.txt").write_text("steady\n")
        self.git(root, "add", "-A")
        self.git(root, "commit", "-qm", SUBJECT)
        (root / "a.txt").write_text("walrus two\n")  # a change git status reports
        later = os.stat(root / "b.txt").st_mtime + 100
        os.utime(root / "b.txt", (later, later))  # same content, new stat: status re-reads it (filters run)
        if after:
            after(self, root, case, hostile)
        return root

    def sign_head(self, root: Path, signature: str) -> None:
        """Replace HEAD by the same commit carrying a `gpgsig` header (a signature to verify)."""
        body = self.git(root, "cat-file", "commit", "HEAD")
        head, _, message = body.partition("\n\n")
        sig = "gpgsig " + signature.replace("\n", "\n ")
        new = self.git(root, "hash-object", "-t", "commit", "-w", "--stdin", stdin=f"{head}\n{sig}\n\n{message}").strip()
        self.git(root, "update-ref", "HEAD", new)


@dataclass(frozen=True)
class Case:
    expect: str  # what the hostile repository does under lore: "answers" or "refused"
    prep: Callable[[Corpus, Path, str, bool], None] | None = None  # before the commit (tracked files)
    after: Callable[[Corpus, Path, str, bool], None] | None = None  # after it (.git/config, ownership)


def _tracked_signature(c: Corpus, root: Path, case: str, hostile: bool) -> None:
    (root / "tools").mkdir()
    (root / "tools" / "gpg-verify").write_text(f'#!/bin/sh\necho "gpg $*" >> {c.canaries / case}\n')
    (root / "tools" / "gpg-verify").chmod(0o755)
    c.canaries.mkdir(exist_ok=True)
    if hostile:  # the reproduction: read as the user's config when HOME was the project
        (root / ".gitconfig").write_text("[log]\n\tshowSignature = true\n[gpg]\n\tprogram = ./tools/gpg-verify\n")


def _tracked_everything(c: Corpus, root: Path, case: str, hostile: bool) -> None:
    (root / ".gitattributes").write_text("*.txt filter=evil diff=evil\n")
    if hostile:
        e = c.evil(case)
        (root / ".gitconfig").write_text(
            f"[core]\n\tpager = {e}\n\tfsmonitor = {e}\n\thooksPath = {c.base / 'evil'}\n\tsshCommand = {e}\n"
            f"[diff]\n\texternal = {e}\n[diff \"evil\"]\n\ttextconv = {e}\n\tcommand = {e}\n"
            f"[filter \"evil\"]\n\tclean = {e}\n\tsmudge = {e}\n\tprocess = {e}\n"
            f"[alias]\n\tlog = !{e}\n\tstatus = !{e}\n[credential]\n\thelper = !{e}\n"
            f"[log]\n\tshowSignature = true\n[gpg]\n\tprogram = {e}\n[include]\n\tpath = {c.base / 'evil' / 'inc'}\n"
            "[safe]\n\tdirectory = *\n")


def _signed(c: Corpus, root: Path, case: str, hostile: bool) -> None:
    c.sign_head(root, PGP_SIG)
    if hostile:
        c.config(root, ("log.showSignature", "true"), ("gpg.program", c.evil(case)),
                 ("gpg.openpgp.program", c.evil(case, "openpgp")))


def _signed_ssh(c: Corpus, root: Path, case: str, hostile: bool) -> None:
    c.sign_head(root, SSH_SIG)
    signers = c.base / "allowed_signers"
    signers.write_text("t@t ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n")
    c.config(root, ("gpg.format", "ssh"), ("gpg.ssh.allowedSignersFile", str(signers)))
    if hostile:
        c.config(root, ("log.showSignature", "true"), ("gpg.ssh.program", c.evil(case)),
                 ("gpg.ssh.defaultKeyCommand", c.evil(case, "keycmd")))


def _set(*pairs: tuple[str, str | None]) -> Callable[[Corpus, Path, str, bool], None]:
    """Hostile keys for `.git/config`; `{evil}` in a value (or None) is a canary program."""
    def after(c: Corpus, root: Path, case: str, hostile: bool) -> None:
        c.config(root, ("remote.origin.url", "ssh://git.invalid/x.git"), ("remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*"))
        if hostile:
            c.config(root, *((k, (v or "{evil}").format(evil=c.evil(case, re.sub(r"\W", "_", k)))) for k, v in pairs))
    return after


def _hooks(c: Corpus, root: Path, case: str, hostile: bool) -> None:
    if hostile:
        hooks = c.base / "evil" / f"{case}-hooks"
        hooks.mkdir(parents=True)
        for name in HOOKS:
            for folder in (hooks, root / ".git" / "hooks"):
                (folder / name).write_text(f'#!/bin/sh\necho "hook {name}" >> {c.canaries / case}\n')
                (folder / name).chmod(0o755)
        c.config(root, ("core.hooksPath", str(hooks)))


def _include(section: str) -> Callable[[Corpus, Path, str, bool], None]:
    def after(c: Corpus, root: Path, case: str, hostile: bool) -> None:
        if hostile:
            e = c.evil(case)
            inc = c.base / "evil" / f"{case}.inc"
            inc.write_text(f"[core]\n\tpager = {e}\n\tfsmonitor = {e}\n[filter \"evil\"]\n\tclean = {e}\n")
            c.config(root, (section, str(inc)))
    return after


def _attributes(line: str) -> Callable[[Corpus, Path, str, bool], None]:
    def prep(c: Corpus, root: Path, case: str, hostile: bool) -> None:
        (root / ".gitattributes").write_text(line + "\n")
    return prep


def _other_owner(c: Corpus, root: Path, case: str, hostile: bool) -> None:
    # git's own check would stop at the owner, unless safe.directory says otherwise: the
    # repository tries, through a tracked .gitconfig and its own config.
    c.config(root, ("safe.directory", "*"))
    if hostile:
        c.config(root, ("core.pager", c.evil(case)))
        for here, dirs, files in os.walk(root):
            for name in [*dirs, *files]:
                os.lchown(os.path.join(here, name), 65534, 65534)
        os.chown(root, 65534, 65534)


def _tracked_safe_directory(c: Corpus, root: Path, case: str, hostile: bool) -> None:
    (root / ".gitconfig").write_text("[safe]\n\tdirectory = *\n")


def _gitfile(c: Corpus, root: Path, case: str, hostile: bool) -> None:
    """`.git` becomes a file naming the git dir: elsewhere (hostile) or inside the project."""
    target = (c.base / "elsewhere" / case) if hostile else (root / ".git-real")
    target.parent.mkdir(parents=True, exist_ok=True)
    os.rename(root / ".git", target)
    (root / ".git").write_text(f"gitdir: {target}\n")
    if hostile:
        c.config(root, ("core.fsmonitor", c.evil(case)))


def _gitdir_link(c: Corpus, root: Path, case: str, hostile: bool) -> None:
    """`.git` becomes a symlink to the git dir: elsewhere (hostile) or inside the project."""
    target = (c.base / "elsewhere" / case) if hostile else (root / "meta" / "git")
    target.parent.mkdir(parents=True, exist_ok=True)
    os.rename(root / ".git", target)
    os.symlink(target, root / ".git")
    if hostile:
        c.config(root, ("core.pager", c.evil(case)))


def _worktree_config(c: Corpus, root: Path, case: str, hostile: bool) -> None:
    c.config(root, ("extensions.worktreeConfig", "true"), ("core.repositoryformatversion", "1"))
    wt = str(root / ".git" / "config.worktree")
    if hostile:
        e = c.evil(case)
        c.config(root, ("filter.evil.clean", e), ("filter.evil.smudge", e), ("filter.evil.process", e), file=wt)
    else:
        c.config(root, ("core.quotePath", "false"), file=wt)


def _promisor(c: Corpus, root: Path, case: str, hostile: bool) -> None:
    """A partial clone missing a blob: `log -p` would fetch it from the promisor remote, here
    an `ext::` transport running a program."""
    if not hostile:
        return
    c.config(root, ("core.repositoryformatversion", "1"), ("extensions.partialClone", "origin"),
             ("remote.origin.url", f"ext::{c.evil(case)} %S"), ("remote.origin.promisor", "true"),
             ("protocol.ext.allow", "always"), ("protocol.allow", "always"))
    blob = c.git(root, "rev-parse", "HEAD:a.txt").strip()
    loose = root / ".git" / "objects" / blob[:2] / blob[2:]
    loose.chmod(stat.S_IWUSR | stat.S_IRUSR)
    loose.unlink()


def _alternates(c: Corpus, root: Path, case: str, hostile: bool) -> None:
    """Objects borrowed from another repository (`git clone --shared`): outside the project
    (hostile), or from a second repository inside it (the control)."""
    lender = (c.base / "elsewhere" / f"{case}-lender") if hostile else (root / "vendor" / "lender")
    lender.mkdir(parents=True)
    c.git(lender, "init", "-q", "-b", "main")
    (lender / "secret.txt").write_text("lender-secret\n")
    c.git(lender, "add", "secret.txt")
    c.git(lender, "commit", "-qm", "Lender walrus secret")
    (root / ".git" / "objects" / "info" / "alternates").write_text(str(lender / ".git" / "objects") + "\n")
    if hostile:
        c.git(root, "update-ref", "refs/heads/borrowed", c.git(lender, "rev-parse", "HEAD").strip())


CASES: dict[str, Case] = {
    "tracked-gitconfig-signature": Case("answers", prep=_tracked_signature, after=lambda c, r, k, h: c.sign_head(r, PGP_SIG)),
    "tracked-gitconfig-everything": Case("answers", prep=_tracked_everything),
    "tracked-safe-directory": Case("refused", prep=_tracked_safe_directory, after=_other_owner),
    "config-pager": Case("answers", after=_set(("core.pager", None), ("pager.log", None), ("pager.status", None))),
    "config-diff-external": Case("answers", after=_set(("diff.external", None))),
    "config-fsmonitor": Case("answers", after=_set(("core.fsmonitor", None))),
    "config-gpg-signature": Case("answers", after=_signed),
    "config-gpg-ssh": Case("answers", after=_signed_ssh),
    "config-credential-helper": Case("answers", after=_set(("credential.helper", None), ("credential.helper", None))),
    "config-ssh-command": Case("answers", after=_set(("core.sshCommand", None), ("core.askPass", None))),
    "config-hooks-path": Case("answers", after=_hooks),
    "config-alias": Case("answers", after=_set(("alias.log", "!{evil}"), ("alias.status", "!{evil}"))),
    "config-include-path": Case("refused", after=_include("include.path")),
    "config-include-if": Case("refused", after=_include("includeIf.gitdir:/.path")),
    "config-filter": Case("refused", prep=_attributes("*.txt filter=evil"), after=_set(
        ("filter.evil.clean", None), ("filter.evil.smudge", None), ("filter.evil.process", None),
        ("filter.evil.required", "true"))),
    "config-textconv": Case("refused", prep=_attributes("*.txt diff=evil"),
                            after=_set(("diff.evil.textconv", None), ("diff.evil.command", None))),
    "config-other-programs": Case("refused", after=_set(("core.alternateRefsCommand", None), ("core.gitProxy", None),
                                                        ("remote.origin.uploadpack", None))),
    "other-owner-safe-directory": Case("refused", after=_other_owner),
    "gitfile-elsewhere": Case("refused", after=_gitfile),
    "gitdir-symlink-elsewhere": Case("refused", after=_gitdir_link),
    "worktree-config-filter": Case("refused", prep=_attributes("*.txt filter=evil"), after=_worktree_config),
    "promisor-ext-transport": Case("answers", after=_promisor),
    "alternates-elsewhere": Case("refused", after=_alternates),
}
