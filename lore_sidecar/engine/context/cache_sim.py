"""A prompt-cache simulator (Anthropic's rules, as documented): what a request reads from the
cache, what it writes, and why a cache was lost. Pure; used by bench/context.py and by the
tests that check byte-stability.

A request is its blocks in order (system, tools, then each message's content blocks), each
with a hash and a token count, and the indices of the blocks carrying a breakpoint. A
breakpoint writes the prefix up to it (5-minute TTL, or 1 hour for a breakpoint marked
`"ttl": "1h"`, written at 2x instead of 1.25x); a later request reads the longest cached
prefix found at one of its breakpoints or up to 20 blocks before it; a read renews the
entry's own TTL. A 1-hour breakpoint over a prefix cached for 5 minutes only is charged as
a 1-hour write of that prefix (the conservative reading).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

TTL_S = 300.0
TTL_1H_S = 3600.0
LOOKBACK = 20


@dataclass(frozen=True)
class Outcome:
    read: int
    write: int  # every cache write, 1-hour ones included
    uncached: int
    bust: str  # "" | "ttl" | "content" | "front"
    diverged_at: int  # tokens of the last request's prefix this one kept (-1: no last request)
    write_1h: int = 0  # of `write`, the tokens written under a 1-hour breakpoint


@dataclass
class CacheSim:
    entries: dict[str, tuple[int, float, float]] = field(default_factory=dict)  # prefix hash -> (tokens, expires, ttl)
    last: tuple[list[str], list[int], float] | None = None  # the previous request's prefix hashes, tokens, time

    def request(self, blocks: list[tuple[str, int]], breakpoints: list[int], at: float, head: int = 1,
                long: frozenset[int] | set[int] = frozenset()) -> Outcome:
        """`head`: how many leading blocks are the system prompt and tools (a change there is
        a front bust: the whole cache is lost). `long`: the breakpoints with a 1-hour TTL."""
        hashes, tokens = prefixes(blocks)
        total = tokens[-1] if tokens else 0
        read, read_at = 0, -1
        for b in breakpoints:
            for j in range(b, max(-1, b - LOOKBACK - 1), -1):
                hit = self.entries.get(hashes[j])
                if hit and hit[1] >= at:
                    if tokens[j] > read:
                        read, read_at = tokens[j], j
                    break
        if read_at >= 0:
            tok, _, ttl = self.entries[hashes[read_at]]
            self.entries[hashes[read_at]] = (tok, at + ttl, ttl)
        last_bp = max(breakpoints) if breakpoints else -1
        write = max(0, tokens[last_bp] - read) if last_bp >= 0 else 0
        long_bp = max((b for b in breakpoints if b in long), default=-1)
        write_1h = min(write, max(0, tokens[long_bp] - read)) if long_bp >= 0 else 0
        for b in breakpoints:
            ttl = TTL_1H_S if b in long else TTL_S
            hit = self.entries.get(hashes[b])
            if hit and hit[1] >= at and hit[2] < ttl:
                write_1h += tokens[b]  # upgraded to an hour: charged as a write of its own
                write += tokens[b]
            if not hit or hit[1] < at or hit[2] < ttl:
                self.entries[hashes[b]] = (tokens[b], at + ttl, ttl)
        bust, kept = self._bust(hashes, tokens, at, head)
        self.last = (hashes, tokens, at)
        return Outcome(read=read, write=write, uncached=max(0, total - read - write), bust=bust, diverged_at=kept,
                       write_1h=write_1h)

    def _bust(self, hashes: list[str], tokens: list[int], at: float, head: int) -> tuple[str, int]:
        """Why the previous request's prefix is not read now: it expired (ttl), something in
        the conversation changed (content), or the system prompt or tools did (front)."""
        if self.last is None:
            return "", -1
        prev_h, prev_t, prev_at = self.last
        same = 0
        for a, b in zip(prev_h, hashes, strict=False):
            if a != b:
                break
            same += 1
        kept = prev_t[same - 1] if same else 0
        if at - prev_at > TTL_S:
            return "ttl", kept
        if same >= len(prev_h):
            return "", kept
        return ("front" if same < head else "content"), kept


def prefixes(blocks: list[tuple[str, int]]) -> tuple[list[str], list[int]]:
    hashes, tokens = [], []
    h = hashlib.sha256()
    n = 0
    for digest, count in blocks:
        h.update(digest.encode())
        hashes.append(h.copy().hexdigest()[:24])
        n += count
        tokens.append(n)
    return hashes, tokens
