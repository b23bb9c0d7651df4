"""The admin panel's Access page API (SPEC KY-2, KY-3, UX-1): every key with its policy and
spend, never a key itself; managed keys created (shown once) and revoked from the panel."""

from __future__ import annotations

from typing import Any

import httpx

from nerve.access.keystore_sql import keystore_from_url
from nerve.access.principal import digest
from nerve.errors import SharedStateUnavailable
from tests.admin.conftest import Harness

CONFIG_KEY = "sk-config-key-1234"


class Spends:
    """`host.access` as the server will offer it: each named key's spend this period."""

    def __init__(self, rows: list[dict[str, Any]], *, down: bool = False) -> None:
        self.rows, self.down = rows, down
        self.asked: list[list[str]] = []

    async def spend(self, names: list[str]) -> list[dict[str, Any]]:
        self.asked.append(names)
        if self.down:
            raise SharedStateUnavailable("Redis is unreachable", retry_after=1.0)
        return [r for r in self.rows if r["key"] in names]


async def with_config_key(admin: Harness) -> None:
    text = admin.path.read_text().replace(
        "server: {config_poll_seconds: 0}",
        f"server: {{config_poll_seconds: 0, api_keys: [{{name: ops, key: {CONFIG_KEY}}}]}}",
    )
    await admin.app.reload(text)


async def create(client: httpx.AsyncClient, **body: Any) -> httpx.Response:
    return await client.post("/admin/api/access", json=body)


async def test_a_key_created_in_the_panel_is_shown_once_then_only_by_its_last_4(
    admin: Harness,
) -> None:
    async with admin.session() as client:
        made = await create(client, name="ci", routes=["default"], users="ci-bot", rpm=60,
                            budget="20/month")  # fmt: skip
        listed = await client.get("/admin/api/access")
        logs = (await client.get("/admin/api/logs", params={"kind": "KEY_CREATE"})).json()
    assert made.status_code == 201
    secret, record = made.json()["key"], made.json()["record"]
    assert secret.startswith("nrv-") and record["key"] == f"…{secret[-4:]}"
    (key,) = listed.json()["keys"]
    assert key == {**record, "spend": None}
    assert (key["routes"], key["users"], key["rpm"]) == (["default"], ["ci-bot"], 60)
    assert key["budget"] == {"usd": 20.0, "period": "month"} and key["managed"] is True
    assert [e["name"] for e in logs["events"]] == ["ci"]
    assert secret not in listed.text + str(logs) + admin.events_file.read_text()

    store = keystore_from_url(admin.app.config.storage.url)  # what every server reads
    await store.open()
    try:
        assert [k.digest for k in await store.active()] == [digest(secret.encode())]
    finally:
        await store.close()


async def test_bad_fields_and_taken_names_are_400s_naming_them(admin: Harness) -> None:
    await with_config_key(admin)
    async with admin.session() as client:
        assert (await create(client, name="ci")).status_code == 201
        cases = [
            ({"name": "ci"}, "'ci' exists already", "key_exists"),
            ({"name": "ops"}, "'ops' is in the config file", "key_exists"),
            ({"name": "x", "budget": "20/year"}, "write USD/PERIOD", "invalid_key"),
            ({"name": "x", "tpm": "lots"}, "tpm: Input should be a valid integer", "invalid_key"),
            ({"name": "x", "key": "sk-my-own-key"}, "keys are generated", "invalid_key"),
            ({"routes": ["default"]}, "name: Field required", "invalid_key"),
        ]
        for body, message, code in cases:
            refused = await create(client, **body)
            error = refused.json()["error"]
            assert refused.status_code == 400 and message in error["message"], body
            assert error["code"] == code
        not_an_object = await client.post("/admin/api/access", json=["ci"])
        assert not_an_object.status_code == 400
        names = [k["name"] for k in (await client.get("/admin/api/access")).json()["keys"]]
    assert names == ["ops", "ci"]


async def test_a_revoked_key_stays_listed_as_revoked_and_cannot_be_revoked_again(
    admin: Harness,
) -> None:
    await with_config_key(admin)
    async with admin.session() as client:
        await create(client, name="bot")
        revoked = await client.post("/admin/api/access/bot/revoke", json={})
        again = await client.post("/admin/api/access/bot/revoke", json={})
        unknown = await client.post("/admin/api/access/nobody/revoke", json={})
        config = await client.post("/admin/api/access/ops/revoke", json={})
        keys = {k["name"]: k for k in (await client.get("/admin/api/access")).json()["keys"]}
        logs = (await client.get("/admin/api/logs", params={"kind": "KEY_REVOKE"})).json()
    assert revoked.status_code == 200 and revoked.json() == {"revoked": "bot"}
    assert again.status_code == 404 and "revoked already" in again.json()["error"]["message"]
    assert unknown.status_code == 404 and "no key named 'nobody'" in unknown.text
    assert config.status_code == 400 and "remove it from server.api_keys" in config.text
    assert keys["bot"]["revoked_at"] is not None and keys["ops"]["revoked_at"] is None
    assert keys["ops"]["key"] == "…1234" and CONFIG_KEY not in str(keys)
    assert [e["name"] for e in logs["events"]] == ["bot"]


async def test_spend_and_budget_left_come_from_the_server_when_it_meters(
    admin: Harness,
) -> None:
    spends = Spends([{"key": "ci", "usd": 4.5, "held_usd": 0.5, "period": "month",
                      "period_start": 1.0, "resets_at": 2.0}])  # fmt: skip
    async with admin.session() as client:
        await create(client, name="ci", budget="20/month")
        await create(client, name="free")
        await create(client, name="gone")
        await client.post("/admin/api/access/gone/revoke", json={})
        admin.app.access = None  # type: ignore[attr-defined]
        unmetered = (await client.get("/admin/api/access")).json()
        admin.app.access = spends  # type: ignore[attr-defined]
        metered = (await client.get("/admin/api/access")).json()
        admin.app.access = Spends([], down=True)  # type: ignore[attr-defined]
        down = (await client.get("/admin/api/access")).json()
    assert unmetered["metered"] is False and unmetered["spend_error"] is None
    assert all(k["spend"] is None for k in unmetered["keys"])
    assert spends.asked == [["ci", "free"]]  # revoked keys spend nothing
    ci, free, gone = metered["keys"]
    assert ci["spend"]["usd"] == 4.5 and ci["spend"]["left_usd"] == 15.0
    assert free["spend"] is None and gone["spend"] is None
    assert down["metered"] is True and down["spend_error"] == "Redis is unreachable"
    assert [k["name"] for k in down["keys"]] == ["ci", "free", "gone"]


async def test_the_access_api_needs_a_session_and_the_same_origin(admin: Harness) -> None:
    async with admin.client() as anonymous:
        assert (await anonymous.get("/admin/api/access")).status_code == 401
        assert (await create(anonymous, name="ci")).status_code == 401
    async with admin.session() as client:
        evil = await client.post(
            "/admin/api/access", json={"name": "ci"}, headers={"origin": "https://evil"}
        )
        assert evil.status_code == 403 and evil.json()["error"]["code"] == "cross_origin"
        assert (await client.get("/admin/api/access")).json()["keys"] == []
