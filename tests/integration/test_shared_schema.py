"""A new team database that several machines open at the same moment: each migrates it, and
none gets an error (PostgreSQL's CREATE TABLE IF NOT EXISTS races in its catalog unless the
migrations are serialised first). The control is the schema each ends up reading."""

from __future__ import annotations

import threading
import uuid

import psycopg

from lore_sidecar.shared.schema import VERSION, migrate, version
from tests.integration.test_shared import _database


def open_record(url: str, start: threading.Barrier, got: list, errors: list) -> None:
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            start.wait()
            got.append(migrate(conn))
    except Exception as exc:  # noqa: BLE001 (any failure is what the test reports)
        errors.append(repr(exc))


def test_machines_migrating_a_new_record_at_once_all_succeed(pg_cluster):
    for _ in range(6):  # fresh databases: the race is only on a database nobody migrated yet
        url = _database(pg_cluster.url, f"schema_{uuid.uuid4().hex[:8]}")
        start, errors, got = threading.Barrier(6), [], []
        threads = [threading.Thread(target=open_record, args=(url, start, got, errors)) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert errors == [] and got == [VERSION] * 6, errors
        with psycopg.connect(url) as conn:
            assert version(conn) == VERSION
