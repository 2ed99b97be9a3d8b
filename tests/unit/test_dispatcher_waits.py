"""What `shutdown` waits for (rpc/transport.py Dispatcher): the client's requests still in
flight, however many came before it. The ids it waits for are pruned past 256 (the answered
ones go); a request still running when the pruning runs is still waited for. A fake pygls
protocol holds each request's future until the test answers it. Round rev20
(rev20-requests-prune-inverted)."""

from __future__ import annotations

import asyncio

from lore_sidecar.rpc.transport import Dispatcher


class FakeProtocol:
    """pygls's side: a request's future sits in `_request_futures` until it is answered."""

    def __init__(self) -> None:
        self._request_futures: dict = {}
        self.handled: list[str] = []

    def structure_message(self, msg: dict) -> dict:
        return msg

    def handle_message(self, msg: dict) -> None:
        self.handled.append(msg["method"])
        if "id" in msg and msg["method"] != "shutdown":
            future = asyncio.get_running_loop().create_future()
            self._request_futures[msg["id"]] = future
            future.add_done_callback(lambda _, i=msg["id"]: self._request_futures.pop(i, None))


async def _turns(n: int = 20) -> None:
    for _ in range(n):
        await asyncio.sleep(0.01)


async def test_shutdown_waits_for_the_oldest_requests_of_hundreds_still_in_flight():
    protocol = FakeProtocol()
    dispatcher = Dispatcher(protocol, lambda _: None)
    n = 300
    for k in range(1, n + 1):
        dispatcher.message({"jsonrpc": "2.0", "id": k, "method": "lore/status", "params": {}})
    dispatcher.message({"jsonrpc": "2.0", "id": 999, "method": "shutdown"})
    futures = dict(protocol._request_futures)
    assert len(futures) == n
    for k in range(n // 2, n + 1):  # the newer half answered; the oldest still running
        futures[k].set_result(None)
    await _turns()
    assert "shutdown" not in protocol.handled
    for k in range(1, n // 2):
        futures[k].set_result(None)
    for _ in range(1000):
        if "shutdown" in protocol.handled:
            break
        await asyncio.sleep(0.01)
    assert protocol.handled.count("shutdown") == 1
