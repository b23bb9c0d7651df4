"""Redis for the shared-state tests (GW-19): a reachable server or a skip that names it.

Redis is the local server (`NERVE_TEST_REDIS_URL`, default redis://127.0.0.1:6379/15). Each test
gets a key prefix of its own, and its keys are deleted afterwards. When the server cannot be
reached the Redis tests are skipped, except in CI (`CI=true`), where that is a failure.

    redis_url      the server's URL (session)
    redis_prefix   a fresh key prefix, cleaned up after the test
    redis_client   redis_client() → a redis.asyncio client (decode_responses), closed afterwards
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from contextlib import AsyncExitStack
from typing import Any

import pytest

DEFAULT_URL = "redis://127.0.0.1:6379/15"


@pytest.fixture(scope="session")
def redis_url() -> str:
    url = os.environ.get("NERVE_TEST_REDIS_URL", DEFAULT_URL)
    try:
        import redis

        with redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2) as client:
            client.ping()
    except Exception as exc:  # refused, timed out, not installed: all "unreachable"
        reason = f"Redis is not reachable at {url} ({type(exc).__name__}: {exc})"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; CI must run the Redis tests", pytrace=False)
        pytest.skip(f"{reason}; start redis-server or set NERVE_TEST_REDIS_URL")
    return url


@pytest.fixture
def redis_prefix(redis_url: str) -> Iterator[str]:
    import redis

    prefix = f"nerve-test:{uuid.uuid4().hex[:12]}:"
    yield prefix
    with redis.Redis.from_url(redis_url) as client:
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            client.delete(*keys)


@pytest.fixture
def redis_client(redis_url: str, closing: AsyncExitStack) -> Callable[..., Any]:
    from redis.asyncio import Redis

    def make(url: str = redis_url) -> Redis:
        client = Redis.from_url(url, decode_responses=True, socket_timeout=2)
        closing.push_async_callback(client.aclose)
        return client

    return make
