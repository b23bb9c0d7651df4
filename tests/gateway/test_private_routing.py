"""Private requests stay on local providers (SPEC GW-5, TP-3): chosen by the x-nerve-private
header (`Gateway.plan(..., private=True)`) or by personal data in any message; a named target
that is not local is refused rather than sent."""

from __future__ import annotations

from typing import Any

import pytest

from nerve.access.principal import Principal
from nerve.config import parse_config
from nerve.errors import Forbidden
from nerve.gateway.app import GatewayState
from nerve.gateway.core import wants_private
from nerve.gateway.router.pii import find_pii, luhn_ok, verhoeff_ok

CLOUD = {"name": "cloud", "base_url": "http://127.0.0.1:9/v1", "api_key": "sk-x"}
LOCAL = {"name": "local", "base_url": "http://127.0.0.1:9/v1", "local": True}
ROUTES: list[dict[str, Any]] = [
    {"name": "private", "when": {"task": "private"},
     "model": {"provider": "local", "model": "llama"}},
    {"name": "code", "rules": [r"\bpython\b"], "model": {"provider": "cloud", "model": "coder"},
     "fallbacks": [{"provider": "local", "model": "qwen-coder"}]},
    {"name": "default", "model": {"provider": "cloud", "model": "general"}},
]  # fmt: skip
AADHAAR = "2345 6789 0124"  # valid Verhoeff check digit
CARD = "4111 1111 1111 1111"  # the Visa test number: valid Luhn sum
ALL = ("email", "phone", "aadhaar", "pan", "card")


def config(routes: list[dict[str, Any]] = ROUTES) -> Any:
    return parse_config({"providers": [CLOUD, LOCAL], "routes": routes}, environ={})


@pytest.fixture
async def gateway():
    state = GatewayState(config())
    await state.open()
    yield state.gateway
    await state.close()


def body(text: str, model: str = "auto", **extra: Any) -> dict[str, Any]:
    return {"model": model, "messages": [{"role": "user", "content": text}], **extra}


def targets(plan: Any) -> list[str]:
    return [str(t) for t in plan.targets]


async def test_the_header_sends_auto_to_the_private_route(gateway):
    plan = gateway.plan(body("debug my python script"), private=True)
    assert (plan.route, targets(plan)) == ("private", ["local/llama"])
    assert plan.decision.layer == "task" and "x-nerve-private" in plan.decision.detail
    assert gateway.plan(body("debug my python script")).route == "code"  # without it: rules


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (f"my aadhaar is {AADHAAR}, update my address", "aadhaar"),
        ("PAN ABCPE1234F, file my return", "pan"),
        (f"charge card {CARD} for the python course", "card"),
        ("call me on +91 98765 43210 about the python job", "phone"),
        ("write to asha.k@mail.co.in about the python job", "email"),
    ],
)
async def test_personal_data_sends_auto_to_the_private_route_before_any_rule(gateway, text, kind):
    plan = gateway.plan(body(text))
    assert (plan.route, targets(plan)) == ("private", ["local/llama"])
    assert plan.decision.detail == f"private: {kind} in the request"
    assert "98765" not in plan.decision.detail and "@" not in plan.decision.detail  # never echoed


async def test_personal_data_anywhere_in_the_request_counts(gateway):
    """Every message goes upstream: system, earlier turns, tool-call arguments."""
    earlier = {"messages": [{"role": "user", "content": f"my card is {CARD}"},
                            {"role": "assistant", "content": "noted"},
                            {"role": "user", "content": "continue"}], "model": "auto"}  # fmt: skip
    system = {"model": "auto", "messages": [
        {"role": "system", "content": "The user's email is asha.k@mail.co.in"},
        {"role": "user", "content": "hello"}]}  # fmt: skip
    call = {"id": "1", "type": "function",
            "function": {"name": "pay", "arguments": f'{{"card": "{CARD}"}}'}}  # fmt: skip
    tool = {"model": "auto", "messages": [{"role": "user", "content": "pay it"},
                                          {"role": "assistant", "tool_calls": [call]},
                                          {"role": "user", "content": "thanks"}]}  # fmt: skip
    assert [gateway.plan(b).route for b in (earlier, system, tool)] == ["private"] * 3


@pytest.mark.parametrize(
    "text",
    [
        "the meeting is on 2024-05-01 at 10:30",
        "order 123456789012 shipped",  # 12 digits, Verhoeff fails
        "card 4111 1111 1111 1112",  # Luhn fails
        "request id 123e4567-e89b-12d3-a456-426614174000",
        "pi is 3.14159265358979323846",
        "commit 4111111111111111abcdef and sha 7f3a9c",
        "clone git@github.com:org/repo.git and mail user@example.com",
        "rsync -avz ./site deploy@web.internal.net:/srv/www",
        "the icon is logo@2x.png",
        "I scored 9876 points in 2023",
    ],
)
async def test_numbers_and_addresses_that_are_not_personal_data_do_not_count(gateway, text):
    assert find_pii([text], ALL) is None
    assert gateway.plan(body(text)).route != "private"


def test_the_checksums_are_the_real_ones():
    assert verhoeff_ok(AADHAAR.replace(" ", "")) and not verhoeff_ok("234567890123")
    assert luhn_ok(CARD.replace(" ", "")) and not luhn_ok("4111111111111112")


async def test_pii_narrows_the_kinds_that_make_a_request_private():
    routes = [{**ROUTES[0], "when": {"task": "private", "pii": ["aadhaar", "card"]}}, *ROUTES[1:]]
    state = GatewayState(config(routes))
    await state.open()
    try:
        assert state.gateway.plan(body(f"aadhaar {AADHAAR}")).route == "private"
        assert state.gateway.plan(body("mail asha.k@mail.co.in")).route == "default"
    finally:
        await state.close()


async def test_a_key_without_the_private_route_still_cannot_send_personal_data_away(gateway):
    """`auto` falls back to the key's first route, but privacy keeps only its local models."""
    coder = Principal("ci", client="key:ci", routes=("code",))
    plan = gateway.plan(body(f"aadhaar {AADHAAR}"), coder)
    assert (plan.route, targets(plan)) == ("code", ["local/qwen-coder"])
    cloud_only = Principal("web", client="key:web", routes=("default",))
    with pytest.raises(Forbidden) as info:
        gateway.plan(body(f"aadhaar {AADHAAR}"), cloud_only)
    assert info.value.code == "private_needs_local"
    assert info.value.message.startswith("aadhaar in the request, and route 'default'")


async def test_a_named_route_under_the_header_keeps_only_its_local_models(gateway):
    plan = gateway.plan(body("hi", model="code"), private=True)
    assert (plan.route, targets(plan)) == ("code", ["local/qwen-coder"])


async def test_a_named_target_that_is_not_local_is_refused_under_the_header(gateway):
    for model in ("default", "cloud/general"):
        with pytest.raises(Forbidden) as info:
            gateway.plan(body("hi", model=model), private=True)
        assert info.value.status == 403 and info.value.code == "private_needs_local"
        assert "cloud/general" in info.value.message and "local: true" in info.value.message
    assert targets(gateway.plan(body("hi", model="local/llama"), private=True)) == ["local/llama"]


async def test_without_a_private_route_the_header_still_allows_only_local_models():
    routes = [{"name": "default", "model": {"provider": "cloud", "model": "general"},
               "fallbacks": [{"provider": "local", "model": "llama"}]}]  # fmt: skip
    state = GatewayState(config(routes))
    await state.open()
    try:
        plan = state.gateway.plan(body("hi"), private=True)
        assert (plan.route, targets(plan)) == ("default", ["local/llama"])
    finally:
        await state.close()


def test_the_header_is_read_leniently_but_only_as_a_yes():
    assert wants_private({"x-nerve-private": "true"}) and wants_private(
        {"x-nerve-private": " True"}
    )
    assert wants_private({"x-nerve-private": "1"})
    assert not wants_private({}) and not wants_private({"x-nerve-private": "false"})
