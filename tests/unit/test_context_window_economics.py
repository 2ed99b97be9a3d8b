"""The per-call economics of context assembly (engine/context/gradient.py), pure: the
slack follows the session's growth and the bust budget and never passes the cap; a
read-cost target makes the cap per model; the harness's own compaction is not growth;
a long expected remainder makes compressing pay where a short one does not."""

from __future__ import annotations

from lore_sidecar.engine.context.gradient import (
    CALLS_PER_MOVE,
    Budget,
    Rhythm,
    State,
    observe,
    plan,
    raw_cap,
    rhythm,
    window_size,
    worth_compressing,
)
from lore_sidecar.engine.context.prices import price_of

SONNET, OPUS_41, HAIKU = price_of("claude-sonnet-4-5"), price_of("claude-opus-4-1"), price_of("claude-haiku-4-5")


def test_the_slack_follows_growth_and_never_passes_the_cap():
    budget = Budget(min_raw=10_000, max_raw=60_000)
    slow = window_size(SONNET, budget, 26_000, 2_000, Rhythm(growth=300, cold=0.05, remaining=100))
    fast = window_size(SONNET, budget, 26_000, 2_000, Rhythm(growth=1_500, cold=0.05, remaining=100))
    huge = window_size(SONNET, budget, 26_000, 2_000, Rhythm(growth=20_000, cold=0.05, remaining=100))
    assert slow[0] == fast[0] == 10_000
    assert 300 <= slow[1] < fast[1]
    assert sum(huge) == 60_000  # capped


def test_a_read_cost_target_gives_a_pricier_model_a_smaller_cap():
    budget = Budget(min_raw=5_000, max_raw=500_000, read_usd_per_turn=0.02)
    sonnet, opus, haiku = (raw_cap(p, budget, 20_000, 2_000) for p in (SONNET, OPUS_41, HAIKU))
    assert opus < sonnet < haiku
    assert sonnet == int(0.02 / (3.0 * 0.1 / 1e6)) - 22_000
    assert raw_cap(SONNET, Budget(min_raw=5_000, max_raw=500_000), 20_000, 2_000) == 500_000  # control: no target


def test_the_harness_compaction_is_not_growth_and_long_gaps_count_as_cold():
    s = State()
    for i, total in enumerate((1_000, 3_000, 5_000, 800, 2_800)):
        observe(s, total, at=1000.0 + i * (400 if i == 2 else 10))
        s.last_at = 1000.0 + i * (400 if i == 2 else 10)
    assert 1_900 <= s.growth <= 2_000  # the shrink to 800 added nothing
    assert s.gaps == 4 and s.cold_gaps == 1


def test_compressing_pays_over_a_long_remainder_and_not_over_a_short_one():
    args = dict(total=26_000 + 50_000, fixed=26_000, prefix=2_000, pinned=10_000, slack=20_000, price=SONNET, cold=False)
    assert worth_compressing(rh=Rhythm(growth=800, cold=0.05, remaining=100), **args)
    assert not worth_compressing(rh=Rhythm(growth=800, cold=0.05, remaining=2), **args)


def test_the_answer_is_reserved_out_of_the_models_window():
    """A provider counts the prompt and `max_tokens` against one context window (a prompt
    that fits only without the answer's room is refused as too long): a history that leaves
    less than `max_tokens` free leaves L0 ("over the window"); the control, the same
    history with room for the answer, stays at L0."""
    from lore_sidecar.engine.context.gradient import plan

    budget = Budget(min_raw=10_000, max_raw=10_000_000)  # no raw cap: only the window decides
    fixed, turn = 2_000, 5_000

    def layer_for(history: int) -> tuple[int, str]:
        n = history // turn
        p = plan(State(frozen=True), sizes=[turn] * n, fixed=fixed, starts=list(range(1, n)), price=SONNET,
                 max_output=32_000, budget=budget, prefix_budget=4_000, at=1_000.0)
        return p.layer, p.reason

    near = (SONNET.window - fixed - 10_000) // turn * turn  # fits, but not with 32k to answer in
    roomy = (SONNET.window - fixed - 40_000) // turn * turn  # fits with room for the answer
    assert layer_for(near) == (1, "over the window")
    assert layer_for(roomy) == (0, "passthrough (stopped compressing after 2 busts)")


def _at_l1(calls: int, busts: int, window: int, last_at: float = 1_000.0) -> tuple[State, dict]:
    """A session at L1 whose window (starting at message 1) holds `window` tokens in 1k turns."""
    state = State(layer=1, window_start=1, prefix="p" * 4_000, parts=("p" * 4_000,), prefix_upto=1, calls=calls,
                  content_busts=busts, growth=1_000.0, last_total=window, last_at=last_at)
    sizes = [1_000] * (1 + window // 1_000)
    kw = dict(sizes=sizes, fixed=26_000, starts=list(range(1, len(sizes))), price=SONNET, max_output=16_000,
              budget=Budget(min_raw=4_000, max_raw=60_000), prefix_budget=4_000)
    return state, kw


def test_a_voluntary_move_waits_for_the_bust_budget_and_a_cold_cache_or_the_cap_does_not():
    """A window past its slack moves only once the session has had CALLS_PER_MOVE calls per
    content bust (counting this one); the control: the same window moves with the budget
    there, when the cache is cold anyway, and when it passes the user's cap."""
    state, kw = _at_l1(calls=30, busts=2, window=40_000)
    assert plan(state, at=1_010.0, **kw).window_start == 1  # 3 busts in 31 calls: waits
    state, kw = _at_l1(calls=3 * CALLS_PER_MOVE - 1, busts=2, window=40_000)
    assert plan(state, at=1_010.0, **kw).window_start > 1  # control: 3 in 75 calls moves
    state, kw = _at_l1(calls=30, busts=2, window=40_000)
    assert plan(state, at=1_400.0, **kw).window_start > 1  # cold: nothing left to lose
    state, kw = _at_l1(calls=30, busts=2, window=70_000)
    assert plan(state, at=1_010.0, **kw).window_start > 1  # past maxLayer0Tokens


def test_leaving_l0_is_the_first_bust_and_needs_no_budget():
    state = State(calls=20, growth=2_000.0, last_at=1_000.0)
    sizes = [2_000] * 25
    kw = dict(sizes=sizes, fixed=26_000, starts=list(range(1, 25)), price=SONNET, max_output=16_000,
              budget=Budget(min_raw=4_000, max_raw=60_000), prefix_budget=4_000, at=1_010.0)
    assert plan(state, **kw).layer == 1
    state.content_busts = 1  # control: a second bust within 21 calls waits (a harness that was at L1 before)
    assert plan(state, **kw).layer == 0


def test_the_digest_names_each_path_once_by_directory_and_ranks_paths_and_errors_first():
    """A part lists paths by directory (`files in src/: a.py, b.py`) and whole when alone;
    an appended part names only paths no earlier part named. When the lines pass the room,
    file and error lines are kept before requests: the control is the same lines with room
    for all, where the request is kept too."""
    from lore_sidecar.engine.context.stubs import file_lines, fit, new_lines

    lines = file_lines(["src/a.py", "README.md", "src/b.py", "src/a.py", "docs/x.md"])
    assert lines == ["files: README.md, docs/x.md", "files in src/: a.py, b.py"]
    later = new_lines(file_lines(["src/b.py", "src/c.py", "lib/d.py"]) + ["error: boom"], "\n".join(lines))
    assert later == ["files: lib/d.py, src/c.py", "error: boom"]
    many = [*lines, "error: " + "x" * 60, "user asked: " + "please " * 4]  # the request is newest
    room = sum(len(x) + 1 for x in many[:-1])
    assert fit(many, room) == (many[:-1], 1)
    assert fit(many, room + len(many[-1]) + 1) == (many, 0)  # control


def test_an_hour_long_system_breakpoint_pays_after_gaps_within_the_hour_only():
    """The 1-hour write costs 2x against 1.25x: worth it only when the session shows gaps past
    5 minutes and within the hour. Controls: no such gaps; gaps past the hour; OpenAI (no
    1-hour breakpoints)."""
    from lore_sidecar.engine.context.gradient import hour_pays

    gappy = State(calls=40, gaps=39, cold_gaps=3)
    assert hour_pays(SONNET, rhythm(gappy))
    assert not hour_pays(SONNET, rhythm(State(calls=40, gaps=39)))
    assert not hour_pays(SONNET, rhythm(State(calls=40, gaps=39, cold_gaps=3, long_gaps=3)))
    assert not hour_pays(price_of("gpt-5"), rhythm(gappy))


def test_the_simulator_keeps_a_1h_breakpoint_past_five_minutes_and_prices_its_write_at_2x():
    from lore_sidecar.engine.context.cache_sim import CacheSim
    from lore_sidecar.engine.context.prices import usd

    blocks = [("system", 20_000), ("m1", 1_000)]
    for long, read_after in ((frozenset({0}), 20_000), (frozenset(), 0)):  # control: 5 minutes only
        sim = CacheSim()
        first = sim.request(blocks, [0, 1], at=0.0, long=long)
        assert first.write == 21_000 and first.write_1h == (20_000 if long else 0)
        assert sim.request(blocks, [0, 1], at=1_200.0, long=long).read == read_after
    assert usd(SONNET, uncached=0, write=0, write_1h=1_000_000, read=0) == 2 * 3.0


def test_leaving_l0_prices_the_first_prefix_at_its_measured_digest_not_at_the_budget():
    """At L0 the prefix that leaving would write is the digest of what would be evicted: a
    few short turns make a prefix far below the budget (priced at the budget, compressing
    looks dearer than it is). The control: at L1, where a prefix exists, the budget stands."""
    from lore_sidecar.engine.context.bodies import ANTHROPIC
    from lore_sidecar.engine.context.requests import PREFIX_TOKENS, ContextRequests

    conv = []
    for k in range(6):
        conv += [{"role": "user", "content": [{"type": "text", "text": f"look at src/m{k}.py " + "x " * 2_000}]},
                 {"role": "assistant", "content": [{"type": "text", "text": f"done {k}"}]}]
    sizes = [1_000] * len(conv)
    starts = list(range(0, len(conv), 2))[1:]
    budget = Budget(min_raw=2_000, max_raw=60_000)
    measured = ContextRequests._first_prefix(ANTHROPIC, conv, State(), sizes, starts, budget)
    assert 0 < measured < PREFIX_TOKENS[1] // 4
    assert ContextRequests._first_prefix(ANTHROPIC, conv, State(layer=1), sizes, starts, budget) == PREFIX_TOKENS[1]


def test_a_second_bust_waits_for_twice_calls_per_move_calls_counting_this_one():
    """The bust budget (gradient.may_bust): one content bust per CALLS_PER_MOVE calls,
    counting the call that would bust. A session at L1 with one bust behind it and a window
    past its slack moves on its 2 x CALLS_PER_MOVE-th call; the control, one call earlier,
    waits (the window stays where it is)."""
    state, kw = _at_l1(calls=2 * CALLS_PER_MOVE - 2, busts=1, window=40_000)
    assert plan(state, at=1_010.0, **kw).window_start == 1  # 2 busts in 49 calls: waits
    state, kw = _at_l1(calls=2 * CALLS_PER_MOVE - 1, busts=1, window=40_000)
    assert plan(state, at=1_010.0, **kw).window_start > 1  # control: 2 in 50 calls moves


def test_leaving_l0_on_a_cold_cache_needs_no_budget_even_after_a_bust():
    """A cold cache has nothing to lose: leaving L0 after a gap past the TTL does not wait
    for the bust budget, even in a session that has busted before. The control: the same
    call on a warm cache waits."""
    kw = dict(sizes=[2_000] * 25, fixed=26_000, starts=list(range(1, 25)), price=SONNET, max_output=16_000,
              budget=Budget(min_raw=4_000, max_raw=60_000), prefix_budget=4_000)
    state = State(calls=20, growth=2_000.0, last_at=1_000.0, content_busts=1)
    assert plan(state, at=1_400.0, **kw).layer == 1  # 400 s after the last call: cold
    assert plan(state, at=1_010.0, **kw).layer == 0  # control: warm, the budget says wait


def test_a_read_renews_a_1h_entry_for_an_hour():
    """cache_sim: a read renews the entry's own TTL, so an hour-long entry read 50 minutes
    after it was written is still there 35 minutes later. The control: without that read it
    has expired by then."""
    from lore_sidecar.engine.context.cache_sim import CacheSim

    blocks = [("system", 20_000), ("m1", 1_000)]
    for middle_read, read_after in ((True, 20_000), (False, 0)):
        sim = CacheSim()
        sim.request(blocks, [0], at=0.0, long=frozenset({0}))
        if middle_read:
            assert sim.request(blocks, [0], at=3_000.0, long=frozenset({0})).read == 20_000
        assert sim.request(blocks, [0], at=5_100.0, long=frozenset({0})).read == read_after


def test_when_two_error_lines_do_not_fit_the_newest_is_kept():
    """stubs.fit: within a kind, the newest line is kept first when they do not all fit.
    The control: with room for both, both are kept in their order."""
    from lore_sidecar.engine.context.stubs import fit

    lines = ["error: old failure " + "a" * 40, "error: new failure " + "b" * 40]
    room = len(lines[1]) + 1
    assert fit(lines, room) == ([lines[1]], 1)
    assert fit(lines, 2 * room) == (lines, 0)  # control


def test_the_answer_length_is_read_from_each_dialects_own_key_and_a_bad_value_falls_back():
    """Chat Completions prefers `max_completion_tokens` to the older `max_tokens`; values a
    provider would refuse (strings, booleans, fractions, NaN, zero) fall back to the default
    instead of failing the call — the body is the harness's and the provider judges it."""
    from lore_sidecar.engine.context import bodies as b

    assert b.max_output(b.CHAT, {"max_completion_tokens": 3_000, "max_tokens": 9_000}) == 3_000
    assert b.max_output(b.CHAT, {"max_tokens": 9_000}) == 9_000
    assert b.max_output(b.RESPONSES, {"max_output_tokens": 5_000, "max_tokens": 9_000}) == 5_000
    assert b.max_output(b.ANTHROPIC, {"max_tokens": 7_000.0, "max_output_tokens": 1}) == 7_000
    for bad in ("8000", True, 12.5, float("nan"), float("inf"), 0, -5, None):
        assert b.max_output(b.ANTHROPIC, {"max_tokens": bad}) == b.DEFAULT_MAX_OUTPUT, bad
    assert b.max_output(b.RESPONSES, {}) == b.DEFAULT_MAX_OUTPUT
