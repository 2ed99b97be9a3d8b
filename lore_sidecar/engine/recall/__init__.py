"""Recall: hybrid search over every tier, fusion and ranking rules, reading what a hit points at."""
