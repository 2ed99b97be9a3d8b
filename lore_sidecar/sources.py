"""The memory tiers a recall can search. A leaf with no imports: the command line needs the
names on its fast path (the hook command) without loading the domain model."""

ALL_SOURCES: tuple[str, ...] = ("messages", "distillations", "knowledge", "facts", "files", "entities")
