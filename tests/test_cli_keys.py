"""`nerve keys create|list|revoke` against the default SQLite store in a fresh directory
(SPEC KY-2): the key is printed once and stored only hashed; bad input exits 2."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from click.testing import CliRunner, Result

from nerve.access.keystore_sql import keystore_from_url
from nerve.access.principal import digest
from nerve.cli import cli

CONFIG = "server:\n  api_keys:\n    - {name: ops, key: sk-config-key-1234, rpm: 5}\n"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["keys", *args])


def stored_bytes() -> bytes:
    return b"".join(f.read_bytes() for f in Path(".nerve").glob("nerve.db*"))


def test_create_prints_the_key_once_and_list_never_shows_it() -> None:
    made = run("create", "--name", "ci", "--routes", "code,default", "--models", "openai/*",
               "--users", "ci-bot", "--rpm", "60", "--max-parallel", "4",
               "--budget", "20/month")  # fmt: skip
    assert made.exit_code == 0, made.output
    secret = made.stdout.strip()
    assert secret.startswith("nrv-") and "\n" not in secret  # stdout is the key alone
    assert "shown only this once" in made.stderr and secret not in made.stderr

    table = run("list")
    listed = run("list", "--json")
    assert table.exit_code == listed.exit_code == 0
    assert secret not in table.output + listed.output and secret.encode() not in stored_bytes()
    line = next(row for row in table.stdout.splitlines() if row.startswith("ci "))
    for shown in (f"…{secret[-4:]}", "store", "code,default", "openai/*", "ci-bot",
                  "rpm=60 max_parallel=4", "$20/month"):  # fmt: skip
        assert shown in line
    (view,) = json.loads(listed.stdout)
    assert view["name"] == "ci" and view["budget"] == {"usd": 20.0, "period": "month"}
    assert view["revoked_at"] is None and view["tpm"] is None

    async def stored() -> bytes:  # what every server's keyring reads: the key's hash
        store = keystore_from_url("sqlite:///.nerve/nerve.db")
        await store.open()
        try:
            return (await store.active())[0].digest
        finally:
            await store.close()

    assert asyncio.run(stored()) == digest(secret.encode())


def test_revoke_marks_the_key_revoked_and_a_second_revoke_is_refused() -> None:
    assert run("create", "--name", "bot").exit_code == 0
    revoked = run("revoke", "bot")
    assert revoked.exit_code == 0 and "revoked key 'bot'" in revoked.stdout
    (view,) = json.loads(run("list", "--json").stdout)
    assert view["revoked_at"] is not None
    again = run("revoke", "bot")
    assert again.exit_code == 2 and "key 'bot' is revoked already" in again.stderr
    reused = run("create", "--name", "bot")
    assert reused.exit_code == 2 and "'bot' exists already" in reused.stderr
    assert reused.stdout == ""


def test_revoking_an_unknown_name_fails_with_exit_2_naming_it() -> None:
    result = run("revoke", "nobody")
    assert result.exit_code == 2 and result.stderr == "nerve: no key named 'nobody'\n"


def test_bad_options_exit_2_and_say_what_to_write() -> None:
    budget = run("create", "--name", "ci", "--budget", "20/year")
    assert budget.exit_code == 2 and "'--budget'" in budget.stderr
    assert "write USD/PERIOD, e.g. 20/month" in budget.stderr
    name = run("create", "--name", "two words")
    assert name.exit_code == 2 and "name: 1 to 64 letters, digits" in name.stderr
    assert run("create", "--name", "ci", "--rpm", "0").exit_code == 2
    assert run("create").exit_code == 2  # --name is required
    assert not Path(".nerve").exists()  # refused before the store was opened


def test_config_keys_are_listed_and_their_names_cannot_be_taken_or_revoked(
    tmp_path: Path,
) -> None:
    path = tmp_path / "nerve.yaml"
    path.write_text(CONFIG)
    (view,) = json.loads(run("list", "--json", "--config", str(path)).stdout)
    assert (view["name"], view["key"], view["managed"], view["rpm"]) == ("ops", "…1234", False, 5)
    assert "sk-config-key-1234" not in run("list", "--config", str(path)).output
    taken = run("create", "--name", "ops", "--config", str(path))
    assert taken.exit_code == 2 and "'ops' is in the config file" in taken.stderr
    revoked = run("revoke", "ops", "--config", str(path))
    assert revoked.exit_code == 2 and "remove it from server.api_keys" in revoked.stderr


def test_an_unreachable_store_exits_1_without_echoing_its_url(tmp_path: Path) -> None:
    path = tmp_path / "nerve.yaml"
    path.write_text('storage: {url: "postgresql://me:pa55word@127.0.0.1:1/nerve"}\n')
    result = run("list", "--config", str(path))
    assert result.exit_code == 1 and "cannot open the postgresql store" in result.stderr
    assert "pa55word" not in result.output
