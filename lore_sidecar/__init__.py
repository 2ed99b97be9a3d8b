"""lore-sidecar: a memory engine for AI coding agents and editors."""

__version__ = "0.1.0"
PROTOCOL_VERSION = 1
