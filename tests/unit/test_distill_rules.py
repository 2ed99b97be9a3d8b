"""Segment rendering and the extractive distiller (pure rules)."""

from __future__ import annotations

from lore_sidecar.engine.memory.distill import (
    Turn,
    annotate_tool_output,
    extractive_observations,
    render_segment,
)

LONG = "\n".join(
    [f"collecting item {i} from src/pkg/module_{i % 7}.py" for i in range(300)]
    + ["Traceback (most recent call last):", '  File "src/export/writer.py", line 88, in flush',
       "PermissionError: [Errno 13] Permission denied: '/var/exports/nightly.csv'"]
)


def test_long_tool_output_keeps_line_count_errors_and_paths():
    out = annotate_tool_output(LONG, limit=4000)
    assert len(out) < 2500 and "303 lines" in out
    assert "PermissionError: [Errno 13] Permission denied" in out
    assert "src/export/writer.py" in out and "src/pkg/module_3.py" in out
    assert annotate_tool_output("short output", limit=4000) == "short output"  # control


def test_rendering_redacts_before_anything_leaves():
    turns = [
        Turn("user", "deploy with AWS key AKIAZ7QX2JNV4TPLM3RD please", "2026-11-30T10:00:00Z"),
        Turn("tool", LONG, tool_name="bash"),
    ]
    text = render_segment(turns)
    assert "AKIAZ7QX2JNV4TPLM3RD" not in text and "[REDACTED:aws-access-key]" in text
    assert text.startswith("[2026-11-30T10:00:00Z] user:") and "tool bash:" in text


def test_the_extractive_distiller_keeps_what_summaries_lose():
    turns = [
        Turn("user", "The nightly export fails again. Can you look?"),
        Turn("assistant", "[tool call bash] {\"command\": \"pytest tests/test_export.py -x\"}"),
        Turn("tool", LONG, tool_name="bash"),
        Turn("assistant", "The root cause is the export-writer role; we decided to grant s3:PutObject instead of widening the bucket policy."),
        Turn("user", "thanks, sounds good"),
    ]
    obs = extractive_observations(turns)
    text = "\n".join(obs)
    assert any("(command" in o and "tests/test_export.py" in o for o in obs)
    assert "Permission denied: '/var/exports/nightly.csv'" in text
    assert any("decision" in o and "s3:PutObject" in o for o in obs)
    assert "sounds good" not in text  # chit-chat is not an observation
    assert extractive_observations(turns) == obs  # deterministic
