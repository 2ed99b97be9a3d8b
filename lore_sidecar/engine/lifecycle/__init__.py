"""Session lifecycle: start, prompt submit and end, and the blocks injected into prompts."""
