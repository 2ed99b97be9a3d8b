"""The LongMemEval harness runs end to end on two tiny questions in LongMemEval's shape
(written here, not copied from the data set), so it cannot rot; the real figures are in
docs/benchmarks.md."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import ROOT


def turn(role: str, content: str, answer: bool = False) -> dict:
    return {"role": role, "content": content, "has_answer": answer}


SESSIONS = {
    "s-cat": ["I adopted a grey tabby kitten and named her Miso.", "Miso is a lovely name for a tabby!"],
    "s-bike": ["My commute bike is a blue Brompton I bought in Leeds.", "Folding bikes are great for trains."],
    "s-garden": ["The tomatoes in my garden finally ripened.", "Homegrown tomatoes taste best in a salad."],
}


def haystack(evidence: str | None) -> dict:
    """The same haystack for every question, the user's turn of `evidence` marked as the
    answer; one session listed twice, as a few haystacks do."""
    order = [("s-cat", "2024/03/01 (Fri) 10:00"), ("s-bike", "2024/03/05 (Tue) 18:30"),
             ("s-cat", "2024/03/01 (Fri) 10:00"), ("s-garden", "2024/03/09 (Sat) 09:15")]
    return {
        "haystack_session_ids": [sid for sid, _ in order],
        "haystack_dates": [date for _, date in order],
        "haystack_sessions": [[turn("user", SESSIONS[sid][0], sid == evidence), turn("assistant", SESSIONS[sid][1])]
                              for sid, _ in order],
        "answer_session_ids": [evidence] if evidence else [],
    }


QUESTIONS = [
    {"question_id": "q1", "question_type": "single-session-user", "question": "What did I name my tabby kitten?",
     "question_date": "2024/04/01 (Mon) 12:00", "answer": "Miso", **haystack("s-cat")},
    {"question_id": "q2", "question_type": "multi-session", "question": "Where did I buy my Brompton bike?",
     "question_date": "2024/04/01 (Mon) 12:00", "answer": "Leeds", **haystack("s-bike")},
    {"question_id": "q3_abs", "question_type": "multi-session", "question": "What is my dog called?",
     "question_date": "2024/04/01 (Mon) 12:00", "answer": "", **haystack(None)},
]


def test_longmemeval_harness_smoke(tmp_path):
    data = tmp_path / "tiny.jsonl"
    data.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    out = tmp_path / "lme.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "longmemeval.py"), "--data", str(data), "--out", str(out)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(out.read_text())
    # the abstention question is left out; the session listed twice counts once
    assert result["data"] == {"questions": 2, "turns": 12, "types": ["multi-session", "single-session-user"]}
    assert set(result["systems"]) == {"lore-sidecar", "SQLite FTS5", "bm25s"}
    ours = result["systems"]["lore-sidecar"]
    assert ours["overall"]["session_all@1"] == 1.0  # both easy: the evidence session first
    assert ours["overall"]["turn_all@1"] == 1.0
    assert set(ours["by_type"]) == {"multi-session", "single-session-user"}
    assert "lore-sidecar" in proc.stdout  # the table is printed
