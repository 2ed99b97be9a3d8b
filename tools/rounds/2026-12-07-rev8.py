"""Independent review round rev8: bugs in d536ecd — a code name the query spells out
(engine/recall/query.py IDENTIFIER/identifiers), the messages holding it as written
(store/records.py messages_naming) and the bonus it earns on both ranking passes
(engine/recall/recaller.py _rank, `named`).

Method: the bugs were chosen from `git show d536ecd -- lore_sidecar/` (changed lines only)
before any test was opened; tools/mutations.py and tools/rounds/README.md were read only for
the format. The guarding test files were chosen by file name and
`grep -rl "identifiers\\|messages_naming\\|recall" tests/` only.

First run (`python tools/mutations.py <the 13 names>`, once, 2026-12-07 05:57:23-05:59:50
UTC, 2 min 27 s, load average 4.5-5.8 while a suite and a benchmark ran): 5 of 13 caught (38%).
No stale or error outcome.
- query.py `identifiers` 4/5: caught r8-camel-needs-two-humps, r8-pascal-dropped,
  r8-snake-optional, r8-length-floor-gone (all by the unit test of `identifiers`); survived
  r8-names-not-deduped.
- records.py `messages_naming` 0/3: survived r8-instr-ignores-case, r8-batch-drops-the-500th,
  r8-messages-count-as-any.
- recaller.py `_rank` and its callers 1/5: caught r8-bonus-subtracted; survived
  r8-files-not-shared-by-names, r8-files-branch-gone, r8-second-pass-forgets-names,
  r8-names-of-the-lowered-query.
Why so many: the change's one ranking test asks for one name at a time, in messages only, for
one hit (a full page: no second pass), and its camelCase case wins by its words alone (the text
index keeps `parseconfig` whole), so nothing but the snake_case message case needed the bonus.

Survivors (each commented at its entry): all 8 are real promises and got a test in
tests/integration/test_recall_names.py (real engine, no timing) that fails with the bug
planted (a scratch copy of the tree) and passes without; it is listed first among the entry's
guarding tests. Six tests for eight bugs: the case test guards r8-instr-ignores-case and
r8-names-of-the-lowered-query; the workspace-chunk test (three queries differing only in case,
so the words and the uncased files model score alike and the difference is the bonus: half a
leg for one of two names, one leg for both) guards both files bugs. No product bug was found.

Rerun with the tests added (`python tools/mutations.py <the 8 survivors>`, 06:03:55-06:04:36
UTC): 8 of 8 caught. Round after the rerun: 13 of 13 caught. On the unplanted tree
test_recall_names.py passes whole three times (8 passed, ~4 s).

Noted, not changed: `_backfill_ceiling` ("the largest bonuses one hit can get") does not count
the name bonus, so a vector-only hit holding the name as written could in principle rank on a
page the deferral judged full; it needs a message the word leg cut at the pool, so not pursued.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mutations import Mutation  # noqa: E402

BY = "reviewer: rev8"
QUERY = "lore_sidecar/engine/recall/query.py"
RECORDS = "lore_sidecar/store/records.py"
RECALLER = "lore_sidecar/engine/recall/recaller.py"
NAMES = "tests/integration/test_recall_names.py"
REPLIES = "tests/integration/test_recall_replies.py"
PAGING = "tests/integration/test_paging.py"
DENSE = "tests/integration/test_dense_leg.py"
RULES = "tests/unit/test_rules.py"
RECALL = (NAMES, REPLIES, PAGING)

ROUND = [
    # camelCase needs two humps: parseConfig is no longer a name.
    Mutation("r8-camel-needs-two-humps", QUERY,
             "[a-z][a-z0-9]*(?:[A-Z][a-z0-9]+)+|", "[a-z][a-z0-9]*(?:[A-Z][a-z0-9]+){2,}|",
             (*RECALL, RULES), by=BY),
    # PascalCase (TranscriptRenderer) dropped from the pattern.
    Mutation("r8-pascal-dropped", QUERY,
             "|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+\")", "\")",
             (*RECALL, RULES), by=BY),
    # The underscore part made optional: every plain word of four letters or more is a "name".
    Mutation("r8-snake-optional", QUERY,
             "[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+|", "[A-Za-z0-9]+(?:_[A-Za-z0-9]+)*|",
             (*RECALL, RULES), by=BY),
    # The length floor gone: a_b, x_y count as names.
    Mutation("r8-length-floor-gone", QUERY,
             "len(m.group(0)) >= 4", "len(m.group(0)) >= 0",
             (*RECALL, RULES), by=BY),
    # A name spelled twice counts twice (its share of the leg doubles).
    # Survived the first run; real (one share of the leg per name): test_a_name_spelled_twice_is_one_name.
    Mutation("r8-names-not-deduped", QUERY,
             "return list(dict.fromkeys(m.group(0) for m in IDENTIFIER.finditer(query) if len(m.group(0)) >= 4))",
             "return list(m.group(0) for m in IDENTIFIER.finditer(query) if len(m.group(0)) >= 4)",
             (f"{NAMES}::test_a_name_spelled_twice_is_one_name", *RECALL, RULES), by=BY),
    # A message holding the name in another case (parseconfig, LINE_NUMBERS) counts as naming it.
    # Survived the first run; real ("as written"): test_a_camel_case_name_is_held_only_as_written_not_in_another_case.
    Mutation("r8-instr-ignores-case", RECORDS,
             '"(instr(text, ?) > 0)"', '"(instr(lower(text), lower(?)) > 0)"',
             (f"{NAMES}::test_a_camel_case_name_is_held_only_as_written_not_in_another_case", *RECALL), by=BY),
    # Batches of 499 read from a stride of 500: every 500th candidate is never checked.
    # Survived the first run; real (a page of over 500 candidates): test_every_message_holding_the_name_counts_past_a_batch_of_in_keys.
    # Since the batching went to the shared store/db.py select_in (stride IN_BATCH), the same
    # slip is planted there: the last key of every batch never read.
    Mutation("r8-batch-drops-the-500th", "lore_sidecar/store/db.py",
             "part = list(keys[i : i + IN_BATCH])", "part = list(keys[i : i + IN_BATCH - 1])",
             (f"{NAMES}::test_every_message_holding_the_name_counts_past_a_batch_of_in_keys", *RECALL), by=BY),
    # A message holding one of two names gets the whole leg.
    # Survived the first run; real (a share per name held): test_a_text_holding_both_names_asked_for_outranks_one_holding_one.
    Mutation("r8-messages-count-as-any", RECORDS,
             "return {r[0]: r[1] for r in rows if r[1]}", "return {r[0]: len(names) for r in rows if r[1]}",
             (f"{NAMES}::test_a_text_holding_both_names_asked_for_outranks_one_holding_one", *RECALL), by=BY),
    # The bonus subtracted: a message naming the thing ranks lower.
    Mutation("r8-bonus-subtracted", RECALLER,
             "score += self._name_bonus(naming[c.key] / len(named))", "score -= self._name_bonus(naming[c.key] / len(named))",
             RECALL, by=BY),
    # Chunks: each name held is a whole leg (not a share).
    # Survived the first run; real (chunks: a share per name, one leg at most): test_a_workspace_chunk_gains_a_share_of_one_leg_per_name_it_holds_as_written.
    Mutation("r8-files-not-shared-by-names", RECALLER,
             'score += self._name_bonus(sum(n in row["text"] for n in named) / len(named))',
             'score += self._name_bonus(sum(n in row["text"] for n in named))',
             (f"{NAMES}::test_a_workspace_chunk_gains_a_share_of_one_leg_per_name_it_holds_as_written", *RECALL), by=BY),
    # Chunks never get the bonus.
    # Survived the first run (no test recalled files with a name); real: test_a_workspace_chunk_gains_a_share_of_one_leg_per_name_it_holds_as_written.
    Mutation("r8-files-branch-gone", RECALLER,
             'elif c.kind == "files" and named:', "elif False:",
             (f"{NAMES}::test_a_workspace_chunk_gains_a_share_of_one_leg_per_name_it_holds_as_written", *RECALL), by=BY),
    # The second (deferred dense) ranking pass forgets the names.
    # Survived the first run (the names test asks for one hit: a full page, no second pass); real: test_a_page_the_words_cannot_fill_still_puts_the_name_first.
    Mutation("r8-second-pass-forgets-names", RECALLER,
             # (re-expressed on 2026-12-07 after branch `fast` gave _rank a `reads` argument; same bug)
             "                    scored = self._rank(cands, as_of, chunk_rows, when, told, fade, asked_at, named, reads)",
             "                    scored = self._rank(cands, as_of, chunk_rows, when, told, fade, asked_at, (), reads)",
             (f"{NAMES}::test_a_page_the_words_cannot_fill_still_puts_the_name_first", NAMES, DENSE), by=BY),
    # The query lowered before its names are read: camelCase/PascalCase lost, snake_case kept.
    # Survived the first run (parseConfig's text was first by its words alone, the lowercased token `parseconfig`); real: test_a_camel_case_name_is_held_only_as_written_not_in_another_case.
    Mutation("r8-names-of-the-lowered-query", RECALLER,
             "named = q.identifiers(query)", "named = q.identifiers(query.lower())",
             (f"{NAMES}::test_a_camel_case_name_is_held_only_as_written_not_in_another_case", *RECALL), by=BY),
]
