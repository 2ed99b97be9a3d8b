"""`lore-sidecar doctor`'s store checks (lore_sidecar/setup/doctor.py store_checks and
install_checks) on stores and installs made by hand in tmp_path: which state each finding
gets (ok, warn, fail) at each side of its boundary. The CLI around them is driven in
tests/integration/test_doctor.py."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from lore_sidecar.setup import doctor
from lore_sidecar.store.db import SCHEMA_VERSION


def by_name(store: Path) -> dict[str, doctor.Check]:
    return {c.name: c for c in doctor.store_checks(store, 5000)}


def make_db(store: Path, version: int, outbox: int = 0) -> None:
    store.mkdir(mode=0o700, exist_ok=True)
    db = sqlite3.connect(store / "lore.db")
    with db:
        db.execute(f"PRAGMA user_version = {version}")
        db.execute("CREATE TABLE index_outbox(seq INTEGER PRIMARY KEY)")
        db.executemany("INSERT INTO index_outbox(seq) VALUES (?)", [(i,) for i in range(1, outbox + 1)])
    db.close()


def test_a_store_not_made_yet_is_fine_and_a_file_in_its_place_is_not(tmp_path):
    [check] = doctor.store_checks(tmp_path / "nothing-yet", 5000)
    assert check.state == doctor.OK and "does not exist yet" in check.detail
    (tmp_path / "a-file").write_text("")
    [check] = doctor.store_checks(tmp_path / "a-file", 5000)
    assert check.state == doctor.FAIL


@pytest.mark.parametrize("mode, said", [(0o701, "enter"), (0o710, "enter"), (0o740, "read"), (0o704, "read")])
def test_a_store_its_group_or_others_may_enter_or_read_is_a_privacy_warning(tmp_path, mode, said):
    store = tmp_path / "store"
    store.mkdir(mode=0o700)
    assert "privacy" not in by_name(store)  # the control: the owner's alone
    store.chmod(mode)
    check = by_name(store)["privacy"]
    assert check.state == doctor.WARN and f"other users can {said} the store" in check.detail
    assert check.fix == f"chmod 700 {store}"


def test_a_schema_newer_than_this_version_fails_an_older_one_warns_the_same_one_passes(tmp_path):
    for version, state in ((SCHEMA_VERSION + 1, doctor.FAIL), (SCHEMA_VERSION - 1, doctor.WARN),
                           (SCHEMA_VERSION, doctor.OK)):
        store = tmp_path / f"v{version}"
        make_db(store, version)
        assert by_name(store)["schema"].state == state, version


def test_ten_thousand_records_waiting_to_be_indexed_warn_one_fewer_does_not(tmp_path):
    make_db(tmp_path / "a", SCHEMA_VERSION, 9_999)
    check = by_name(tmp_path / "a")["index"]
    assert check.state == doctor.OK and check.detail.startswith("9999 records waiting")
    make_db(tmp_path / "b", SCHEMA_VERSION, 10_000)
    check = by_name(tmp_path / "b")["index"]
    assert check.state == doctor.WARN and check.fix
    make_db(tmp_path / "c", SCHEMA_VERSION)
    assert by_name(tmp_path / "c")["index"].detail == "index current"


def test_quarantined_operations_warn_and_pending_ones_warn_only_without_a_writer(tmp_path):
    store = tmp_path / "store"
    (store / "spool" / "bad").mkdir(parents=True, mode=0o700)
    store.chmod(0o700)
    assert "spool" not in by_name(store)  # an empty spool says nothing
    (store / "spool" / "1-a.op.json").write_text("{}")
    check = by_name(store)["spool"]
    assert check.state == doctor.WARN and "1 follower writes waiting" in check.detail  # no writer holds the lock
    (store / "spool" / "bad" / "2-b.op.json").write_text("{}")
    check = by_name(store)["spool"]
    assert check.state == doctor.WARN and "1 quarantined" in check.detail and "bad" in check.fix
    assert by_name(store)["writer"].state == doctor.OK


def test_an_install_whose_toml_starts_another_lore_sidecar_is_named(tmp_path, monkeypatch):
    """Codex's config.toml names the command: one pointing elsewhere fails, the control passes."""
    from lore_sidecar.setup import hosts, install

    home = tmp_path / "home"
    home.mkdir()
    for k in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "CODEX_HOME"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("HOME", str(home))
    install.install("codex", hosts.where(None))
    [check] = doctor.install_checks()
    assert check.state == doctor.OK and check.name == "codex (user)", check
    config = home / ".codex" / "config.toml"
    exe = hosts.this_executable()[0]
    config.write_text(config.read_text().replace(exe, "/opt/elsewhere/lore-sidecar"))
    [check] = doctor.install_checks()
    assert check.state == doctor.FAIL and str(config) in check.detail, check
