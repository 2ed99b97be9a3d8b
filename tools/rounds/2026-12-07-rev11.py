"""Independent review round rev11 (2026-12-07): the needle pass of redaction (one
Aho-Corasick automaton over the lower-cased text; each rule still checks its own needles;
the pass repeats after a replacement), the DigitalOcean token rule (dop_/doo_/dor_v1_),
words_first (the bound restarts while a scan writes) and never_read (tails in sets by length).

Fourteen bugs chosen from the changed code (18be155..54b489b) before any file under tests/
was opened; guarding tests chosen by file name and `grep -rl` only.

First run (`python tools/mutations.py <all 14 names>`, once; 13:48-14:12 UTC, load 4.1-7.2 on
2 shared cores; 23 min wall, nearly all of it one hung pytest): 12 of 14 caught, 1 survived,
1 error.
  caught   rev11-present-on-cased-text, rev11-rescan-on-cased-text, rev11-needleless-rules-skipped,
           rev11-folded-needles-checked-in-cased-text, rev11-sub-checks-first-needle-only,
           rev11-do-refresh-not-matched, rev11-do-oauth-needle-missing (the eight redact bugs
           finished within a minute together)
  survived rev11-needles-only-in-first-4k
  error    rev11-bound-restarts-on-any-write: tests/unit/test_words_first.py never finished
           (a wait that never returns; the pytest process slept ~22 min at 11 s of CPU); I
           killed that pytest by its pid, and the runner recorded "error -15". Not counted
           as caught: the suite hangs instead of failing.
  caught   rev11-bound-states-swapped (words_first), and the four never_read bugs
           rev11-tail-at-root-skipped, rev11-dir-tail-deepest-run-skipped,
           rev11-secret-dir-only-parent, rev11-tail-case-sensitive.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mutations import Mutation  # noqa: E402

BY = "rev11 (independent; tests unread when planted)"
REDACT = "lore_sidecar/engine/capture/redact.py"
WORDS = "lore_sidecar/engine/indexing/words_first.py"
NEVER = "lore_sidecar/engine/never_read.py"
T_REDACT = ("tests/unit/test_redact_plan.py", "tests/unit/test_redact.py", "tests/unit/test_redact_formats.py",
            "tests/unit/test_redact_boundaries.py")
T_DO = ("tests/unit/test_redact_formats.py", "tests/unit/test_redact_boundaries.py")
T_WORDS = ("tests/unit/test_words_first.py",)
T_NEVER = ("tests/unit/test_never_read.py",)

ROUND = [
    # 1. The first needle pass runs over the text as written, not its lower-cased copy: an
    #    upper-case needle ("Bearer", "AIza", "SK", "PRIVATE KEY") is missed, its rule skipped.
    Mutation("rev11-present-on-cased-text", REDACT,
             "    present = plan.present(low)\n    for rule",
             "    present = plan.present(text)\n    for rule", T_REDACT, by=BY),
    # 2. After a replacement the needles are looked up again in the cased text: a later rule
    #    whose needle is upper case ("Bearer ...") is skipped when an earlier rule replaced something.
    Mutation("rev11-rescan-on-cased-text", REDACT,
             "            text, low = out, out.lower()\n            present = plan.present(low)",
             "            text, low = out, out.lower()\n            present = plan.present(out)", T_REDACT, by=BY),
    # 3. Rules with no needles (AWS access key, AWS secret key) are skipped: an empty needle
    #    set is disjoint from every set.
    Mutation("rev11-needleless-rules-skipped", REDACT,
             "        if needles and present.isdisjoint(needles):",
             "        if present.isdisjoint(needles):", T_REDACT, by=BY),
    # SURVIVED the first run. Why: the long-text check compares redact with every rule run in
    # full on the engine's sources and on the planted corpus repeated 20 times, and every
    # needle that matters there already turns up in the first 4 KB. Not equivalent: a lone
    # secret past 4 KB of plain text is kept. New test:
    # tests/unit/test_redact_plan.py::test_a_secret_far_into_a_long_text_is_found_by_the_needle_pass
    # (rerun: caught).
    # 4. The needle pass looks only at the first 4,096 characters (the old eager bound): a
    #    secret further into a long text is left in it.
    Mutation("rev11-needles-only-in-first-4k", REDACT,
             "    present = plan.present(low)\n    for rule",
             "    present = plan.present(low[:4096])\n    for rule", T_REDACT, by=BY),
    # 5. Rule.sub checks a folded rule's needles in the text as written, not in its lower-cased
    #    copy: "Authorization: Bearer ...", "BASIC ...", "PASSWORD=..." are skipped (the folded
    #    rules' needles are lower case).
    Mutation("rev11-folded-needles-checked-in-cased-text", REDACT,
             "if not any(n in (low if self.fold else text) for n in needles):",
             "if not any(n in text for n in needles):", T_REDACT, by=BY),
    # 6. Rule.sub keeps only its first needle from the pass: a rule with several needles
    #    (assigned-secret's "token", gitlab's "gldt-", DigitalOcean's doo_/dor_) is skipped.
    Mutation("rev11-sub-checks-first-needle-only", REDACT,
             "[n for n in self.needles if n.lower() in found]",
             "[n for n in self.needles[:1] if n.lower() in found]", T_REDACT, by=BY),
    # 7. DigitalOcean's regex loses the refresh token (dor_v1_).
    Mutation("rev11-do-refresh-not-matched", REDACT,
             '"[por]_v1_[a-f0-9]{64}"',
             '"[po]_v1_[a-f0-9]{64}"', T_DO, by=BY),
    # 8. DigitalOcean's needles lose the OAuth access token (doo_v1_): the rule is skipped for it.
    Mutation("rev11-do-oauth-needle-missing", REDACT,
             'needles=("dop_v1_", "doo_v1_", "dor_v1_")',
             'needles=("dop_v1_", "dor_v1_")', T_DO, by=BY),
    # ERROR in the first run (a hang, not a failure): test_pending_writes_alone_hold_... fed
    # wait_for_words a real stream of writes lasting 3600 s, so with the bound gone it waited
    # an hour. That test now runs on the Phases clock (30 s of its own time, fails in ~3 s),
    # moved to the end of tests/unit/test_words_first.py:
    # ::test_pending_writes_alone_hold_the_following_legs_only_for_the_bound (rerun: caught;
    # the control of ::test_a_scans_last_batches_... fails too once nothing hangs before it).
    # 9. The bound restarts on any pending write, not only while a scan writes: a steady stream
    #    of writes holds the dense leg and distilling forever.
    Mutation("rev11-bound-restarts-on-any-write", WORDS,
             "        if state == SCAN_WRITING:\n",
             "        if state:\n", T_WORDS, by=BY),
    # 10. The states swapped: the scan gets the 5 s bound (the dense leg starts during a long
    #     scan again) and pending writes none.
    Mutation("rev11-bound-states-swapped", WORDS,
             "        if state == SCAN_WRITING:\n",
             "        if state == WRITES_PENDING:\n", T_WORDS, by=BY),
    # 11. A tail as long as the whole path is not looked up: `.kube/config` at the root is read.
    Mutation("rev11-tail-at-root-skipped", NEVER,
             "for n, tails in _TAILS_BY_LEN if len(parts) >= n)",
             "for n, tails in _TAILS_BY_LEN if len(parts) > n)", T_NEVER, by=BY),
    # 12. The deepest run of folders is not looked up: `.config/gcloud/active_config` is read.
    Mutation("rev11-dir-tail-deepest-run-skipped", NEVER,
             "for i in range(n, len(folders) + 1))",
             "for i in range(n, len(folders)))", T_NEVER, by=BY),
    # 13. Only the file's own folder is checked against the secret folders: `.ssh/keys/work` is read.
    Mutation("rev11-secret-dir-only-parent", NEVER,
             "if not SECRET_DIRS.isdisjoint(folders):",
             "if not SECRET_DIRS.isdisjoint(folders[-1:]):", T_NEVER, by=BY),
    # 14. The tails are looked up in the path as written, not lower-cased: `.KUBE/config` is read.
    Mutation("rev11-tail-case-sensitive", NEVER,
             "if any(tuple(parts[-n:]) in tails",
             'if any(tuple(text.split("/")[-n:]) in tails', T_NEVER, by=BY),
]
