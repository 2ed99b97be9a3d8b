"""A team's memory on PostgreSQL: one shared, ordered record of knowledge and fact operations
that every machine replays into its own store and indexes.

PostgreSQL holds the operation log (`lore_ops`, a monotonic `seq`) and the little state it
needs to arbitrate concurrent writers (`lore_nodes`: each live node's version, priority and
scope, per team). A write is validated and appended in one transaction under a per-project
advisory lock — `expectedVersion`, unique URIs and the priority budget are checked there, so
two people cannot both take the last priority-0 slot — and then applied locally in log order.
Each machine's writer pulls the log by `seq` (woken by LISTEN/NOTIFY) and applies what others
wrote through the same code that applies a follower's spool, exactly once per operation id.
Reads never leave the machine. Conversations stay local.
"""
