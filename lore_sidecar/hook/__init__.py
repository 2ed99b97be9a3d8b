"""Host hook commands (Claude Code, Codex, Copilot CLI; the Hermes provider): `command` runs per event, `daemon` stays warm
per store, `fallback` serves an event when no daemon answers; `events` is what they share."""
