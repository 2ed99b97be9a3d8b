"""Dream: the rules that find what to consolidate or fix in a project's knowledge. Pure —
nodes, facts and retrievability in, proposed changes out; the service applies them.

Each rule, in order (a node is changed by at most one of them):
- duplicates: live nodes whose words overlap ≥ `DUPLICATE` (Jaccard) are merged into the
  best one (lowest priority number, most used, oldest); the others are deleted;
- supersession: two decisions in one domain on the same topic (overlap ≥ `TOPIC`, not
  duplicates): the newer replaces the older, which is suppressed;
- contradiction: a node that states a value a newer fact replaced (it names the fact's
  subject and the old object, and not the new one) is suppressed, citing the fact;
- stale sources: a node citing a file that changed or vanished is demoted one priority;
- faded: a node whose retrievability fell below the review threshold is demoted one
  priority (at priority 4: suppressed).
A change to a priority 0-1 node is only ever proposed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

DUPLICATE = 0.8
TOPIC = 0.35
WORD = re.compile(r"[a-z0-9][a-z0-9_.-]*")
STOP = frozenset("a an the and or of to in on for with by is are be we our it this that use uses used as at from".split())


@dataclass(frozen=True)
class Change:
    uri: str
    action: str  # merge | supersede | contradiction | stale-source | faded
    reason: str
    op: str  # deleteNode | updateNode
    changes: dict[str, Any] = field(default_factory=dict)
    related: str | None = None  # the node kept, the newer decision, the fact
    protected: bool = False  # priority 0-1: proposed, never applied


def words(text: str) -> set[str]:
    return {w for w in WORD.findall(text.lower()) if w not in STOP}


def overlap(a: str, b: str) -> float:
    x, y = words(a), words(b)
    return len(x & y) / len(x | y) if x and y else 0.0


def plan(nodes: list[Mapping[str, Any]], facts: list[Mapping[str, Any]], retrievability: Mapping[str, float],
         source_exists: Callable[[str, str], bool], *, threshold: float = 0.3) -> list[Change]:
    """`nodes`: live knowledge nodes as the wire shows them (uri, content, category, priority,
    uses, createdAt, sources, stale, suppressed, project); `facts`: facts with history."""
    out: list[Change] = []
    done: set[str] = set()
    live = [n for n in nodes if not n.get("suppressed")]

    def add(n: Mapping[str, Any], action: str, reason: str, op: str, changes: dict | None = None,
            related: str | None = None) -> None:
        out.append(Change(uri=n["uri"], action=action, reason=reason, op=op, changes=changes or {}, related=related,
                          protected=n["priority"] <= 1))
        done.add(n["uri"])

    best_first = sorted(live, key=lambda n: (n["priority"], -(n.get("uses") or 0), n["createdAt"], n["uri"]))
    for i, keep in enumerate(best_first):
        if keep["uri"] in done:
            continue
        for other in best_first[i + 1:]:
            if other["uri"] not in done and overlap(keep["content"], other["content"]) >= DUPLICATE:
                add(other, "merge", f"duplicates {keep['uri']} (word overlap "
                                    f"{overlap(keep['content'], other['content']):.2f}); merged into it",
                    "deleteNode", related=keep["uri"])
    decisions = sorted((n for n in live if n.get("category") == "decision" and n["uri"] not in done),
                       key=lambda n: (n["createdAt"], n["uri"]))
    for i, old in enumerate(decisions):
        domain = old["uri"].rsplit("/", 1)[0]
        for new in decisions[i + 1:]:
            if old["uri"] in done or new["uri"].rsplit("/", 1)[0] != domain:
                continue
            if TOPIC <= overlap(old["content"], new["content"]) < DUPLICATE:
                add(old, "supersede", f"an older decision on the topic of {new['uri']}, which replaces it",
                    "updateNode", {"suppressed": True}, related=new["uri"])
    for f in facts:
        if not f.get("supersededBy"):
            continue
        newer = next((g for g in facts if g.get("factId") == f["supersededBy"]), None)
        if newer is None:
            continue
        subject, old, new = f["subject"].lower(), f["object"].lower(), newer["object"].lower()
        for n in live:
            text = n["content"].lower()
            if n["uri"] not in done and subject in text and old in text and new not in text:
                add(n, "contradiction", f"says {f['subject']} {f['predicate']} {f['object']}, but since "
                                        f"{newer.get('validFrom') or newer.get('recordedAt')} it is {newer['object']}",
                    "updateNode", {"suppressed": True}, related=f"fact://{newer['factId']}")
    for n in live:
        if n["uri"] in done:
            continue
        gone = [s["path"] for s in n.get("sources") or [] if not source_exists(n.get("project") or "", s["path"])]
        if gone or n.get("stale"):
            why = f"cites {', '.join(gone)}, which no longer exists" if gone else \
                f"cites {n['stale'].get('path')}, which {n['stale'].get('reason', 'changed')} since it was written"
            add(n, "stale-source", why, "updateNode", _demoted(n))
    for n in live:
        r = retrievability.get(n["uri"], 1.0)
        if n["uri"] not in done and r < threshold and n["priority"] >= 2:
            add(n, "faded", f"retrievability {r:.2f} is below {threshold:g}: recalled and not used, or not at all",
                "updateNode", _demoted(n))
    return out


def _demoted(n: Mapping[str, Any]) -> dict[str, Any]:
    return {"priority": n["priority"] + 1} if n["priority"] < 4 else {"suppressed": True}
