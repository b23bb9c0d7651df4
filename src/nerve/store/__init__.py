"""The database under every store: `storage.url`, its connections and the one schema.

Memory, the agent registry, jobs, keys, the ledger and the event log all live in one database
(SQLite by default, PostgreSQL at scale); this package opens it and migrates it, and knows
nothing of what the tables mean to their owners.
"""
