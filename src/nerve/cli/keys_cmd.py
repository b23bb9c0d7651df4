"""`nerve keys generate|encrypt`: keep provider keys encrypted in the config (SPEC GW-17)."""

from __future__ import annotations

import os
import sys

import click

from nerve.cli.base import cli, fail
from nerve.errors import ConfigError
from nerve.secrets import MASTER_KEY_ENV, encrypt, generate_key

__all__ = ["keys_group"]


@cli.group("keys")
def keys_group() -> None:
    """Encrypted secrets for the config file (values `enc:...`, key in $NERVE_MASTER_KEY)."""


@keys_group.command("generate")
def keys_generate() -> None:
    """Print a new master key: export it as NERVE_MASTER_KEY (and keep it out of the file)."""
    click.echo(generate_key())


@keys_group.command("encrypt")
def keys_encrypt() -> None:
    """Read a secret from standard input and print it as `enc:...` for the config file.

    \b
    Example:
      export NERVE_MASTER_KEY=$(nerve keys generate)
      printf %s "$OPENAI_API_KEY" | nerve keys encrypt     # → api_key: "enc:gAAAA..."
    """
    value = sys.stdin.read().rstrip("\r\n")
    if not value:
        fail("nothing to encrypt: pipe the secret on standard input")
    try:
        click.echo(encrypt(value, os.environ))
    except ConfigError as e:
        fail(e.message.replace("<stdin>: ", "") + f" (set ${MASTER_KEY_ENV})")
