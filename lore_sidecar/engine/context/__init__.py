"""Context assembly: what goes into the next model call (`lore/assembleContext`).

The gradient (DESIGN.md §1, issue 15): L0 passes the body through with cache breakpoints;
L1 replaces the old conversation by a byte-stable distilled prefix and keeps a pinned raw
window that moves in batches; L2-L4 stub tool outputs and shrink further. The rules are pure
(`bodies`, `gradient`, `prices`, `cache_sim`); `requests.py` captures, decides and builds.
"""
