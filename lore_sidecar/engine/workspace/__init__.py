"""Workspace: walking, chunking and indexing the project's files."""
