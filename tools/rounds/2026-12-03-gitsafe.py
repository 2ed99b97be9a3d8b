"""Independent review round: git hardening (issue 34 item 1), engine/gitsafe.py and the git
parts of engine/ask/tools.py. The bugs were chosen from the product code and docs/security.md
("git is untrusted input") before the tests were read. First run: 11 of 21 caught; each of the
10 survivors was a real gap and has a test (named by it below); after them: 21 of 21 caught."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mutations import Mutation  # noqa: E402

BY = "reviewer: independent, gitsafe round"
GS = "lore_sidecar/engine/gitsafe.py"
TL = "lore_sidecar/engine/ask/tools.py"
HOSTILE = "tests/integration/test_hostile_git.py"
TOOLS = "tests/integration/test_ask_tools.py"
NEVER = "tests/integration/test_never_read.py"
E2E = "tests/e2e/test_hostile_git_ask.py"
ASK = "tests/e2e/test_ask.py"
GIT = (HOSTILE, TOOLS)

ROUND = [
    # The reported attack back: git's HOME is the project and no global config is named, so a
    # tracked .gitconfig is read as the user's.
    Mutation("gitsafe-home-is-the-project", GS,
             '"HOME": str(home), "XDG_CONFIG_HOME": str(home),\n'
             '            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": str(home / "gitconfig"),',
             '"HOME": str(root or home), "XDG_CONFIG_HOME": str(home),\n'
             '            "GIT_CONFIG_NOSYSTEM": "1",',
             GIT, by=BY),
    # /etc/gitconfig read again.
    # Survived the first run: nothing checked the environment's NOSYSTEM (the system config cannot be planted
    # from a test). Added test_the_child_environment_is_the_documented_one_and_names_the_repository.
    Mutation("gitsafe-system-config-read", GS, '"GIT_CONFIG_NOSYSTEM": "1", ', "", GIT, by=BY),
    # Only -c protocol.allow=never is left, which a repository's protocol.ext.allow=always beats.
    Mutation("gitsafe-protocol-env-dropped", GS, '"GIT_ALLOW_PROTOCOL": "lore-no-protocol", ', "", GIT, by=BY),
    # A .git symlink is taken as it is (lstat said it exists), not resolved through the jail.
    Mutation("gitsafe-dotgit-link-unjailed", GS, 'git_dir = _inside(root, jail, dot, "its .git")',
             "git_dir = dot", GIT, by=BY),
    # The git dir a .git file names is resolved but not jailed.
    Mutation("gitsafe-gitfile-target-unjailed", GS,
             'git_dir = _inside(root, jail, target if target.is_absolute() else dot.parent / target, '
             '"the git dir its .git file names")',
             "git_dir = real(target if target.is_absolute() else dot.parent / target)",
             GIT, by=BY),
    # Borrowed objects looked for in the worktree's git dir, where a linked worktree has none.
    # Survived: every corpus repository had git dir == common dir. Added
    # test_a_linked_worktree_is_judged_by_its_main_repository[main-alternates-elsewhere].
    Mutation("gitsafe-alternates-of-the-git-dir", GS,
             'alternates = common / "objects" / "info" / "alternates"',
             'alternates = git_dir / "objects" / "info" / "alternates"', GIT, by=BY),
    # The config vetted is the worktree git dir's (absent in a linked worktree), not the common one.
    # Survived (same reason). Added test_a_linked_worktree_is_judged_by_its_main_repository[main-config-filter].
    Mutation("gitsafe-common-config-unvetted", GS, 'vet(root, [common_dir / "config", ',
             'vet(root, [git_dir / "config", ', GIT, by=BY),
    # The common dir's owner is never checked.
    # Survived (same reason). Added test_a_linked_worktree_is_judged_by_its_main_repository[main-owned-by-another-user].
    Mutation("gitsafe-common-dir-owner-unchecked", GS, "for path in {root, git_dir, common_dir}:",
             "for path in {root, git_dir}:", GIT, by=BY),
    # includeIf no longer refused (include.path still is).
    Mutation("gitsafe-includeif-followed", GS,
             '                    "includeif": "it includes another config file (git cannot be told not to follow it)",\n',
             "", GIT, by=BY),
    # GIT_DIR named, GIT_WORK_TREE not: the repository's core.worktree chooses the work tree.
    # Survived: no corpus repository sets core.worktree. Added
    # test_the_repositorys_core_worktree_never_moves_git_out_of_the_project.
    Mutation("gitsafe-work-tree-unnamed", GS, "env.update(GIT_DIR=str(git_dir), GIT_WORK_TREE=str(root))",
             "env.update(GIT_DIR=str(git_dir))", GIT, by=BY),
    # Relative PATH entries kept ('.' or node_modules/.bin resolve against the project in the child).
    Mutation("gitsafe-relative-path-kept", GS, "if not entry or not os.path.isabs(entry):", "if not entry:",
             GIT, by=BY),
    # Only the PATH entry itself is asked for a .git, not its parents (another repository's node_modules/.bin).
    # Survived, the e2e run too (its PATH entry is a repository's top level). Added
    # test_a_path_entry_inside_another_repository_never_runs.
    Mutation("gitsafe-path-parents-unchecked", GS,
             'if any(os.path.lexists(folder / ".git") for folder in (here, *here.parents)):',
             'if os.path.lexists(here / ".git"):', (*GIT, E2E), by=BY),
    # The private HOME is never re-made once something changed in it.
    # Survived: nothing changed the private home. Added test_a_private_home_that_changed_is_made_again_before_git_reads_it.
    Mutation("gitsafe-home-never-remade", GS, "if _home is None or not _pristine(_home):", "if _home is None:",
             GIT, by=BY),
    # A symlinked commondir (ELOOP) and the like escape as internal errors.
    Mutation("gitsafe-oserror-escapes", GS, "    except OSError as exc:  # a git dir that cannot be inspected",
             "    except (FileNotFoundError, PermissionError) as exc:  # a git dir that cannot be inspected",
             GIT, by=BY),
    # git status recurses into submodules again, whose own config lore never vetted.
    # Survived: no corpus repository has a submodule. Added test_a_submodules_own_config_is_never_reached_by_git_status.
    Mutation("tools-status-into-submodules", TL,
             '"--untracked-files=normal",\n                                    "--ignore-submodules=all")',
             '"--untracked-files=normal")', GIT, by=BY),
    # The path is put before the `--`: a file named --output=... becomes a git option.
    Mutation("tools-git-search-path-before-dashdash", TL,
             '        args.append("--")\n        if path:\n            args.append(self._shown(self.jail.readable(self._path(path))))\n',
             '        if path:\n            args.append(self._shown(self.jail.readable(self._path(path))))\n        args.append("--")\n',
             GIT, by=BY),
    # git_search's path no longer refused when it is a never-read file.
    Mutation("tools-git-search-secret-path", TL, "args.append(self._shown(self.jail.readable(self._path(path))))",
             "args.append(self._shown(self._path(path)))", (*GIT, NEVER), by=BY),
    # Secret sections dropped from patches only when a path was given.
    Mutation("tools-git-search-secret-patches", TL, "        if patch:\n            out = drop_secret_diffs(out)",
             "        if patch and path:\n            out = drop_secret_diffs(out)", (*GIT, NEVER), by=BY),
    # The child inherits lore's environment beneath what gitsafe built.
    Mutation("tools-run-inherits-env", TL, "stderr=subprocess.DEVNULL, env=env, start_new_session=True)",
             "stderr=subprocess.DEVNULL, env={**os.environ, **env}, start_new_session=True)", GIT, by=BY),
    # A run stopped at the time bound is not reported as cut.
    # Survived: nothing ran past the bound on purpose. Added test_a_child_stopped_at_the_time_bound_says_it_was_cut.
    Mutation("tools-run-timeout-not-cut", TL, "            if left <= 0:\n                cut = True\n                break",
             "            if left <= 0:\n                break", GIT, by=BY),  # not test_ask.py: 3 of its timing tests fail unmutated on this loaded machine
    # Grep's PATH keeps entries inside the project (only other repositories' are dropped).
    # Survived: the corpus projects are repositories, whose entries the .git rule drops anyway. Added
    # test_grep_in_a_folder_that_is_no_repository_never_runs_the_projects_own_grep.
    Mutation("tools-grep-path-keeps-the-project", TL, '{"PATH": gitsafe.clean_path(self.root), "LC_ALL": "C"}',
             '{"PATH": gitsafe.clean_path(), "LC_ALL": "C"}', GIT, by=BY),
]
