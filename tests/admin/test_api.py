"""The admin API: dashboard, logs, config editor, reload, keys (SPEC AD-1, AD-4, GW-17, GW-18).

No secret value may appear in any response, event or file other than the config's own `enc:`.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.admin.conftest import LITERAL_KEY, VAULT_KEY, Harness
from tests.fakes.upstream import FakeUpstream, Reply

SECRETS = (LITERAL_KEY, VAULT_KEY, "sk-from-env-000111")


def assert_no_secret(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text


def files_under(root: Path) -> list[tuple[Path, bytes]]:
    return [(f, f.read_bytes()) for f in root.rglob("*") if f.is_file()]


async def chat(client: httpx.AsyncClient, model: str = "auto") -> httpx.Response:
    body = {"model": model, "messages": [{"role": "user", "content": "hello"}]}
    return await client.post("/v1/chat/completions", json=body)


async def test_dashboard_shows_routes_breakers_and_counts_after_traffic(
    admin: Harness, upstream: FakeUpstream
) -> None:
    """AD-1: routes with targets, breakers, tokens and latency after a call."""
    upstream.script(Reply(usage={"prompt_tokens": 7, "completion_tokens": 5, "total_tokens": 12}))
    async with admin.session() as client:
        assert (await chat(client)).status_code == 200
        response = await client.get("/admin/api/dashboard")
    data = response.json()
    assert data["routes"] == [
        {"name": "default", "rules": 0, "examples": 0, "targets": ["primary/m1"]}
    ]
    assert data["breakers"]["primary/m1"]["state"] == "closed"
    assert data["stats"]["calls"] == 1 and data["stats"]["tokens"]["total"] == 12
    assert data["stats"]["by_route"]["default"]["latency_ms"]["p50"] is not None
    assert data["health"]["status"] == "ok"
    assert_no_secret(response.text)


async def test_a_degraded_health_says_why_and_an_unpriced_target_says_so(admin: Harness) -> None:
    """The badge explains itself: each reason, with since when; a target with no price in
    `prices` is reported unpriced, so the page shows "no price" rather than $0."""
    async with admin.session() as client:
        assert (await client.get("/admin/api/dashboard")).json()["health"]["reasons"] == []
        for _ in range(admin.app.config.limits.breaker.failures):
            await admin.app.gateway.breakers.record_failure("primary/m1")
        data = (await client.get("/admin/api/dashboard")).json()
    assert data["health"]["status"] == "degraded"
    (reason,) = data["health"]["reasons"]
    assert reason.startswith("the breaker of primary/m1 is open after ")
    assert "failures in a row (opened 0 s ago); it is tried again in " in reason
    assert data["priced"] == {"primary/m1": False}


async def test_logs_are_filtered_by_kind_and_text(admin: Harness, upstream: FakeUpstream) -> None:
    """AD-4: CALL and ERROR events from traffic; ?kind= and ?q= filter them."""
    upstream.script(Reply(), Reply(status=500, json={"error": {"message": "boom"}}))
    async with admin.session() as client:
        await chat(client), await chat(client)
        every = (await client.get("/admin/api/logs")).json()["events"]
        calls = (await client.get("/admin/api/logs", params={"kind": "call"})).json()["events"]
        errors = (await client.get("/admin/api/logs", params={"kind": "ERROR,FALLBACK"})).json()
        found = (await client.get("/admin/api/logs", params={"q": "ANSWERED 500"})).json()
        since = (await client.get("/admin/api/logs", params={"after": every[-1]["seq"]})).json()
    assert {"AUTH_LOGIN", "ROUTE", "CALL", "ERROR"} <= {e["kind"] for e in every}
    assert [e["kind"] for e in calls] == ["CALL"] and calls[0]["target"] == "primary/m1"
    assert [e["kind"] for e in errors["events"]] == ["ERROR"]
    assert found["events"] and all("500" in str(e) for e in found["events"])
    assert since["events"] == []


async def test_config_is_shown_with_every_secret_masked(admin: Harness) -> None:
    """A literal key and an enc: value are masked; ${VAR} references and comments stay."""
    async with admin.session() as client:
        data = (await client.get("/admin/api/config")).json()
    assert data["path"] == str(admin.path) and data["editable"] is True
    text = data["text"]
    assert_no_secret(text)
    assert "enc:" not in text
    assert '"<masked: providers[0].api_key>"' in text
    assert '"<masked: providers[1].api_key>"' in text
    assert "${NERVE_TEST_KEY}" in text and "# a literal key" in text


async def test_saving_with_placeholders_keeps_the_keys_and_applies_a_route_change(
    admin: Harness, upstream: FakeUpstream
) -> None:
    """AD-1 + GW-18: edit a route in the masked text, save → file and gateway use it."""
    async with admin.session() as client:
        text = (await client.get("/admin/api/config")).json()["text"]
        edited = text.replace("model: m1", "model: m2")
        response = await client.put("/admin/api/config", json={"text": edited})
        assert response.status_code == 200, response.text
        assert response.json()["reloaded"] is True
        assert (await chat(client)).headers["x-nerve-model"] == "m2"
    on_disk = admin.path.read_text()
    assert f"api_key: {LITERAL_KEY}" in on_disk and "model: m2" in on_disk
    assert "# nerve test config" in on_disk and "enc:" in on_disk
    assert admin.app.config.provider("vault").api_key == VAULT_KEY
    assert upstream.wait_for_requests(1)[0].headers["authorization"] == f"Bearer {LITERAL_KEY}"


async def test_an_invalid_config_is_refused_and_nothing_changes(admin: Harness) -> None:
    """GW-18: a bad value → 400 naming the key; the file and the served config stay."""
    before = admin.path.read_text()
    async with admin.session() as client:
        text = (await client.get("/admin/api/config")).json()["text"]
        bad = text.replace("provider: primary", "provider: nosuch")
        response = await client.put("/admin/api/config", json={"text": bad})
        assert response.status_code == 400
        message = response.json()["error"]["message"]
        assert "routes[0].model.provider" in message and "nosuch" in message
        assert_no_secret(response.text)
        unknown = text.replace("providers[1].api_key", "providers[7].api_key")
        assert (await client.put("/admin/api/config", json={"text": unknown})).status_code == 400
        assert (await chat(client)).headers["x-nerve-model"] == "m1"
    assert admin.path.read_text() == before
    assert '"kind":"CONFIG_SAVE","ok":false' in admin.events_file.read_text().replace(" ", "")


async def test_reload_rereads_the_file(admin: Harness) -> None:
    """GW-18: POST /admin/api/reload applies what is on disk now; a RELOAD event says so."""
    admin.path.write_text(admin.path.read_text().replace("model: m1", "model: m3"))
    async with admin.session() as client:
        response = await client.post("/admin/api/reload", json={})
        assert response.status_code == 200 and response.json()["reloaded"] is True
        assert (await chat(client)).headers["x-nerve-model"] == "m3"
        logs = (await client.get("/admin/api/logs", params={"kind": "RELOAD"})).json()
    assert logs["events"], "the reload is an event"


async def test_a_reload_with_no_body_rereads_the_file(admin: Harness) -> None:
    """GW-18: an action sends no body, so needs no JSON content type (Content-Length 0 or none)."""
    admin.path.write_text(admin.path.read_text().replace("model: m1", "model: m3"))
    async with admin.session() as client:
        response = await client.post("/admin/api/reload")
        assert response.status_code == 200 and response.json()["reloaded"] is True
        assert (await chat(client)).headers["x-nerve-model"] == "m3"
        admin.path.write_text(admin.path.read_text().replace("model: m3", "model: m4"))
        request = client.build_request("POST", "/admin/api/reload")
        del request.headers["content-length"]
        assert (await client.send(request)).status_code == 200
        assert (await chat(client)).headers["x-nerve-model"] == "m4"


async def test_keys_are_listed_masked_with_their_source(admin: Harness) -> None:
    async with admin.session() as client:
        response = await client.get("/admin/api/keys")
    assert_no_secret(response.text)
    keys = {k["provider"]: k for k in response.json()["keys"]}
    assert (keys["primary"]["source"], keys["primary"]["masked"]) == ("literal", "…-123")
    assert keys["vault"]["encrypted"] and keys["vault"]["masked"] == "…6789"
    assert (keys["fromenv"]["source"], keys["fromenv"]["env"]) == ("env", "NERVE_TEST_KEY")


async def test_setting_a_key_needs_the_master_key(
    admin: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GW-17: without $NERVE_MASTER_KEY a key is refused, never stored in plaintext."""
    monkeypatch.delenv("NERVE_MASTER_KEY")
    before = admin.path.read_text()
    async with admin.session() as client:
        url = "/admin/api/keys/primary"
        response = await client.put(url, json={"value": "sk-new-plaintext-999"})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "master_key_required"
    assert "sk-new-plaintext-999" not in response.text
    assert admin.path.read_text() == before


async def test_setting_a_key_stores_only_ciphertext_and_applies_it(
    admin: Harness, upstream: FakeUpstream, tmp_path: Path
) -> None:
    """GW-17: the new key lands as enc: in place of the old; plaintext is on no disk file."""
    new_key = "sk-rotated-key-7777"
    async with admin.session() as client:
        response = await client.put("/admin/api/keys/primary", json={"value": new_key})
        assert response.status_code == 200, response.text
        assert response.json()["masked"] == "…7777"
        assert new_key not in response.text
        await chat(client)
        flow = await client.put("/admin/api/keys/vault", json={"value": "sk-vault-rotated-1"})
        assert flow.status_code == 200, flow.text
        missing = await client.put("/admin/api/keys/nosuch", json={"value": "sk-x-123456789"})
        assert missing.status_code == 404
    assert upstream.wait_for_requests(1)[0].headers["authorization"] == f"Bearer {new_key}"
    on_disk = admin.path.read_text()
    assert LITERAL_KEY not in on_disk and "# a literal key" in on_disk
    await admin.app.admin.events.flush()
    for file, data in files_under(tmp_path):
        assert new_key.encode() not in data and b"sk-vault-rotated-1" not in data, file
    assert admin.app.config.provider("primary").api_key == new_key
    assert admin.app.config.provider("vault").api_key == "sk-vault-rotated-1"
    assert '"kind":"KEY_SET","ok":true' in admin.events_file.read_text().replace(" ", "")


async def test_calls_are_logged_after_a_reload_made_outside_the_panel(admin: Harness) -> None:
    """AD-4: a reload by the file watcher (here: the server's reload) keeps the events coming."""
    admin.path.write_text(admin.path.read_text().replace("model: m1", "model: m4"))
    await admin.app.reload()
    async with admin.client() as client:
        assert (await chat(client)).headers["x-nerve-model"] == "m4"
    calls = await admin.app.admin.events.recent(kinds={"CALL"})
    assert [e["kind"] for e in calls] == ["CALL"]
