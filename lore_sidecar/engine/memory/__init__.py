"""Memory: distillation, curated knowledge nodes, entities and the .lore.md exchange."""
