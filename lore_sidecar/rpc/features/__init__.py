"""The `lore/*` handlers, one module per capability (as engine/ is grouped)."""
