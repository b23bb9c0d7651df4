"""429 cooldowns and Retry-After parsing (SPEC GW-8, GW-19), driven by a ManualClock.

Every cooldown scenario runs against each implementation of `CooldownsSeam`
(implementations.py): the in-process `Cooldowns` and its Redis twin, same assertions.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from nerve.gateway.resilience import ManualClock, parse_retry_after
from tests.gateway.implementations import IMPLEMENTATIONS, implementation

NOW = datetime(2015, 10, 21, 7, 27, 30, tzinfo=UTC)
Make = Callable[..., Any]


@pytest.fixture(params=IMPLEMENTATIONS)
def make(request: pytest.FixtureRequest, clock: ManualClock) -> Make:
    return implementation(request, clock, "cooldowns")


@pytest.mark.parametrize(
    ("header", "seconds"),
    [("7", 7.0), ("0", 0.0), (" 120 ", 120.0), ("1.5", 1.5), (".5", 0.5)],
)
def test_retry_after_reads_delta_seconds(header: str, seconds: float) -> None:
    """GW-8: Retry-After as delta-seconds, fractions tolerated."""
    assert parse_retry_after(header) == seconds


@pytest.mark.parametrize(
    "header",
    [
        "Wed, 21 Oct 2015 07:28:00 GMT",  # IMF-fixdate
        "Wednesday, 21-Oct-15 07:28:00 GMT",  # obsolete RFC 850
        "Wed Oct 21 07:28:00 2015",  # obsolete asctime, no zone: UTC
    ],
)
def test_retry_after_reads_an_http_date_in_every_form(header: str) -> None:
    """GW-8: Retry-After as an HTTP-date (RFC 9110) is the time left until that date."""
    assert parse_retry_after(header, now=NOW) == 30.0


def test_retry_after_in_the_past_means_retry_now() -> None:
    """GW-8: a date already gone gives 0, never a negative wait."""
    assert parse_retry_after("Wed, 21 Oct 2015 07:00:00 GMT", now=NOW) == 0.0


@pytest.mark.parametrize(
    "header", [None, "", "   ", "-5", "soon", "1e3", "inf", "nan", "7 seconds", "Wed, 32 Oct 2015"]
)
def test_retry_after_gives_none_for_garbage_and_negatives(header: str | None) -> None:
    """GW-8: an unusable header means "use the default cooldown", never an exception."""
    assert parse_retry_after(header, now=NOW) is None


async def test_a_cooled_key_rests_for_the_given_seconds_then_expires(
    make: Make, clock: ManualClock
) -> None:
    """GW-8: the endpoint is skipped while cooling and comes back by itself."""
    cooldowns = make()
    assert await cooldowns.cool("openai/gpt-4o", 7) == 7
    clock.advance(5)
    assert await cooldowns.remaining("openai/gpt-4o") == 2
    assert await cooldowns.remaining("openai/other") == 0
    clock.advance(2)
    assert await cooldowns.remaining("openai/gpt-4o") == 0
    assert await cooldowns.view() == {}


async def test_no_retry_after_uses_the_default_and_long_ones_are_clamped(
    make: Make, clock: ManualClock
) -> None:
    """GW-8: missing Retry-After cools for the default; an absurd one is capped at the maximum."""
    cooldowns = make(default_seconds=30, max_seconds=600)
    assert await cooldowns.cool("a/x", None) == 30
    assert await cooldowns.cool("b/y", 86_400) == 600
    assert await cooldowns.cool("c/z", -3) == 0
    assert await cooldowns.remaining("c/z") == 0
    assert await cooldowns.view() == {"a/x": 30, "b/y": 600}
    clock.advance(10)
    assert await cooldowns.view() == {"a/x": 20, "b/y": 590}


async def test_a_shorter_retry_after_does_not_cut_a_running_cooldown(
    make: Make, clock: ManualClock
) -> None:
    """GW-8: two 429s racing each other: the longer rest wins and is what cool() reports."""
    cooldowns = make()
    await cooldowns.cool("a/x", 60)
    clock.advance(10)
    assert await cooldowns.cool("a/x", 5) == 50
    assert await cooldowns.cool("a/x", 80) == 80
    assert await cooldowns.remaining("a/x") == 80
    clock.advance(80)
    assert await cooldowns.remaining("a/x") == 0


async def test_the_view_lists_only_cooling_keys_and_is_json_ready(
    make: Make, clock: ManualClock
) -> None:
    """GW-13: cooldowns appear in /stats with seconds remaining."""
    cooldowns = make()
    await cooldowns.cool("a/x", 10)
    await cooldowns.cool("b/y", 40)
    clock.advance(20)
    assert json.loads(json.dumps(await cooldowns.view())) == {"b/y": 20}
