"""`nerve doctor`: check a config end to end and say what to fix.

Each check is one line, `ok` or `fix` (what is wrong, then what to do): the config itself (every
problem, each at its key path), each provider's key and whether its model list answers, the
store at `storage.url`, Redis when `redis.url` is set, the trace collector when
`telemetry.otlp_endpoint` is (sent an empty export: no span), and the voice engines. Nothing is
changed; exit 1 when anything needs fixing.
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from typing import Any

import click
import orjson

from nerve.cli.base import cli
from nerve.config import Config, load_config
from nerve.errors import ConfigError, NerveError

__all__ = ["doctor"]

TIMEOUT = 5.0  # seconds for each network check


@dataclass(frozen=True, slots=True)
class Check:
    what: str
    ok: bool
    detail: str  # what was found, and for a failure what to do

    def line(self) -> str:
        return f"{'ok ' if self.ok else 'fix'}  {self.what}: {self.detail}"


async def _provider(config: Config, session: Any, index: int) -> Check:
    from nerve.gateway.providers import build_provider

    p = config.providers[index]
    what = f"provider {p.name} ({p.base_url})"
    if p.missing_key:
        return Check(what, False, f"no API key: {p.missing_key_why}")
    try:
        async with asyncio.timeout(TIMEOUT):
            await build_provider(p, session).probe()
    except TimeoutError:
        return Check(what, False, f"no answer within {TIMEOUT:g} s: is the URL right?")
    except NerveError as e:
        return Check(what, False, f"{e.message}; check base_url and the key")
    return Check(what, True, "its model list answers")


async def _store(config: Config) -> Check:
    from nerve.memory.backends import store_from_url

    what = f"store {config.storage.url.split('@')[-1]}"  # never print a password
    try:
        store = store_from_url(config.storage.url)
        async with asyncio.timeout(TIMEOUT):
            await store.open()
        await store.close()
    except Exception as e:  # any failure to open is what the user must fix
        return Check(what, False, f"{type(e).__name__}: {e}; check storage.url")
    return Check(what, True, "opens, schema up to date")


async def _redis(config: Config) -> Check | None:
    if not config.redis.url:
        return None
    from nerve.gateway.resilience.shared import redacted

    what = f"redis {redacted(config.redis.url)}"
    try:
        from redis.asyncio import Redis
    except ImportError:
        return Check(what, False, "the redis client is not installed: pip install 'nerve[redis]'")
    client = Redis.from_url(config.redis.url, socket_timeout=TIMEOUT)
    try:
        async with asyncio.timeout(TIMEOUT):
            await client.ping()
    except Exception as e:
        return Check(what, False, f"{type(e).__name__}: {e}; is Redis running there?")
    finally:
        await client.aclose()
    return Check(what, True, "answers PING")


async def _telemetry(config: Config, session: Any) -> Check | None:
    settings = config.telemetry
    if not settings.otlp_endpoint:
        return None
    from nerve.telemetry import require_telemetry
    from nerve.telemetry.lifecycle import traces_url

    url = traces_url(settings.otlp_endpoint)
    what = f"telemetry {url}"
    try:
        require_telemetry()
    except ConfigError as e:
        return Check(what, False, e.message)
    # An empty ExportTraceServiceRequest (zero bytes of protobuf): every collector takes it.
    headers = {**settings.headers, "content-type": "application/x-protobuf"}
    try:
        async with asyncio.timeout(TIMEOUT):
            async with session.post(url, data=b"", headers=headers) as answer:
                status = answer.status
    except TimeoutError:
        return Check(what, False, f"no answer within {TIMEOUT:g} s: is the collector running?")
    except Exception as e:  # refused, unknown host...
        return Check(what, False, f"{type(e).__name__}: {e}; is the collector running there?")
    if status >= 300:
        hint = "check telemetry.headers (a token?)" if status in (401, 403) else "check the URL"
        return Check(what, False, f"the collector answered {status}; {hint}")
    return Check(what, True, "the collector takes an export")


def _voice(config: Config) -> list[Check]:
    from nerve.voice import Voice

    out = []
    for kind, report in Voice.from_config(config).engines().items():
        usable = [n for n, e in report["engines"].items() if e["available"]]
        if usable:
            out.append(Check(f"voice {kind}", True, ", ".join(usable)))
        else:
            why = "; ".join(f"{n}: {e['reason']}" for n, e in report["engines"].items())
            out.append(Check(f"voice {kind}", False, f"no engine available ({why})"))
    return out


async def _checks(config: Config) -> list[Check]:
    import aiohttp

    async with aiohttp.ClientSession() as session:
        asked = (_provider(config, session, i) for i in range(len(config.providers)))
        found = list(await asyncio.gather(*asked))
        traces = await _telemetry(config, session)
    found.append(await _store(config))
    found += [c for c in (await _redis(config), traces) if c is not None]
    return found + _voice(config)


@cli.command()
@click.option("--config", "config_path", metavar="FILE", help="Config file (YAML).")
@click.option("--json", "as_json", is_flag=True, help="Print the checks as JSON.")
def doctor(config_path: str | None, as_json: bool) -> None:
    """Check a config end to end: keys, providers, store, Redis, traces, voice; say what to fix.

    \b
      .venv/bin/nerve doctor --config nerve.yaml    # exit 1 when something needs fixing
    """
    try:
        config = load_config(config_path)
    except ConfigError as e:
        checks = [Check(f"config {path}", False, message) for path, message in e.problems]
        checks = checks or [Check("config", False, e.message)]
    else:
        checks = [Check("config", True, "valid"), *asyncio.run(_checks(config))]
    if as_json:
        rows = [{"check": c.what, "ok": c.ok, "detail": c.detail} for c in checks]
        click.echo(orjson.dumps({"ok": all(c.ok for c in checks), "checks": rows}))
    else:
        for check in checks:
            click.echo(check.line())
    if not all(c.ok for c in checks):
        sys.exit(1)
