"""Setting lore-sidecar up with each host (`install`, `uninstall`) and checking it (`doctor`).

`hosts.py` says what each host needs and where (found the way the host finds it), as pure
edits of JSON/TOML documents and files to copy; `install.py` applies them without
clobbering anything (merges, a backup, a manifest so `uninstall` restores the original byte
for byte); `doctor.py` checks a set-up and says how to fix what it finds.
"""

HOSTS = ("claude-code", "codex", "pi", "opencode", "copilot", "hermes", "nvim", "vscode", "helix")
USER_ONLY = ("nvim", "vscode", "hermes")
