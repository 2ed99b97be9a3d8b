"""Adapters for the record (SQLite) and the derived indexes (Tantivy, usearch)."""
