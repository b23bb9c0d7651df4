"""Encrypted values in the config (SPEC GW-17): `nerve keys`, `enc:` decrypted at load."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from nerve import secrets
from nerve.cli import cli
from nerve.config import load_config, parse_config
from nerve.errors import ConfigError
from nerve.secrets import decrypt_tree

BASE = {"routes": [{"name": "default", "model": {"provider": "o", "model": "m"}}]}


def encrypted(secret: str, key: str) -> str:
    result = CliRunner().invoke(
        cli, ["keys", "encrypt"], input=secret + "\n", env={"NERVE_MASTER_KEY": key}
    )
    assert result.exit_code == 0, result.output
    return result.output.strip()


def test_an_encrypted_key_is_decrypted_at_load_and_never_stored_in_clear() -> None:
    key = CliRunner().invoke(cli, ["keys", "generate"]).output.strip()
    token = encrypted("sk-live-123", key)
    assert token.startswith("enc:") and "sk-live-123" not in token
    config = parse_config(
        {
            **BASE,
            "providers": [{"name": "o", "base_url": "http://127.0.0.1:1/v1", "api_key": token}],
        },
        environ={"NERVE_MASTER_KEY": key},
    )
    assert config.provider("o").api_key == "sk-live-123"


def test_a_wrong_or_missing_master_key_stops_start_up_naming_the_key() -> None:
    token = encrypted("sk-live-123", CliRunner().invoke(cli, ["keys", "generate"]).output.strip())
    other = CliRunner().invoke(cli, ["keys", "generate"]).output.strip()
    data = {**BASE, "providers": [{"name": "o", "base_url": "http://x", "api_key": token}]}
    for environ, why in (
        ({"NERVE_MASTER_KEY": other}, "wrong"),
        ({}, "not set"),
        ({"NERVE_MASTER_KEY": "short"}, "at least 16 characters or a Fernet key"),
    ):
        with pytest.raises(ConfigError) as info:
            parse_config(data, environ=environ)
        assert info.value.path == "providers[0].api_key" and why in info.value.message
        assert "sk-live" not in str(info.value)


def test_encrypt_refuses_empty_input_and_a_missing_key() -> None:
    result = CliRunner().invoke(cli, ["keys", "encrypt"], input="", env={"NERVE_MASTER_KEY": "x"})
    assert result.exit_code == 1 and "nothing to encrypt" in result.output
    result = CliRunner().invoke(cli, ["keys", "encrypt"], input="s", env={"NERVE_MASTER_KEY": ""})
    assert result.exit_code == 1 and "NERVE_MASTER_KEY" in result.output


PASSPHRASE = "your-strong-random-key"


def config_file(tmp_path: Path, api_keys: list[str]) -> Path:
    providers = "".join(
        f'  - {{name: p{i}, base_url: "http://127.0.0.1:1/v1", api_key: {key}}}\n'
        for i, key in enumerate(api_keys)
    )
    path = tmp_path / "nerve.yaml"
    routes = "routes:\n  - name: default\n    model: {provider: p0, model: m}\n"
    path.write_text(f"providers:\n{providers}{routes}")
    return path


def test_a_passphrase_encrypts_with_a_salt_in_the_value_and_the_config_file_decrypts(
    tmp_path: Path,
) -> None:
    """GW-17: NERVE_MASTER_KEY may be a passphrase of 16+ characters: `enc:s1:<salt>:<token>`."""
    first, second = encrypted("sk-live-123", PASSPHRASE), encrypted("sk-live-123", PASSPHRASE)
    for token in (first, second):
        assert token.startswith("enc:s1:") and "sk-live-123" not in token
    assert first.split(":")[2] != second.split(":")[2], "a new salt for every value"
    path = config_file(tmp_path, [first, second])
    config = load_config(str(path), environ={"NERVE_MASTER_KEY": PASSPHRASE})
    assert [config.provider(n).api_key for n in ("p0", "p1")] == ["sk-live-123"] * 2


def test_a_fernet_master_key_still_writes_and_reads_the_plain_format() -> None:
    key = CliRunner().invoke(cli, ["keys", "generate"]).output.strip()
    token = encrypted("sk-live-123", key)
    assert token.startswith("enc:gAAAA")
    assert decrypt_tree(token, {"NERVE_MASTER_KEY": key}) == "sk-live-123"


def test_a_short_passphrase_is_refused_saying_what_is_accepted() -> None:
    environ = {"NERVE_MASTER_KEY": "fifteen-chars.."}
    result = CliRunner().invoke(cli, ["keys", "encrypt"], input="s", env=environ)
    assert result.exit_code == 1
    assert "at least 16 characters or a Fernet key" in result.output
    token = encrypted("sk-live-123", PASSPHRASE)
    with pytest.raises(ConfigError) as info:
        decrypt_tree({"api_key": token}, environ)
    assert info.value.path == "api_key" and "at least 16 characters" in info.value.message


def test_a_wrong_passphrase_or_the_wrong_kind_of_key_names_the_key_path() -> None:
    by_passphrase = encrypted("sk-live-123", PASSPHRASE)
    fernet_key = CliRunner().invoke(cli, ["keys", "generate"]).output.strip()
    by_fernet = encrypted("sk-live-123", fernet_key)
    data = {
        **BASE,
        "providers": [{"name": "o", "base_url": "http://x", "api_key": by_passphrase}],
    }
    for environ, why in (
        ({"NERVE_MASTER_KEY": PASSPHRASE + "!"}, "wrong"),
        ({"NERVE_MASTER_KEY": fernet_key}, "wrong"),
        ({}, "not set"),
    ):
        with pytest.raises(ConfigError) as info:
            parse_config(data, environ=environ)
        assert info.value.path == "providers[0].api_key" and why in info.value.message
        assert "sk-live" not in str(info.value)
    with pytest.raises(ConfigError) as info:
        decrypt_tree({"k": by_fernet}, {"NERVE_MASTER_KEY": PASSPHRASE})
    assert info.value.path == "k" and "made with a Fernet master key" in info.value.message
    salt, token = by_passphrase.split(":")[2:]
    for damaged in (f"enc:s1:{salt}%:{token}", f"enc:s1:{salt[::-1]}:{token}", "enc:s1:"):
        with pytest.raises(ConfigError, match="damaged"):
            decrypt_tree(damaged, {"NERVE_MASTER_KEY": PASSPHRASE})


def test_reloading_a_config_derives_each_passphrase_key_only_once(tmp_path: Path) -> None:
    """scrypt costs ~50 ms: a derived key is kept per (passphrase, salt) for the process."""
    environ = {"NERVE_MASTER_KEY": PASSPHRASE}
    path = config_file(tmp_path, [encrypted(f"sk-{i}", PASSPHRASE) for i in range(10)])
    load_config(str(path), environ=environ)
    derived = secrets._derived.cache_info().misses
    config = load_config(str(path), environ=environ)
    assert secrets._derived.cache_info().misses == derived, "no new derivation on a reload"
    assert config.provider("p9").api_key == "sk-9"
