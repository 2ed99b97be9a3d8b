"""Capture: turning what hosts send (messages, transcripts) into records, secrets redacted at the door."""
