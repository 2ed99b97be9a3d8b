from pathlib import Path

import pytest

from lore_sidecar.errors import BadParams
from lore_sidecar.settings import env_name, load_settings
from lore_sidecar.wire import types as t
from lore_sidecar.wire.converter import structure


def test_layers_apply_in_order_and_bad_values_fall_back_with_a_warning(tmp_path):
    user = tmp_path / "config.toml"
    user.write_text('embedder = "none"\nrrfK = 10\n')
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".lore.json").write_text('{"recall": {"rrfK": 20}, "watch": "maybe"}')
    settings, warnings = load_settings(
        workspace_root=ws,
        user_file=user,
        env={env_name("rrfK"): "30", "LORE_DEBOUNCE_MS": "5"},
        cli={"storeDir": str(tmp_path / "s")},
        init_options={"rrfK": 40, "bogus": 1},
    )
    assert settings.recall.rrf_k == 40
    assert settings.embedder == "none"
    assert settings.index.debounce_ms == 5
    assert settings.index.watch is True  # "maybe" refused, default kept
    assert any("watch" in w for w in warnings) and any("bogus" in w for w in warnings)
    assert settings.store_dir == Path(tmp_path / "s")


def test_unreadable_config_file_is_reported_not_fatal(tmp_path):
    user = tmp_path / "config.toml"
    user.write_text("this is = = not toml")
    settings, warnings = load_settings(user_file=user, env={})
    assert settings.embedder == "wordllama" and warnings


def test_params_structure_with_camel_case_and_report_every_problem():
    p = structure({"sessionId": "s", "messages": [{"role": "user", "content": "hi", "createdAt": "2024-01-01T00:00:00Z"}]}, t.RecordMessagesParams)
    assert p.messages[0].created_at == "2024-01-01T00:00:00Z"
    with pytest.raises(BadParams) as err:
        structure({"query": "", "limit": 500}, t.RecallParams)
    assert len(err.value.errors) == 2
    with pytest.raises(BadParams):
        structure({"query": "x", "limit": True}, t.RecallParams)


def test_every_params_type_reads_its_multi_word_fields_in_camel_case():
    """A params type the converter forgot would silently drop `validFrom`-style keys."""
    import attrs as _attrs

    from lore_sidecar.wire.converter import camel, structure
    from lore_sidecar.wire.methods import METHOD_TO_TYPES

    checked = 0
    for cls in METHOD_TO_TYPES.values():
        fields = _attrs.fields(cls)
        required = {f.name: _sample(f.type) for f in fields if f.default is _attrs.NOTHING}
        for f in fields:
            if "_" not in f.name or f.default is _attrs.NOTHING:
                continue
            value = _sample(f.type)
            if value is None:
                continue
            from lore_sidecar.wire.types import LIMITS

            if (cls, f.name) in LIMITS:  # a value the range check accepts
                value = LIMITS[(cls, f.name)][0] + 1
            params = {camel(k): v for k, v in required.items()} | {camel(f.name): value}
            got = structure(params, cls)
            assert getattr(got, f.name) == value, (cls.__name__, f.name)
            checked += 1
    assert checked >= 8


def _sample(tp):
    text = str(tp)
    if "bool" in text:
        return True
    if "float" in text:
        return 0.5
    if "int" in text:
        return 3
    if "list[MessageIn]" in text or "MessageIn" in text:
        return []
    if "list" in text:
        return None
    if "Literal" in text:
        return None
    if "str" in text:
        return "2024-01-01"
    return None


def test_a_repository_cannot_point_writes_at_a_team_record(tmp_path):
    (tmp_path / ".lore.json").write_text('{"sharedUrl": "postgresql://evil@attacker.example/x", "sharedTeam": "evil",'
                                         ' "shareMessages": ["shop"]}')
    settings, warnings = load_settings(workspace_root=tmp_path, env={}, user_file=tmp_path / "none.toml")
    assert settings.store.shared_url is None and settings.store.shared_team == "default"
    assert settings.store.share_messages == ()
    assert {o for o, _, _ in settings.ignored} >= {"sharedUrl", "sharedTeam", "shareMessages"}
    # the control: the same options from the user's environment are taken
    chosen, _ = load_settings(workspace_root=tmp_path, env={"LORE_SHARED_URL": "postgresql://me@db/lore",
                                                            "LORE_SHARE_MESSAGES": "shop,web"}, user_file=tmp_path / "none.toml")
    assert chosen.store.shared_url == "postgresql://me@db/lore" and chosen.store.share_messages == ("shop", "web")


def test_a_recall_query_of_only_whitespace_is_refused_like_an_empty_one():
    """docs/protocol.md: params of the wrong shape are -32602 naming the field; a query of
    spaces, tabs and newlines asks nothing, as "" does. The control: the same words around a
    letter are a query. (Round 3, tools/rounds/2026-12-04-fresh3-context-gateway-ask.py.)"""
    for blank in ("", "   ", "\t\n "):
        with pytest.raises(BadParams) as err:
            structure({"query": blank}, t.RecallParams)
        assert err.value.errors == ["params.query: must not be empty"], blank
    assert structure({"query": " \tx\n"}, t.RecallParams).query == " \tx\n"


# -- hunt round 7b (tools/rounds/2026-12-07-hunt7b.py) ------------------------------------------------
# The ranges docs/protocol.md states, as it states them (the reference is the document, not
# wire/types.py's LIMITS): each bound is accepted and one past it is -32602 naming the field.
DOCUMENTED = [
    ("lore/recall", t.RecallParams, {"query": "q"}, "limit", "`limit` 1..200", 1, 200),
    ("lore/queryFacts", t.QueryFactsParams, {}, "limit", "`limit` is 1..200", 1, 200),
    ("lore/createNode", t.CreateNodeParams, {"uri": "project://x/decision/a", "content": "c"}, "priority",
     "`priority` 0..4", 0, 4),
    ("lore/updateNode", t.UpdateNodeParams, {"uri": "project://x/decision/a"}, "priority", "`priority` 0..4", 0, 4),
]


@pytest.mark.parametrize("method, cls, base, field, said, lo, hi", DOCUMENTED, ids=[d[0] for d in DOCUMENTED])
def test_each_documented_range_takes_its_bounds_and_refuses_one_past_them(method, cls, base, field, said, lo, hi):
    docs = " ".join((Path(__file__).resolve().parents[2] / "docs" / "protocol.md").read_text().split())
    assert said in docs, said  # the range is the one the document states
    for ok in (lo, hi):
        assert getattr(structure({**base, field: ok}, cls), field) == ok
    for bad in (lo - 1, hi + 1):
        with pytest.raises(BadParams) as refused:
            structure({**base, field: bad}, cls)
        assert any(f"params.{field}" in e for e in refused.value.errors), refused.value.errors
