"""Retrievability fitted from an item's own recalled-then-used history (synthetic histories)."""

from __future__ import annotations

import pytest

from lore_sidecar.engine.maintenance import decay

DAY = decay.DAY
NOW = 1_000 * DAY


def shows(days_ago: list[float], prefix: str = "q") -> list[tuple[float, str]]:
    return [(NOW - d * DAY, f"{prefix}{i}") for i, d in enumerate(days_ago)]


def test_recalled_thirty_times_and_never_used_fades():
    f = decay.fit(NOW - 40 * DAY, shows([30 - i for i in range(30)]), [], NOW)
    assert f.retrievability < 0.01 and f.ignored == 30 and f.used == 0


def test_used_last_week_does_not_fade():
    s = shows([10, 9, 8])
    f = decay.fit(NOW - 40 * DAY, s, [(NOW - 7 * DAY, "q2")], NOW)
    assert f.retrievability > decay.THRESHOLD and f.last_used == NOW - 7 * DAY


def test_one_use_after_a_week_of_ignored_recalls_does_not_make_them_successes():
    ignored = shows([7, 6.5, 6, 5.5, 5, 4.5, 4, 3.5, 3, 2.5, 2, 1.5])
    last = (NOW - 1 * DAY, "last")
    after_ignores = decay.fit(NOW - 30 * DAY, [*ignored, last], [(NOW - 1 * DAY, "last")], NOW)
    all_used = decay.fit(NOW - 30 * DAY, [*ignored, last], [(t, q) for t, q in [*ignored, last]], NOW)
    assert after_ignores.ignored == 12 and after_ignores.used == 1  # the ignores stay ignores
    assert after_ignores.stability_days < all_used.stability_days / 10
    # ... yet the one recent use keeps it above the review threshold (control: it is not faded)
    assert after_ignores.retrievability > decay.THRESHOLD


def test_an_open_from_a_recall_that_logged_nothing_still_counts_as_a_use():
    # A recall whose shown list is not kept (recall events left out of a backup, say) still
    # sent the agent to the node: opening it is a use, as the docstring of decay.fit says.
    unlogged = decay.fit(NOW - 120 * DAY, [], [(NOW - 2 * DAY, "not-logged")], NOW)
    assert unlogged.used == 1 and unlogged.last_used == NOW - 2 * DAY and unlogged.ignored == 0
    assert unlogged.retrievability > 0.9
    # Control: the same node without that open has faded (120 days of time alone).
    assert decay.fit(NOW - 120 * DAY, [], [], NOW).retrievability < decay.THRESHOLD


def test_never_recalled_fades_with_time_alone():
    young = decay.fit(NOW - 2 * DAY, [], [], NOW)
    old = decay.fit(NOW - 120 * DAY, [], [], NOW)
    assert young.retrievability > 0.9 and old.retrievability < 0.05


def test_ignored_after_its_last_use_fades_again():
    used_then_ignored = decay.fit(NOW - 60 * DAY, [(NOW - 30 * DAY, "u"), *shows([20 - i for i in range(20)])],
                                  [(NOW - 30 * DAY, "u")], NOW)
    assert used_then_ignored.retrievability < decay.THRESHOLD


def test_priority_zero_and_one_are_never_scaled():
    assert decay.factor(0.0, 0) == decay.factor(0.0, 1) == 1.0
    assert decay.factor(0.0, 3) == 1 - decay.WEIGHT and decay.factor(1.0, 3) == 1.0


# The numbers docs/maintenance.md gives, written out (not read from the module): stability
# starts at 30 days, a success doubles it, a miss shrinks it by 15% and ages the node a day,
# retrievability = exp(-(days since the last success or creation + misses since) / stability).

def test_a_node_never_recalled_has_stability_30_days_and_falls_to_1_over_e_in_30_days():
    f = decay.fit(NOW - 30 * DAY, [], [], NOW)
    assert (f.stability_days, f.retrievability, f.shown, f.used, f.ignored, f.last_used) == (30.0, 0.3679, 0, 0, 0, None)
    # a node created after "now" (a clock skew between machines) has not aged at all
    assert decay.fit(NOW + 5 * DAY, [], [], NOW).retrievability == 1.0


def test_a_success_doubles_stability_and_restarts_the_clock_from_the_open():
    opened = NOW - 60 * DAY
    f = decay.fit(NOW - 100 * DAY, [(NOW - 61 * DAY, "a")], [(opened, "a")], NOW)
    assert f.stability_days == 60.0 and f.retrievability == 0.3679 and f.last_used == opened
    assert f.shown == 1 and f.used == 1 and f.ignored == 0


def test_a_miss_shrinks_stability_by_15_percent_and_ages_the_node_a_day():
    f = decay.fit(NOW, [(NOW, "passed-over")], [], NOW)
    assert f.stability_days == 25.5 and f.ignored == 1
    assert f.retrievability == 0.9615  # exp(-1 / 25.5)
    # misses before the last success no longer age it: only those since
    g = decay.fit(NOW, [(NOW - 2 * DAY, "m"), (NOW - DAY, "hit")], [(NOW, "hit")], NOW)
    assert g.stability_days == 51.0 and g.retrievability == 1.0 and g.ignored == 1


def test_stability_stays_between_a_quarter_day_and_ten_years():
    ignored = decay.fit(NOW - 40 * DAY, shows([30 - i for i in range(30)]), [], NOW)
    assert ignored.stability_days == 0.25
    # the review's reason, word for word as docs/maintenance.md quotes it
    assert decay.reason(ignored, NOW) == ("recalled 30 times, opened 0 (30 recalls ignored); never opened; "
                                          "stability 0.25 days")
    loved = shows([20 - i for i in range(20)])
    f = decay.fit(NOW - 40 * DAY, loved, loved, NOW)
    assert f.stability_days == 3650.0 and f.used == 20


def test_the_reason_says_how_long_ago_the_last_open_was():
    s = shows([9, 8, 7])
    f = decay.fit(NOW - 40 * DAY, s, [(NOW - 7 * DAY, "q2")], NOW)
    assert decay.reason(f, NOW) == ("recalled 3 times, opened 1 (2 recalls ignored); last opened 7 days ago; "
                                    f"stability {f.stability_days:g} days")


def test_the_recall_factor_is_0_9_plus_0_1_times_retrievability_for_priority_2_and_up():
    assert decay.factor(0.5, 2) == pytest.approx(0.95) and decay.factor(0.5, None) == pytest.approx(0.95)
    assert decay.factor(0.0, 4) == pytest.approx(0.9)
    assert decay.factor(0.0, 1) == 1.0  # the control: a standing rule is never scaled
    assert decay.THRESHOLD == 0.3  # the review's documented default
