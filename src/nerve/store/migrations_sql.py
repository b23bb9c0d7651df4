"""The schema's text: the ordered `Migration` lists of SQLite and PostgreSQL.

store/migrations.py applies them. To change the schema, append a `Migration` to both lists
(never edit an applied one) and keep the two backends' tables equivalent: the same test suite
runs on both. `{name}` and `{real}` in a shared statement are the key and float column types:
TEXT and REAL on SQLite; TEXT COLLATE "C" (byte order, as SQLite compares) and DOUBLE
PRECISION on PostgreSQL.

Every records index ends in `created_at, id`, the full "newest first" order: a filtered query
reads its own index in order, with no sort, and SQLite's planner (which has no statistics until
`PRAGMA optimize` runs) picks the most selective index instead of the one that alone avoids
a sort.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["POSTGRES", "SQLITE", "Migration"]


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    statements: tuple[str, ...]


_INDEXES = (
    "CREATE INDEX records_user_created ON records (user_id, created_at, id)",
    "CREATE INDEX records_user_intent ON records (user_id, intent, created_at, id)",
    "CREATE INDEX records_user_tier ON records (user_id, tier, created_at, id)",
    "CREATE INDEX records_user_kind ON records (user_id, kind, created_at, id)",
    "CREATE INDEX records_user_session ON records (user_id, session_id, created_at, id)",
    "CREATE INDEX fact_history_key"
    " ON fact_history (user_id, entity_key, attribute_key, changed_at)",
)

# The agent registry (nerve.agents) shares the database and its schema version. capabilities is
# a JSON array as text on both backends; the registry is small and filtered in Python.
_AGENTS = """CREATE TABLE agents (
    agent_name {name} PRIMARY KEY,
    endpoint TEXT NOT NULL,
    capabilities TEXT NOT NULL,
    created_at {real} NOT NULL,
    updated_at {real} NOT NULL
)"""

# The scheduler (nerve.assistant.jobs): reminders and cron jobs, and the last mail UID seen per
# account. due_at is when the pending firing is due; next_run when a scheduler should act on it
# (due_at, or the end of a claim's lease): replicas claim a firing by compare-and-set on next_run.
_JOBS = (
    """CREATE TABLE jobs (
    id {name} PRIMARY KEY,
    user_id TEXT NOT NULL,
    channel TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    text TEXT NOT NULL,
    mode TEXT NOT NULL,
    cron TEXT,
    due_at {real} NOT NULL,
    next_run {real} NOT NULL,
    claimed_by TEXT,
    created_at {real} NOT NULL
)""",
    "CREATE INDEX jobs_next_run ON jobs (next_run)",
    "CREATE INDEX jobs_user ON jobs (user_id, created_at)",
    """CREATE TABLE mail_seen (
    account {name} PRIMARY KEY,
    uidvalidity BIGINT NOT NULL,
    last_uid BIGINT NOT NULL,
    updated_at {real} NOT NULL
)""",
)

# Migration 4: what changed in memory, per user, so any process's search cache can prove itself
# fresh (nerve.memory.cache). Every write transaction adds 1 to the version of each user it
# writes (user_versions; the row lock orders PostgreSQL's concurrent writers of one user), stamps
# the records it writes with it, and leaves a tombstone per record it deletes (record_id NULL:
# every record of the user). Tombstones are kept a day (TOMBSTONE_SECONDS in nerve.memory.codec).
_VERSIONS = (
    "ALTER TABLE records ADD COLUMN version BIGINT NOT NULL DEFAULT 0",
    "CREATE INDEX records_user_version ON records (user_id, version, id)",
    "CREATE TABLE user_versions (user_id TEXT NOT NULL PRIMARY KEY, version BIGINT NOT NULL)",
    "CREATE TABLE tombstones (user_id TEXT NOT NULL, version BIGINT NOT NULL, record_id TEXT,"
    " at {real} NOT NULL)",
    "CREATE INDEX tombstones_user ON tombstones (user_id, version)",
    "CREATE INDEX tombstones_at ON tombstones (at)",
)
_VERSIONS_SQLITE = tuple(q.format(real="REAL") for q in _VERSIONS)
_VERSIONS_POSTGRES = tuple(q.format(real="DOUBLE PRECISION") for q in _VERSIONS)

# Migration 5: the jobs' delivery states and the web chat outbox (nerve.assistant.jobs,
# nerve.channels.outbox). {name}/{real} as in _JOBS. A job's states need no new column
# (pending: claimed_by NULL; claimed: owner + lease end in next_run; delivered: deleted or moved
# to its next time). outbox: messages for chats with no socket open, kept until one connects
# anywhere; claimed_by/claimed_until is the lease of the process sending one.
_DELIVERY: tuple[str, ...] = (
    """CREATE TABLE outbox (
    id {name} PRIMARY KEY,
    channel TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at {real} NOT NULL,
    claimed_by TEXT,
    claimed_until {real} NOT NULL DEFAULT 0
)""",
    "CREATE INDEX outbox_chat ON outbox (channel, chat_id, created_at, id)",
)

# Migration 6: admin sessions (nerve.admin.store) and the shared event log (nerve.events.table).
# admin_state has one row (id 1): the session signing secret and the stored password's scrypt
# salt/hash (hex; NULL while $NERVE_ADMIN_PASSWORD is used). admin_revoked: logged-out session
# ids until they would have expired. {name}/{real} as in _JOBS.
_ADMIN_STATE: tuple[str, ...] = (
    """CREATE TABLE admin_state (
    id INTEGER PRIMARY KEY,
    secret TEXT NOT NULL,
    password_salt TEXT,
    password_hash TEXT,
    created_at {real} NOT NULL
)""",
    """CREATE TABLE admin_revoked (
    sid {name} PRIMARY KEY,
    expires_at {real} NOT NULL
)""",
    "CREATE INDEX admin_revoked_expires ON admin_revoked (expires_at)",
)
# Managed API keys (nerve.access.keystore): the key's SHA-256 (hex), its last 4 characters and
# its policy (JSON: routes, models, users, rpm, tpm, max_parallel, budget). access_ledger: what
# each key used and holds per window: "usd:<period start>" or "tpm:<minute start>".
_ACCESS: tuple[str, ...] = (
    """CREATE TABLE access_keys (
    name {name} PRIMARY KEY,
    digest {name} NOT NULL UNIQUE,
    hint TEXT NOT NULL,
    policy TEXT NOT NULL,
    created_at {real} NOT NULL,
    revoked_at {real}
)""",
    """CREATE TABLE access_ledger (
    key {name} NOT NULL,
    win {name} NOT NULL,
    used {real} NOT NULL DEFAULT 0,
    held {real} NOT NULL DEFAULT 0,
    expires_at {real},
    PRIMARY KEY (key, win)
)""",
)
# PostgreSQL only: with SQLite every process that can open the database is on one machine and
# shares the JSONL event log beside it (nerve.events.jsonl). body: the event's JSON but its seq.
_EVENT_LOG_POSTGRES = (
    """CREATE TABLE event_log (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at DOUBLE PRECISION NOT NULL,
    kind TEXT NOT NULL,
    body TEXT NOT NULL
)""",
    "CREATE INDEX event_log_kind ON event_log (kind, seq)",
    "CREATE INDEX event_log_at ON event_log (at)",
)

# Migration 8: the admin charts' minutes summed over replicas (gateway/timeseries_sql.py): one
# row per (minute, "all"/"route"/"model", name, counter or "h<bin>"), added to by upserts.
_TIMESERIES = (
    "CREATE TABLE timeseries (minute BIGINT NOT NULL, scope {name} NOT NULL, name {name} NOT NULL,"
    " field {name} NOT NULL, v {real} NOT NULL, PRIMARY KEY (minute, scope, name, field))"
)

# Migration 9: the gateway's exact-match response cache without Redis (gateway/cache_store.py):
# one row per cache key (a SHA-256, hex), the encoded entry and when it expires; rows past it
# are never read and are deleted by later writes (the index finds them).
_RESPONSE_CACHE = (
    "CREATE TABLE response_cache (key {name} PRIMARY KEY, value {blob} NOT NULL,"
    " expires_at {real} NOT NULL)",
    "CREATE INDEX response_cache_expires ON response_cache (expires_at)",
)

SQLITE: list[Migration] = [
    Migration(
        1,
        "records and fact history",
        (
            """CREATE TABLE records (
                id TEXT PRIMARY KEY,
                user_id TEXT NOT NULL,
                tier TEXT NOT NULL,
                kind TEXT NOT NULL,
                intent TEXT NOT NULL,
                language TEXT,
                session_id TEXT,
                data TEXT NOT NULL,
                text TEXT NOT NULL,
                importance REAL NOT NULL,
                created_at REAL NOT NULL,
                updated_at REAL NOT NULL,
                accessed_at REAL NOT NULL DEFAULT 0,
                access_count INTEGER NOT NULL DEFAULT 0
            )""",
            # entity_key/attribute_key: trimmed and case-folded in Python, as fact_id does.
            """CREATE TABLE fact_history (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                user_id TEXT NOT NULL,
                entity TEXT NOT NULL,
                attribute TEXT NOT NULL,
                entity_key TEXT NOT NULL,
                attribute_key TEXT NOT NULL,
                value TEXT NOT NULL,
                session_id TEXT,
                changed_at REAL NOT NULL
            )""",
            *_INDEXES,
        ),
    ),
    Migration(2, "agent registry", (_AGENTS.format(name="TEXT", real="REAL"),)),
    Migration(3, "jobs and mail", tuple(q.format(name="TEXT", real="REAL") for q in _JOBS)),
    Migration(4, "memory change versions", _VERSIONS_SQLITE),
    Migration(
        5,
        "job deliveries and web outbox",
        tuple(q.format(name="TEXT", real="REAL") for q in _DELIVERY),
    ),
    Migration(
        6,
        "admin sessions and events",
        tuple(q.format(name="TEXT", real="REAL") for q in _ADMIN_STATE),
    ),
    Migration(7, "api keys and spend", tuple(q.format(name="TEXT", real="REAL") for q in _ACCESS)),
    Migration(8, "chart minutes", (_TIMESERIES.format(name="TEXT", real="REAL"),)),
    Migration(
        9,
        "response cache",
        tuple(q.format(name="TEXT", blob="BLOB", real="REAL") for q in _RESPONSE_CACHE),
    ),
]

# `json`, not `jsonb`: jsonb rewrites numbers (the float 1e16 comes back as the int 10**16) and
# reorders keys, so records would not round-trip exactly nor match SQLite. Nothing queries
# inside `data`; if that changes, add a jsonb column or an expression index in a migration.
POSTGRES: list[Migration] = [
    Migration(
        1,
        "records and fact history",
        (
            # id in byte order, as SQLite compares it: ties on created_at and the keyset of
            # `scan` order the same way whatever the database's collation.
            """CREATE TABLE records (
                id TEXT COLLATE "C" PRIMARY KEY,
                user_id TEXT NOT NULL,
                tier TEXT NOT NULL,
                kind TEXT NOT NULL,
                intent TEXT NOT NULL,
                language TEXT,
                session_id TEXT,
                data JSON NOT NULL,
                text TEXT NOT NULL,
                importance DOUBLE PRECISION NOT NULL,
                created_at DOUBLE PRECISION NOT NULL,
                updated_at DOUBLE PRECISION NOT NULL,
                accessed_at DOUBLE PRECISION NOT NULL DEFAULT 0,
                access_count BIGINT NOT NULL DEFAULT 0
            )""",
            """CREATE TABLE fact_history (
                seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                user_id TEXT NOT NULL,
                entity TEXT NOT NULL,
                attribute TEXT NOT NULL,
                entity_key TEXT NOT NULL,
                attribute_key TEXT NOT NULL,
                value TEXT NOT NULL,
                session_id TEXT,
                changed_at DOUBLE PRECISION NOT NULL
            )""",
            *_INDEXES,
        ),
    ),
    Migration(
        2, "agent registry", (_AGENTS.format(name='TEXT COLLATE "C"', real="DOUBLE PRECISION"),)
    ),
    Migration(
        3,
        "jobs and mail",
        tuple(q.format(name='TEXT COLLATE "C"', real="DOUBLE PRECISION") for q in _JOBS),
    ),
    Migration(4, "memory change versions", _VERSIONS_POSTGRES),
    Migration(
        5,
        "job deliveries and web outbox",
        tuple(q.format(name='TEXT COLLATE "C"', real="DOUBLE PRECISION") for q in _DELIVERY),
    ),
    Migration(
        6,
        "admin sessions and events",
        tuple(q.format(name='TEXT COLLATE "C"', real="DOUBLE PRECISION") for q in _ADMIN_STATE)
        + _EVENT_LOG_POSTGRES,
    ),
    Migration(
        7,
        "api keys and spend",
        tuple(q.format(name='TEXT COLLATE "C"', real="DOUBLE PRECISION") for q in _ACCESS),
    ),
    Migration(8, "chart minutes", (_TIMESERIES.format(name='TEXT COLLATE "C"', real="FLOAT8"),)),
    Migration(
        9,
        "response cache",
        tuple(
            q.format(name='TEXT COLLATE "C"', blob="BYTEA", real="DOUBLE PRECISION")
            for q in _RESPONSE_CACHE
        ),
    ),
]
