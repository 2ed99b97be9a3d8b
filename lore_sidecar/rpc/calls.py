"""How a handler reaches the engine: on the server's executor, in this connection's order."""

from __future__ import annotations

import asyncio
from typing import Any


class Ordering:
    """Causal order per connection: a request never overtakes a write sent before it.

    Handlers run concurrently on the executor, so a client that pipes `recordMessages` and
    then `recall` without waiting could otherwise see the recall answered first. Writes
    form a chain; each request waits for the last write dispatched before it. Reads still
    run in parallel with each other. The barrier is taken synchronously when the handler's
    task starts, and tasks start in arrival order.
    """

    def __init__(self) -> None:
        self._last: asyncio.Future | None = None

    async def read(self, work):
        prev = self._last
        if prev is not None and not prev.done():
            await asyncio.shield(prev)
        return await work()

    async def write(self, work):
        prev = self._last
        mine = asyncio.get_running_loop().create_future()
        self._last = mine
        try:
            if prev is not None and not prev.done():
                await asyncio.shield(prev)
            return await work()
        finally:
            mine.set_result(None)


def bound(engine: Any, path: str) -> Any:
    """`facts.query` -> engine.facts.query."""
    target = engine
    for name in path.split("."):
        target = getattr(target, name)
    return target


class Calls:
    """`read`/`write` run `engine.<service>.<method>(...)` on the executor; a write keeps its
    place in the connection's write order, a read waits for the writes sent before it."""

    def __init__(self, server: Any):
        self.server = server
        self.order = Ordering()

    async def read(self, method: str, *args: Any, **kwargs: Any) -> Any:
        engine = await self.order.read(self.server.engine)
        return await self.server.run(bound(engine, method), *args, **kwargs)

    async def slow(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """A read that may take seconds (a codebase question's model loop): on a thread of
        its own, so it never holds one of the executor's workers the other requests need."""
        engine = await self.order.read(self.server.engine)
        return await asyncio.to_thread(bound(engine, method), *args, **kwargs)

    async def write(self, method: str, *args: Any, **kwargs: Any) -> Any:
        async def work() -> Any:
            engine = await self.server.engine()
            return await self.server.run(bound(engine, method), *args, **kwargs)

        return await self.order.write(work)
