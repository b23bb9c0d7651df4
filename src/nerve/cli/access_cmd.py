"""`nerve keys create|list|revoke`: managed API keys, in the store beside memory (SPEC KY-2).

They work on the configured store (`storage.url`) itself, beside any running nerve: every server
on that store accepts a new key, and refuses a revoked one, within a second. The key is printed
once, by `create`, and kept only hashed. Bad input (a field, a taken or unknown name) exits 2;
a store that cannot be opened exits 1.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import click
import orjson

from nerve.access.keys import key_views, new_key, parse_budget, revoke_key
from nerve.access.keystore import KeyStore
from nerve.access.keystore_sql import keystore_from_url
from nerve.access.principal import Budget
from nerve.cli.base import config_option, fail, load, open_store
from nerve.cli.keys_cmd import keys_group
from nerve.config import Config
from nerve.errors import NerveError, RequestError

__all__ = ["keys_create", "keys_list", "keys_revoke", "managed_keys_exist"]

T = TypeVar("T")


def _run(config: Config, action: Callable[[KeyStore], Awaitable[T]]) -> T:
    url = config.storage.url

    async def main() -> T:
        store = keystore_from_url(url)
        await open_store(store, url)
        try:
            return await action(store)
        finally:
            await store.close()

    try:
        return asyncio.run(main())
    except ValueError as e:  # storage.url's scheme
        fail(f"storage.url: {e}")
    except RequestError as e:
        fail(e.message, code=2)
    except NerveError as e:
        fail(e.message)


def managed_keys_exist(config: Config) -> bool:
    """Whether `nerve keys create` made any key in this config's store (revoked ones count:
    the server then requires keys, see nerve.access.keyring)."""

    async def any_key(store: KeyStore) -> bool:
        return bool(await store.all())

    return _run(config, any_key)


def _budget(ctx: click.Context, param: click.Parameter, value: str | None) -> Budget | None:
    try:
        return parse_budget(value) if value is not None else None
    except ValueError as e:
        raise click.BadParameter(str(e)) from None


def _config_names(config: Config) -> set[str]:
    return {k.name for k in config.server.api_keys}


@keys_group.command("create")
@click.option("--name", required=True, help="Who holds the key: 1-64 of A-Z a-z 0-9 _ . : @ -.")
@click.option("--routes", metavar="A,B", help="Route names (globs) it may use. Default: any.")
@click.option(
    "--models", metavar="GLOBS", help='provider/model globs, e.g. "openai/*". Default: any.'
)
@click.option(
    "--users",
    metavar="U1,U2",
    help="Memory users it may act for (the first is its default). Default: any.",
)
@click.option("--rpm", type=click.IntRange(min=1), help="Requests per minute.")
@click.option("--tpm", type=click.IntRange(min=1), help="Tokens per minute.")
@click.option("--max-parallel", type=click.IntRange(min=1), help="Calls in flight at once.")
@click.option(
    "--budget",
    metavar="USD/PERIOD",
    callback=_budget,
    help="Spend limit in USD per day, week, month or total, e.g. 20/month.",
)
@config_option
def keys_create(name: str, routes: str | None, models: str | None, users: str | None,
                rpm: int | None, tpm: int | None, max_parallel: int | None,
                budget: Budget | None, config_path: str | None) -> None:  # fmt: skip
    """Make an API key and print it (once: only its hash is kept).

    Clients send it as `Authorization: Bearer <key>`. Every nerve on the same store accepts it
    within a second; without options it may use everything.

    \b
    Examples:
      nerve keys create --name laptop
      nerve keys create --name ci --routes code,default --models "openai/*" \\
          --users ci-bot --rpm 60 --tpm 100000 --max-parallel 4 --budget 20/month
      KEY=$(nerve keys create --name bot --budget 5/day)
    """
    config = load(config_path)
    fields = {"name": name, "routes": routes, "models": models, "users": users, "rpm": rpm,
              "tpm": tpm, "max_parallel": max_parallel, "budget": budget}  # fmt: skip
    try:
        secret, record = new_key(fields, taken=_config_names(config))
    except RequestError as e:
        fail(e.message, code=2)
    _run(config, lambda store: store.add(record))
    click.echo(secret)
    click.echo(f"nerve: key {name!r} created; it is shown only this once: keep it now", err=True)


@keys_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array of objects.")
@config_option
def keys_list(as_json: bool, config_path: str | None) -> None:
    """List every key: the config file's, then the managed ones, revoked ones included.

    Shows each key's name, last 4 characters, what it may use and its limits; never the key.

    \b
    Examples:
      nerve keys list
      nerve keys list --json | jq '.[] | select(.revoked_at == null) | .name'
    """
    config = load(config_path)
    managed = _run(config, lambda store: store.all())
    views = key_views(config.server.api_keys, managed)
    if as_json:
        click.echo(orjson.dumps(views, option=orjson.OPT_INDENT_2))
        return
    if not views:
        click.echo("no keys: anyone who can reach nerve may use it (`nerve keys create`)", err=True)
        return
    header = ("NAME", "KEY", "FROM", "ROUTES", "MODELS", "USERS", "LIMITS", "BUDGET", "CREATED",
              "REVOKED")  # fmt: skip
    _table([header, *(_row(v) for v in views)])


@keys_group.command("revoke")
@click.argument("name")
@config_option
def keys_revoke(name: str, config_path: str | None) -> None:
    """Revoke the managed key NAME: every nerve on the store refuses it within a second.

    Its name stays taken (spend and logs are kept by name). Keys of the config file are
    removed from the file instead.

    \b
    Example:
      nerve keys revoke ci
    """
    config = load(config_path)
    _run(config, lambda store: revoke_key(store, name, taken=_config_names(config)))
    click.echo(f"revoked key {name!r}")


def _globs(value: list[str] | None) -> str:
    return "any" if value is None else ",".join(value) or "none"


def _when(at: float | None) -> str:
    return dt.datetime.fromtimestamp(at, dt.UTC).strftime("%Y-%m-%d %H:%M") if at else "-"


def _row(view: dict[str, Any]) -> tuple[str, ...]:
    limits = [f"{k}={view[k]}" for k in ("rpm", "tpm", "max_parallel") if view[k] is not None]
    budget = view["budget"]
    return (
        view["name"], view["key"] or "-", "store" if view["managed"] else "config",
        _globs(view["routes"]), _globs(view["models"]), _globs(view["users"]),
        " ".join(limits) or "-", f"${budget['usd']:g}/{budget['period']}" if budget else "-",
        _when(view["created_at"]), _when(view["revoked_at"]),
    )  # fmt: skip


def _table(rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        click.echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
