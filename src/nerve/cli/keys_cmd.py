"""`nerve keys generate|encrypt`: keep provider keys encrypted in the config (SPEC GW-17)."""

from __future__ import annotations

import os
import sys

import click

from nerve.cli.base import cli, fail
from nerve.errors import ConfigError
from nerve.secrets import encrypt, generate_key

__all__ = ["keys_group"]


@cli.group("keys")
def keys_group() -> None:
    """API keys for clients, and encrypted secrets for the config file.

    \b
    create, list, revoke   API keys clients send to nerve, kept hashed in the store
    generate, encrypt      values `enc:...` for the config file, key in $NERVE_MASTER_KEY
    """


@keys_group.command("generate")
def keys_generate() -> None:
    """Print a new master key: export it as NERVE_MASTER_KEY (and keep it out of the file).

    A passphrase of at least 16 characters works too, instead of a generated key: the key of
    each value is then derived from it (scrypt, a random salt stored in the `enc:` value).
    """
    click.echo(generate_key())


@keys_group.command("encrypt")
def keys_encrypt() -> None:
    """Read a secret from standard input and print it as `enc:...` for the config file.

    NERVE_MASTER_KEY is a key from `nerve keys generate` (→ `enc:gAAAA...`) or a passphrase of
    at least 16 characters (→ `enc:s1:<salt>:gAAAA...`). Loading the config needs the same one.

    \b
    Example:
      export NERVE_MASTER_KEY=$(nerve keys generate)    # or: a passphrase, 16+ characters
      printf %s "$OPENAI_API_KEY" | nerve keys encrypt     # → api_key: "enc:gAAAA..."
    """
    value = sys.stdin.read().rstrip("\r\n")
    if not value:
        fail("nothing to encrypt: pipe the secret on standard input")
    try:
        click.echo(encrypt(value, os.environ))
    except ConfigError as e:
        fail(e.message.replace("<stdin>: ", ""))  # each one names $NERVE_MASTER_KEY
