"""How this package starts another Python process running itself.

`python -m lore_sidecar` puts the current folder first on the module search path, and a
process started by an editor, an agent's hook or a host's config runs in whatever folder
that was: often a repository just cloned. A `lore_sidecar/` folder there would be imported
in place of this package and run with the user's rights and keys. `-P` (Python 3.11+)
leaves the current folder off the path, so the package imported is the installed one.
"""

from __future__ import annotations

import sys


def module_command(module: str, *args: str) -> list[str]:
    """The command line that runs `python -m module args` with this interpreter, safely."""
    return [sys.executable, "-P", "-m", module, *args]
