"""Admin login, sessions, throttling and the HTTPS rule (SPEC AD-2, AD-3)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest

from tests.admin.conftest import PASSWORD, Harness

PROTECTED = [
    ("POST", "/admin/api/logout"),
    ("GET", "/admin/api/session"),
    ("GET", "/admin/api/dashboard"),
    ("GET", "/admin/api/logs"),
    ("GET", "/admin/api/config"),
    ("PUT", "/admin/api/config"),
    ("POST", "/admin/api/reload"),
    ("GET", "/admin/api/keys"),
    ("PUT", "/admin/api/keys/primary"),
    ("GET", "/stats/reset"),
    ("POST", "/stats/reset"),
]


def auth_events(harness: Harness) -> list[dict[str, object]]:
    lines = harness.events_file.read_text().splitlines()
    return [e for e in map(json.loads, lines) if e["kind"] == "AUTH_LOGIN"]


async def test_login_sets_a_strict_httponly_cookie_and_returns_a_token(admin: Harness) -> None:
    """AD-2: a right password → a session cookie (HttpOnly, SameSite=Strict, 24 h) and token."""
    async with admin.client() as client:
        response = await admin.login(client)
        assert response.status_code == 200
        cookie = response.headers["set-cookie"]
        assert cookie.startswith("nerve_admin=")
        attributes = {a.strip().lower() for a in cookie.split(";")[1:]}
        assert {"httponly", "samesite=strict", "path=/", "max-age=86400"} <= attributes
        assert "secure" not in attributes  # plain HTTP on loopback: a Secure cookie would vanish
        assert (await client.get("/admin/api/session")).status_code == 200
        token = response.json()["token"]
    async with admin.client() as fresh:  # no cookie: the header works too
        headers = {"x-nerve-admin-token": token}
        assert (await fresh.get("/admin/api/session", headers=headers)).status_code == 200
        assert (await fresh.get("/admin/api/session")).status_code == 401


async def test_cookie_is_secure_over_https(admin: Harness) -> None:
    """AD-3: over HTTPS (from anywhere) the cookie is marked Secure."""
    async with admin.client(ip="10.0.0.5", scheme="https") as client:
        response = await admin.login(client)
        assert response.status_code == 200
        assert "secure" in response.headers["set-cookie"].lower()


async def test_wrong_password_is_401_and_every_attempt_is_an_event(admin: Harness) -> None:
    """AD-2: each login attempt is an AUTH_LOGIN line in the JSONL event log, never the password."""
    async with admin.client() as client:
        wrong = await admin.login(client, "guess-one")
        assert wrong.status_code == 401
        assert wrong.json()["error"]["code"] == "wrong_password"
        assert (await admin.login(client)).status_code == 200
    events = auth_events(admin)  # written at once, not after the buffer's second
    assert [(e["ok"], e["client"]) for e in events] == [(False, "127.0.0.1"), (True, "127.0.0.1")]
    text = admin.events_file.read_text()
    assert "guess-one" not in text and PASSWORD not in text


async def test_a_session_expires_after_24_hours(admin: Harness) -> None:
    """AD-2: the session token stops working 24 h after login."""
    async with admin.client() as client:
        await admin.login(client)
        admin.clock.advance(24 * 3600 - 5)
        assert (await client.get("/admin/api/session")).status_code == 200
        admin.clock.advance(10)
        expired = await client.get("/admin/api/session")
        assert expired.status_code == 401
        assert expired.json()["error"]["code"] == "session_expired"


async def test_five_failures_a_minute_throttle_and_ten_ban_for_30_minutes(admin: Harness) -> None:
    """AD-2: 5 failures within a minute → 429; 10 failures → banned 30 min, right password too."""
    async with admin.client(ip="127.0.0.2") as client:
        for _ in range(5):
            assert (await admin.login(client, "nope")).status_code == 401
        throttled = await admin.login(client, "nope")
        assert throttled.status_code == 429
        assert throttled.json()["error"]["code"] == "login_throttled"
        assert 1 <= int(throttled.headers["retry-after"]) <= 60
        admin.clock.advance(61)
        for _ in range(5):
            assert (await admin.login(client, "nope")).status_code == 401
        banned = await admin.login(client)
        assert banned.status_code == 429
        assert banned.json()["error"]["code"] == "login_banned"
        assert "banned" in banned.json()["error"]["message"]
        assert int(banned.headers["retry-after"]) == 1800
        async with admin.client(ip="127.0.0.3") as other:  # only that client is banned
            assert (await admin.login(other)).status_code == 200
        admin.clock.advance(29 * 60)
        assert (await admin.login(client)).status_code == 429
        admin.clock.advance(61)
        assert (await admin.login(client)).status_code == 200
    reasons = [e["reason"] for e in auth_events(admin) if e["client"] == "127.0.0.2"]
    assert reasons.count("login_throttled") == 1 and reasons.count("login_banned") == 2


@pytest.mark.parametrize("path", ["/admin", "/admin/static/admin.js", "/admin/api/session"])
async def test_non_loopback_plain_http_is_426(admin: Harness, path: str) -> None:
    """AD-3: from another machine without HTTPS every admin URL answers 426."""
    async with admin.client(ip="10.0.0.5") as client:
        response = await client.get(path)
        assert response.status_code == 426
        assert response.json()["error"]["code"] == "https_required"
        login = await admin.login(client)
        assert login.status_code == 426 and "set-cookie" not in login.headers


async def test_loopback_http_and_remote_https_are_served(admin: Harness) -> None:
    """AD-3: loopback over HTTP and any address over HTTPS get the page."""
    for ip, scheme in (("127.0.0.1", "http"), ("::1", "http"), ("203.0.113.9", "https")):
        async with admin.client(ip=ip, scheme=scheme) as client:
            page = await client.get("/admin")
            assert page.status_code == 200, (ip, scheme)
            assert '<form id="login-form">' in page.text
            assert "default-src 'self'" in page.headers["content-security-policy"]
            assert (await client.get("/admin/static/admin.css")).status_code == 200


@pytest.mark.parametrize(("method", "path"), PROTECTED)
async def test_every_admin_route_and_stats_reset_need_a_session(
    admin: Harness, method: str, path: str
) -> None:
    """AD-2: /admin/api/* and /stats/reset answer 401 without a valid session."""
    async with admin.client() as client:
        response = await client.request(method, path, json={})
        assert response.status_code == 401, response.text
        forged = {"x-nerve-admin-token": "v1.eyJzaWQiOiJ4IiwiZXhwIjo5OTk5OTk5OTk5fQ.AAAA"}
        assert (await client.request(method, path, json={}, headers=forged)).status_code == 401


async def test_stats_reset_works_with_a_session(admin: Harness) -> None:
    """GW-13 + AD-2: an admin can reset the stats."""
    async with admin.session() as client:
        response = await client.post("/stats/reset")
        assert response.status_code == 200 and "previous" in response.json()


async def test_logout_ends_the_session(admin: Harness) -> None:
    async with admin.session() as client:
        token = client.cookies["nerve_admin"]
        assert (await client.post("/admin/api/logout", json={})).status_code == 200
        headers = {"x-nerve-admin-token": token}
        assert (await client.get("/admin/api/session", headers=headers)).status_code == 401
    assert "AUTH_LOGOUT" in admin.events_file.read_text()


async def test_changes_need_json_and_the_same_origin(admin: Harness) -> None:
    """CSRF: a cookie-carrying form post or a cross-site Origin is refused."""
    async with admin.session() as client:
        form_type = {"content-type": "application/x-www-form-urlencoded"}
        form = await client.post("/admin/api/reload", content=b"x=1", headers=form_type)
        assert form.status_code == 415 and form.json()["error"]["code"] == "json_required"
        evil = await client.post("/admin/api/reload", json={}, headers={"origin": "https://evil"})
        assert evil.status_code == 403 and evil.json()["error"]["code"] == "cross_origin"
        same_origin = {"origin": "http://localhost"}
        same = await client.post("/admin/api/reload", json={}, headers=same_origin)
        assert same.status_code == 200


async def chunks(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


async def test_an_empty_action_needs_no_json_type_but_any_body_and_a_foreign_origin_do(
    admin: Harness,
) -> None:
    """CSRF: no body → no content type needed; a body must be JSON, announced or not."""
    admin.path.write_text(admin.path.read_text().replace("model: m1", "model: m3"))

    def served_model() -> str:
        return str(admin.app.config.routes[0].targets[0].model)

    async with admin.session() as client:
        text = {"content-type": "text/plain"}
        plain = await client.post("/admin/api/reload", content=b"{}", headers=text)
        chunked = await client.post("/admin/api/reload", content=chunks(b"{}"))
        unannounced = client.build_request("POST", "/admin/api/reload", content=b"{}")
        del unannounced.headers["content-length"]  # as an HTTP/2 request may come
        for refused in (plain, chunked, await client.send(unannounced)):
            assert refused.status_code == 415
            assert refused.json()["error"]["code"] == "json_required"
        evil = await client.post("/admin/api/reload", headers={"origin": "https://evil"})
        assert evil.status_code == 403 and evil.json()["error"]["code"] == "cross_origin"
        assert served_model() == "m1", "nothing refused was applied"
        same = await client.post("/admin/api/reload", headers={"origin": "http://localhost"})
        assert same.status_code == 200 and served_model() == "m3"
