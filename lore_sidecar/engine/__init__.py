"""Pure domain logic. Never imports pygls, lsprotocol, anthropic, tantivy, usearch or sqlite3."""
