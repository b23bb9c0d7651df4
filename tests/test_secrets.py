"""Encrypted values in the config (SPEC GW-17): `nerve keys`, `enc:` decrypted at load."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from nerve.cli import cli
from nerve.config import parse_config
from nerve.errors import ConfigError

BASE = {"routes": [{"name": "default", "model": {"provider": "o", "model": "m"}}]}


def encrypted(secret: str, key: str) -> str:
    result = CliRunner().invoke(
        cli, ["keys", "encrypt"], input=secret + "\n", env={"NERVE_MASTER_KEY": key}
    )
    assert result.exit_code == 0, result.output
    return result.output.strip()


def test_an_encrypted_key_is_decrypted_at_load_and_never_stored_in_clear():
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


def test_a_wrong_or_missing_master_key_stops_start_up_naming_the_key():
    token = encrypted("sk-live-123", CliRunner().invoke(cli, ["keys", "generate"]).output.strip())
    other = CliRunner().invoke(cli, ["keys", "generate"]).output.strip()
    data = {**BASE, "providers": [{"name": "o", "base_url": "http://x", "api_key": token}]}
    for environ, why in (
        ({"NERVE_MASTER_KEY": other}, "wrong"),
        ({}, "not set"),
        ({"NERVE_MASTER_KEY": "short"}, "not a Fernet key"),
    ):
        with pytest.raises(ConfigError) as info:
            parse_config(data, environ=environ)
        assert info.value.path == "providers[0].api_key" and why in info.value.message
        assert "sk-live" not in str(info.value)


def test_encrypt_refuses_empty_input_and_a_missing_key():
    result = CliRunner().invoke(cli, ["keys", "encrypt"], input="", env={"NERVE_MASTER_KEY": "x"})
    assert result.exit_code == 1 and "nothing to encrypt" in result.output
    result = CliRunner().invoke(cli, ["keys", "encrypt"], input="s", env={"NERVE_MASTER_KEY": ""})
    assert result.exit_code == 1 and "NERVE_MASTER_KEY" in result.output
