"""Making, revoking and showing managed keys: what `nerve keys` and the admin Access page share.

A key is `nrv-` and 43 random URL-safe characters (256 bits), returned once by `new_key` and
known afterwards only by its SHA-256 and last 4 characters. Its policy is validated exactly as a
`server.api_keys` entry of the config file is (`KeyConfig`), so a managed key can express what a
config key can, and nothing else. Names are unique across both: a managed key may not take the
name of a config key (spend and logs are kept by name).
"""

from __future__ import annotations

import math
import secrets
import time
from collections.abc import Collection, Mapping, Sequence
from typing import Any, cast, get_args

from pydantic import ValidationError

from nerve.access.keyring import principal_from_config
from nerve.access.keystore import KeyStore, ManagedKey
from nerve.access.principal import Budget, Period, digest
from nerve.config_sections import KeyConfig
from nerve.errors import NotFound, RequestError

__all__ = ["KEY_PREFIX", "key_views", "new_key", "parse_budget", "revoke_key"]

KEY_PREFIX = "nrv-"
PERIODS: tuple[str, ...] = get_args(Period)
_LISTS = ("routes", "models", "users")
_NAME_RULE = "1 to 64 letters, digits or the characters _ . : @ -"


def parse_budget(text: str) -> Budget:
    """`20/month` → Budget(20.0, "month"): USD (a leading `$` is allowed) per day, week, month
    or total (once, never reset). ValueError saying so otherwise."""
    usd, slash, period = text.strip().removeprefix("$").partition("/")
    try:
        amount = float(usd)
    except ValueError:
        amount = math.nan
    if not slash or period not in PERIODS or not (math.isfinite(amount) and amount > 0):
        raise ValueError(
            f"budget {text!r}: write USD/PERIOD, e.g. 20/month "
            f"(USD above 0; PERIOD one of {', '.join(PERIODS)})"
        )
    return Budget(amount, cast(Period, period))


def _listed(value: Any) -> Any:
    """Comma-separated text as a list; empty text as "not given" (an empty list allows none)."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()] or None
    return value


def _budget(value: Any) -> Any:
    if isinstance(value, str):
        try:
            value = parse_budget(value)
        except ValueError as e:
            raise RequestError(str(e), param="budget", code="invalid_key") from None
    if isinstance(value, Budget):
        return {"usd": value.usd, "period": value.period}
    return value


def _invalid(error: ValidationError) -> RequestError:
    first = error.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or "body"
    message = first["msg"].removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        message = f"unknown field (known: name, {', '.join(_LISTS)}, rpm, tpm, max_parallel, "
        message += "budget)"
    elif field == "name" and first["type"] == "string_pattern_mismatch":
        message = _NAME_RULE
    return RequestError(f"{field}: {message}", param=field, code="invalid_key")


def new_key(
    fields: Mapping[str, Any], *, taken: Collection[str] = (), now: float | None = None
) -> tuple[str, ManagedKey]:
    """A new key and its record, not yet stored: (the key, shown once; the record).

    `fields`: `name`, and optionally `routes`, `models`, `users` (lists, or comma-separated
    text), `rpm`, `tpm`, `max_parallel` (integers from 1) and `budget` ("20/month", a Budget or
    {usd, period}); None means not given. `taken`: the config file's key names. Raises
    RequestError naming the field.
    """
    if "key" in fields:
        raise RequestError("key: keys are generated, not given", param="key", code="invalid_key")
    given = {k: v for k, v in fields.items() if v is not None}
    given = {k: _listed(v) if k in _LISTS else v for k, v in given.items()}
    if "budget" in given:
        given["budget"] = _budget(given["budget"])
    secret = KEY_PREFIX + secrets.token_urlsafe(32)
    try:
        entry = KeyConfig.model_validate({**given, "key": secret})
    except ValidationError as e:
        raise _invalid(e) from None
    if entry.name in taken:
        raise RequestError(
            f"a key named {entry.name!r} is in the config file (server.api_keys)",
            param="name",
            code="key_exists",
        )
    principal = principal_from_config(entry, managed=True)
    created = time.time() if now is None else now
    return secret, ManagedKey(digest(secret.encode()), principal, created)


async def revoke_key(
    store: KeyStore, name: str, *, taken: Collection[str] = (), now: float | None = None
) -> None:
    """Revoke the managed key `name` from now on; NotFound if no active key has that name,
    RequestError if it is one of the config file's (`taken`: their names)."""
    if name in taken:
        raise RequestError(
            f"key {name!r} is in the config file: remove it from server.api_keys there",
            param="name",
            code="config_key",
        )
    if await store.revoke(name, time.time() if now is None else now):
        return
    if any(k.principal.name == name for k in await store.all()):
        raise NotFound(f"key {name!r} is revoked already", code="key_not_found")
    raise NotFound(f"no key named {name!r}", code="key_not_found")


def key_views(config: Sequence[KeyConfig], managed: Sequence[ManagedKey]) -> list[dict[str, Any]]:
    """Every key as it may be shown (never the key itself): the config file's first, then the
    managed ones, oldest first; each with its policy, `managed`, `created_at`, `revoked_at`."""
    views = [
        {**principal_from_config(k).view(), "created_at": None, "revoked_at": None} for k in config
    ]
    return views + [k.view() for k in managed]
