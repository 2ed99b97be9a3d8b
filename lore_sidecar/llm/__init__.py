"""Model adapters: embedders now; the Anthropic client later (imported lazily)."""
