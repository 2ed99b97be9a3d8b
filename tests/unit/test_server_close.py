"""LoreServer's open and close, in one process (lore_sidecar/rpc/server.py): the engine the
open returned is closed by `close`; an open that finishes after `close` closes its own engine;
an open that starts after `close` never touches the store; and an open past its imports (the
store opening) is not "importing", so the process does not end under it."""

from __future__ import annotations

import threading
from concurrent.futures import Future

import pytest

from lore_sidecar.errors import LoreError
from lore_sidecar.rpc.server import create_server
from lore_sidecar.settings import load_settings


class FakeEngine:
    def __init__(self) -> None:
        self.closed = 0

    def close(self) -> None:
        self.closed += 1


class Opener:
    """An open_engine that can be held while "the store opens"."""

    def __init__(self, *, hold: bool = False) -> None:
        self.calls = 0
        self.entered = threading.Event()
        self.release = threading.Event()
        if not hold:
            self.release.set()
        self.engine = FakeEngine()

    def __call__(self, *args, **kwargs) -> FakeEngine:
        self.calls += 1
        self.entered.set()
        assert self.release.wait(120)
        return self.engine


def _server(tmp_path, opener: Opener):
    server = create_server({"storeDir": str(tmp_path / "store")}, open_engine=opener, env={})
    server.settings, _ = load_settings(cli={"storeDir": str(tmp_path / "store")}, env={})
    return server


def test_close_closes_the_engine_the_open_returned_once(tmp_path):
    opener = Opener()
    server = _server(tmp_path, opener)
    assert server._open() is opener.engine
    server.close()
    server.close()
    assert opener.engine.closed == 1


def test_an_open_finishing_after_close_closes_its_own_engine_and_says_shuttingDown(tmp_path):
    opener = Opener(hold=True)
    server = _server(tmp_path, opener)
    outcome: Future = Future()
    server._open_work = outcome

    def run() -> None:
        try:
            outcome.set_result(server._open())
        except BaseException as exc:  # noqa: BLE001 - looked at below
            outcome.set_exception(exc)

    thread = threading.Thread(target=run)
    thread.start()
    assert opener.entered.wait(120)
    # The store is opening: not "importing", so the process will not end under the open.
    assert server.importing() is False
    server.close()
    opener.release.set()
    thread.join()
    with pytest.raises(LoreError) as raised:
        outcome.result()
    assert raised.value.kind == "shuttingDown" and raised.value.retryable is False
    assert opener.engine.closed == 1


def test_an_open_starting_after_close_opens_no_store(tmp_path):
    opener = Opener()
    server = _server(tmp_path, opener)
    server.close()
    with pytest.raises(LoreError) as raised:
        server._open()
    assert raised.value.kind == "shuttingDown"
    assert opener.calls == 0


def _background_after_open(tmp_path, caplog, opener: Opener, *, close_during_open: bool) -> None:
    """`start_background` waiting for a held open; `close` (the exit) during it if asked."""
    import asyncio
    import logging

    server = _server(tmp_path, opener)

    async def main() -> None:
        loop = asyncio.get_running_loop()

        async def opened():
            server._open_work = server.executor.submit(server._open)
            return await asyncio.wrap_future(server._open_work)

        server.engine_future = asyncio.ensure_future(opened())
        background = asyncio.ensure_future(server.start_background())
        assert await loop.run_in_executor(None, opener.entered.wait, 120)
        if close_during_open:
            await loop.run_in_executor(None, server.close)
        opener.release.set()
        await background

    caplog.set_level(logging.INFO, logger="lore_sidecar.rpc.server")
    asyncio.run(main())


def test_background_work_told_the_open_was_stopped_by_an_exit_logs_info_not_error(tmp_path, caplog):
    opener = Opener(hold=True)
    _background_after_open(tmp_path, caplog, opener, close_during_open=True)
    said = [r for r in caplog.records if "exiting" in r.getMessage()]
    assert said and all(r.levelname == "INFO" for r in said), [(r.levelname, r.getMessage()) for r in caplog.records]
    assert not [r for r in caplog.records if r.levelname == "ERROR"]
    assert opener.engine.closed == 1


class FailingOpener(Opener):
    def __call__(self, *args, **kwargs) -> FakeEngine:
        super().__call__(*args, **kwargs)
        raise LoreError("storeUnavailable", "the store folder is a file")


def test_control_background_work_whose_store_cannot_open_logs_error(tmp_path, caplog):
    opener = FailingOpener(hold=True)
    _background_after_open(tmp_path, caplog, opener, close_during_open=False)
    errors = [r for r in caplog.records if r.levelname == "ERROR"]
    assert errors and "store could not be opened" in errors[0].getMessage()
