"""Indexing: the writer's thread that carries the record's outbox into Tantivy and usearch."""
