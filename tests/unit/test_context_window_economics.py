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
    raw_cap,
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
    assert CALLS_PER_MOVE * 300 <= slow[1] < fast[1]  # at least the bust budget's worth of growth
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
