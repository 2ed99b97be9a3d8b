"""The LoCoMo harness runs end to end on a tiny conversation in LoCoMo's shape (written
here, not copied from the dataset), so it cannot rot; the real figures are in
docs/benchmarks.md."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import ROOT

SAMPLE = [
    {
        "sample_id": "tiny-1",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "10:00 am on 3 March, 2024",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": "I finally adopted a greyhound named Pixel!"},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "Congratulations! How is she settling in?"},
                {"speaker": "Ana", "dia_id": "D1:3", "text": "She sleeps all day on the blue sofa."},
            ],
            "session_2_date_time": "6:30 pm on 9 April, 2024",
            "session_2": [
                {"speaker": "Ben", "dia_id": "D2:1", "text": "I started rock climbing at the indoor gym."},
                {"speaker": "Ana", "dia_id": "D2:2", "text": "Climbing sounds fun, which gym?", "blip_caption": "a photo of a climbing wall"},
            ],
        },
        "qa": [
            {"question": "What is the name of Ana's greyhound?", "answer": "Pixel", "evidence": ["D1:1"], "category": 1},
            {"question": "Where does the dog sleep?", "answer": "the blue sofa", "evidence": ["D1:3"], "category": 4},
            {"question": "What sport did Ben start?", "answer": "rock climbing", "evidence": ["D2:1"], "category": 4},
            {"question": "No evidence here", "answer": "", "evidence": [], "category": 5},
        ],
    }
]


def test_locomo_harness_smoke(tmp_path):
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps(SAMPLE))
    out = tmp_path / "locomo.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "locomo.py"), "--data", str(data), "--out", str(out)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(out.read_text())
    assert result["data"] == {"conversations": 1, "turns": 5, "questions": 3}
    assert set(result["systems"]) == {"lore-sidecar hybrid", "lore-sidecar lexical", "SQLite FTS5", "bm25s"}
    ours = result["systems"]["lore-sidecar hybrid"]["overall"]
    assert ours["R@1"] == 1.0 and ours["n"] == 3  # three easy questions, each answered first
    assert "lore-sidecar hybrid" in proc.stdout  # the table is printed
