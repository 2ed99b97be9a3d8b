"""Memory that tends itself: decay and review, dream (consolidation with review marks and
rollback). Backups live with the store (store/backup.py)."""
