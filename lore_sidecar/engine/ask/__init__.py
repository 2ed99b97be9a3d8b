"""Codebase questions (`lore/ask`): read-only, path-jailed tools over a project, and the
answer - from a model that uses them when a key is set, else plainly from retrieval."""
