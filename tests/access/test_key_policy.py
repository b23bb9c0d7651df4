"""Keys as objects on the gateway: `routes` and `models` limit what a key may name and where
`auto` may route it (403 naming what is not allowed); `rpm` and `max_parallel` are the key's
own limits (429 naming which)."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import make_config
from tests.fakes.upstream import Reply

URL = "/v1/chat/completions"
MSG = [{"role": "user", "content": "hello there"}]
CODE_MSG = [{"role": "user", "content": "fix this python traceback in my function"}]
KEYS = [
    {"name": "ci", "key": "ci-key-0001", "routes": ["code"]},
    {"name": "second-only", "key": "second-key-0001", "models": ["secondary/*"]},
    {"name": "slow", "key": "rpm-key-0001", "rpm": 2},
    {"name": "one", "key": "par-key-0001", "max_parallel": 1},
    "full-access-key",
]


@pytest.fixture
def server(serve, upstream, upstream2):
    routes = [
        {"name": "default", "model": {"provider": "primary", "model": "m1"},
         "fallbacks": [{"provider": "secondary", "model": "m2"}]},
        {"name": "code", "rules": [r"\bpython\b"],
         "model": {"provider": "secondary", "model": "m2"}},
    ]  # fmt: skip
    config = make_config(
        {"primary": upstream, "secondary": upstream2}, routes,
        server={"api_keys": KEYS}, probes={"interval_seconds": 0},
    )  # fmt: skip
    return serve(config)


def chat(server, key: str, model: str = "auto", messages=MSG, **extra):
    body = {"model": model, "messages": messages, **extra}
    headers = {"authorization": f"Bearer {key}"}
    return httpx.post(f"{server.url}{URL}", json=body, headers=headers, timeout=10)


def error(r: httpx.Response) -> dict:
    return r.json()["error"]


def test_a_key_limited_to_routes_is_refused_any_other_and_auto_stays_inside(server, upstream):
    refused = chat(server, "ci-key-0001", "default")
    assert refused.status_code == 403
    assert error(refused)["code"] == "route_not_allowed"
    assert "'default'" in error(refused)["message"] and "code" in error(refused)["message"]
    assert chat(server, "ci-key-0001", "code").status_code == 200
    # auto would pick `default` for small talk; this key may only use `code`.
    auto = chat(server, "ci-key-0001", "auto")
    assert auto.status_code == 200 and auto.headers["x-nerve-route"] == "code"
    assert upstream.requests == [], "the key's calls never reached the route it may not use"


def test_a_key_limited_to_routes_may_name_only_their_models(server):
    refused = chat(server, "ci-key-0001", "primary/m1")
    assert refused.status_code == 403 and error(refused)["code"] == "model_not_allowed"
    assert chat(server, "ci-key-0001", "secondary/m2").status_code == 200


def test_a_key_limited_to_models_skips_the_others_and_refuses_when_none_is_left(server, upstream):
    served = chat(server, "second-key-0001", "default")
    assert served.status_code == 200
    assert served.headers["x-nerve-provider"] == "secondary"
    assert upstream.requests == []
    refused = chat(server, "second-key-0001", "primary/m1")
    assert refused.status_code == 403 and error(refused)["code"] == "model_not_allowed"
    assert "primary/m1" in error(refused)["message"]


def test_a_full_access_key_may_use_everything(server):
    assert chat(server, "full-access-key", "default").status_code == 200
    assert chat(server, "full-access-key", "primary/m1").status_code == 200


def test_rpm_is_the_keys_own_limit_and_the_429_names_it(server, clock):
    assert [chat(server, "rpm-key-0001").status_code for _ in range(2)] == [200, 200]
    refused = chat(server, "rpm-key-0001")
    assert refused.status_code == 429 and error(refused)["code"] == "rpm"
    assert int(refused.headers["retry-after"]) > 1
    assert chat(server, "full-access-key").status_code == 200, "other keys are not affected"
    clock.advance(61)
    assert chat(server, "rpm-key-0001").status_code == 200


def test_max_parallel_counts_the_keys_requests_in_flight(server, upstream):
    upstream.script(Reply(chunks=["a", "b"], gate_after=1))
    body = {"model": "default", "stream": True, "messages": MSG}
    headers = {"authorization": "Bearer par-key-0001"}
    with httpx.stream("POST", f"{server.url}{URL}", json=body, headers=headers, timeout=10) as held:
        lines = held.iter_lines()
        next(lines)  # the first stream is in flight
        refused = chat(server, "par-key-0001")
        assert refused.status_code == 429 and error(refused)["code"] == "max_parallel"
        upstream.release()
        assert [line for line in lines if line][-1] == "data: [DONE]"
    assert chat(server, "par-key-0001").status_code == 200


@pytest.fixture
def budgeted(serve, upstream):
    keys = [{"name": "ci", "key": "budget-key-0001", "budget": {"usd": 0.05, "period": "day"}}]
    config = make_config(
        {"primary": upstream}, server={"api_keys": keys}, probes={"interval_seconds": 0},
        prices={"primary/m1": {"input": 1000, "output": 1000}},  # $0.001 per token
    )  # fmt: skip
    return serve(config)


def test_a_budget_refuses_the_call_that_would_pass_it_and_resets_at_the_calendar_day(
    budgeted, upstream, clock
):
    """Each call reserves ~23 tokens ($0.023) and is billed the 18 the upstream reports."""
    key = "budget-key-0001"
    statuses = [chat(budgeted, key, "default", max_tokens=10).status_code for _ in range(2)]
    assert statuses == [200, 200]  # $0.036 spent
    refused = chat(budgeted, key, "default", max_tokens=10)
    assert refused.status_code == 429 and error(refused)["code"] == "budget_exceeded"
    assert "resets at 1970-01-02T00:00:00Z" in error(refused)["message"]
    assert len(upstream.requests) == 2, "the refused call never reached the upstream"
    clock.advance(86_400)
    assert chat(budgeted, key, "default", max_tokens=10).status_code == 200


def test_a_streamed_call_is_billed_the_usage_the_stream_reported(budgeted, upstream):
    key = "budget-key-0001"
    body = {"model": "default", "stream": True, "max_tokens": 10, "messages": MSG}
    headers = {"authorization": f"Bearer {key}"}
    for _ in range(2):
        with httpx.stream(
            "POST", f"{budgeted.url}{URL}", json=body, headers=headers, timeout=10
        ) as r:
            assert r.status_code == 200
            assert [line for line in r.iter_lines() if line][-1] == "data: [DONE]"
    refused = chat(budgeted, key, "default", max_tokens=10)
    assert refused.status_code == 429 and error(refused)["code"] == "budget_exceeded"


def test_a_budgeted_key_may_not_use_a_model_without_a_price(budgeted):
    refused = chat(budgeted, "budget-key-0001", "primary/unpriced")
    assert refused.status_code == 403 and error(refused)["code"] == "unpriced_model"


def test_stats_show_spend_per_key_and_user_and_the_budget_left_never_the_key(budgeted):
    key = "budget-key-0001"
    for user in ("asha", "ravi"):
        assert chat(budgeted, key, "default", max_tokens=10, user=user).status_code == 200
    r = httpx.get(f"{budgeted.url}/stats", headers={"authorization": f"Bearer {key}"})
    stats = r.json()
    assert key not in r.text
    assert stats["by_key"]["ci"]["calls"] == 2
    assert stats["by_key"]["ci"]["cost_usd"] == pytest.approx(0.036)
    assert {u: s["calls"] for u, s in stats["by_user"].items()} == {"asha": 1, "ravi": 1}
    (budget,) = stats["budgets"]
    assert (budget["key"], budget["period"], budget["budget_usd"]) == ("ci", "day", 0.05)
    assert budget["usd"] == pytest.approx(0.036) and budget["held_usd"] == 0
    assert budget["left_usd"] == pytest.approx(0.014)


def test_a_key_limited_to_users_is_counted_for_them_and_refused_for_others(serve, upstream):
    keys = [{"name": "bot", "key": "users-key-0001", "users": ["ci-bot"]}]
    server = serve(make_config({"primary": upstream}, server={"api_keys": keys}))
    refused = chat(server, "users-key-0001", "default", user="asha")
    assert refused.status_code == 403 and error(refused)["code"] == "user_not_allowed"
    assert chat(server, "users-key-0001", "default").status_code == 200
    stats = httpx.get(f"{server.url}/stats", headers={"authorization": "Bearer users-key-0001"})
    assert list(stats.json()["by_user"]) == ["ci-bot"]
    assert len(upstream.requests) == 1
