"""Deploy fixtures: a PostgreSQL schema (tests/memory/conftest.py) and a Redis prefix
(tests/gateway/conftest.py) for the replicas of the recipe, as the other multi-process tests get
them: skipped naming the service on a machine without it, a failure under CI=true."""

from tests.gateway.conftest import redis_prefix, redis_url  # noqa: F401 - fixtures
from tests.memory.conftest import postgres_schema  # noqa: F401 - fixtures
