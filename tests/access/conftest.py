"""Access fixtures: `backend`/`storage_url` (tests/memory/conftest.py), so the tests of the key
store run on SQLite and on PostgreSQL as memory's do."""

from tests.memory.conftest import backend, postgres_schema, storage_url  # noqa: F401 - fixtures
