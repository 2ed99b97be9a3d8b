"""The one write path: the writer applies, a follower spools, the writer drains the spool."""
