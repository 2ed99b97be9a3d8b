"""Retrievability fitted from an item's own recalled-then-used history (synthetic histories)."""

from __future__ import annotations

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
