"""Benchmark what API keys cost a request: the boundary, the key's limits and its budget.

    python bench/access.py [--part micro|macro|both] [--iterations 20000] [--row-seconds 4]
        [--rounds 3] [--seconds 2] [--redis-url redis://127.0.0.1:6379/15]

1. Micro, in process, no HTTP: µs per call (p50, p99, mean over --iterations or --row-seconds,
   whichever ends first, after a tenth as many unmeasured) of `Boundary.admit` (no keys: the
   Host check; a valid key among 100; a wrong key of the same length: same cost, a 401) and
   of one request's `KeyGate` cycle (restrict; admit: server limits, key limits, budget hold;
   leave: settle, release) for a key with no policy, limits, a budget, both: limits in process
   with SqlLedger on a temp SQLite file, or both in Redis (build_resilience with redis.url,
   RedisLedger). "added" counts from the same backend's key without policy.
2. Macro: `nerve serve` before bench/upstream.py in four configs: (A) no Redis, no keys; (B)
   redis.url, no keys; (C) redis.url + an object key with rpm, max_parallel and a huge budget
   (prices set); (D) no Redis + that key (SqlLedger on SQLite). The key is `sk-bench`, what
   bench/loadgen.py sends by default; C and D must answer a wrong key with 401. Each round
   runs direct (-> upstream) and every config: req/s at concurrency 8, latency at 1, each in a
   fresh load-generator process (bench/gateway.py's `load`). Target: C >= 0.7x A.
3. Redis round trips: MONITOR over 200 sequential requests to B and to C counts the commands
   naming the config's key prefix that the gateway sent (a round trip each: the request path
   pipelines nothing) and that its Lua scripts ran; the stats flush and heartbeat show under
   their own keys. Last, each ledger's spend says how many requests it billed.

Upstream, Redis, gateways and load generators share this machine's cores: compare ratios within
a run. The defaults take about 3 minutes. Redis keys go under a fresh prefix, deleted at the
end; every process started is stopped on exit, error or Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from functools import partial
from itertools import product
from pathlib import Path
from typing import Any

import aiosqlite
import orjson
import redis
import uvloop
from redis.asyncio import Redis

from nerve.access import Boundary, Keyring
from nerve.access.keyring import principal_from_config
from nerve.access.ledger_redis import RedisLedger
from nerve.access.ledger_sql import SqlLedger
from nerve.config import Config, KeyConfig, ServerConfig, Target
from nerve.errors import AuthError
from nerve.gateway.admission import KeyGate
from nerve.gateway.core import Plan
from nerve.gateway.state import build_resilience
from nerve.gateway.stats import Stats, Usage
from nerve.hostguard import HostGuard

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:  # `python bench/access.py` puts bench/ itself on the path
    sys.path.insert(0, str(HERE.parent))

from bench import gateway as gw  # noqa: E402
from bench import replicas  # noqa: E402
from bench.loadgen import chat_request_body  # noqa: E402

KEY = "sk-bench"  # what bench/loadgen.py (and gateway.smoke_test) send
PRICE = {"input": 0.15, "output": 0.6}  # USD per million tokens
PRICES = {"fake/bench-model": PRICE}
USAGE = (212, 14)  # prompt and completion tokens of every bench/upstream.py answer
PER_REQUEST = (USAGE[0] * PRICE["input"] + USAGE[1] * PRICE["output"]) / 1e6
LIMITS = {"rpm": 100_000_000, "max_parallel": 100_000}
BUDGET = {"budget": {"usd": 1e9, "period": "month"}}
POLICIES: dict[str, dict[str, Any]] = {"no policy": {}, "rpm + max_parallel": LIMITS,
            "budget only": BUDGET, "rpm + max_parallel + budget": {**LIMITS, **BUDGET}}  # fmt: skip
CONFIGS = {  # name: (what, redis.url, the key)
    "A": ("no Redis, no keys", False, False),
    "B": ("Redis, no keys", True, False),
    "C": ("Redis + key (rpm, max_parallel, budget)", True, True),
    "D": ("no Redis + key (SQL ledger)", False, True),
}
Timed = Callable[[], Awaitable[Any]]


# --- micro -------------------------------------------------------------------------------


async def timings(call: Timed, args: argparse.Namespace) -> list[int]:
    """ns per `call()`: --iterations or --row-seconds' worth, after a tenth of it unmeasured."""
    clock, spent = time.perf_counter_ns, []
    for count, seconds, keep in ((args.iterations // 10, args.row_seconds / 10, False),
                                 (args.iterations, args.row_seconds, True)):  # fmt: skip
        stop = clock() + int(seconds * 1e9)
        for _ in range(count):
            start = clock()
            await call()
            end = clock()
            if keep:
                spent.append(end - start)
            if end > stop:
                break
    return spent


def row(what: str, spent: list[int], base: float | None = None) -> tuple[str, float]:
    """A table row and its p50 in µs; `base`: the p50 the "added" column counts from."""
    spent, n = sorted(spent), len(spent)
    p50, p99, mean = spent[n // 2] / 1e3, spent[int(n * 0.99)] / 1e3, statistics.fmean(spent) / 1e3
    added = "" if base is None else f"{p50 - base:+.1f}"
    return f"| {what} | {n} | {p50:.1f} | {p99:.1f} | {mean:.1f} | {added} |", p50


def scope(token: str | None) -> dict[str, Any]:
    """What uvicorn hands the boundary for loadgen's request (its headers, in its order)."""
    headers = [(b"host", b"127.0.0.1:8080"), (b"content-type", b"application/json"),
               (b"accept", b"application/json"), (b"content-length", b"1013")]  # fmt: skip
    if token is not None:
        headers.insert(3, (b"authorization", b"Bearer " + token.encode()))
    return {"type": "http", "path": gw.CHAT_PATH, "headers": headers, "client": (gw.HOST, 50000)}


def boundary_calls() -> dict[str, Timed]:
    keys = [KeyConfig(name=f"k{i}", key=f"sk-{secrets.token_urlsafe(24)}") for i in range(100)]
    valid, wrong = keys[57].key, f"sk-{secrets.token_urlsafe(24)}"  # of the same length
    guard = HostGuard(ServerConfig())
    nobody, ring = Keyring([]), Keyring(keys)
    without, boundary = (Boundary(None, lambda k=k: k, lambda: guard) for k in (nobody, ring))

    def call(fn: Callable[[Any], object], arg: Any, refused: bool = False) -> Timed:
        async def timed() -> None:
            try:
                fn(arg)
            except AuthError:
                if not refused:
                    raise
            else:
                assert not refused, "the wrong key was admitted"

        return timed

    return {
        "Boundary.admit, no keys (Host check)": call(without.admit, scope(None)),
        "Boundary.admit, valid key of 100": call(boundary.admit, scope(valid)),
        "Boundary.admit, wrong key (401 AuthError)": call(boundary.admit, scope(wrong), True),
        "Keyring.resolve, valid key": call(ring.resolve, valid.encode()),
        "Keyring.resolve, wrong key": call(ring.resolve, wrong.encode()),
    }


async def gate_rows(backend: str, args: argparse.Namespace, prefix: str, tmp: Path) -> list[str]:
    """One request's KeyGate cycle per policy, limits and ledger on `backend` ("sqlite": limits
    in process and SqlLedger; "redis": both in Redis), then one bare round trip to it."""
    redis_url = args.redis_url if backend == "redis" else None
    config = Config.model_validate(config_of("http://127.0.0.1:9/v1", redis_url, prefix, False))
    resilience = build_resilience(config, Stats(), clock=time.monotonic)
    shared, path = resilience.shared, tmp / "ledger.db"
    body, target = orjson.loads(chat_request_body()), Target(provider="fake", model="bench-model")
    plan, usage = Plan("default", (target,), None), Usage(*USAGE, 0, sum(USAGE))
    where = "limits in process, SqlLedger on SQLite" if shared is None else "Redis"
    ledger = SqlLedger(f"sqlite:///{path}") if shared is None else None
    gate = KeyGate(resilience, ledger or RedisLedger(shared.redis, prefix=prefix), config.prices)

    def cycle(principal: Any) -> Timed:
        async def call() -> None:
            ticket = await gate.admit(principal, body, gate.restrict(principal, plan))
            await gate.leave(ticket, target=target, usage=usage, answered=True)

        return call

    opened: Any = shared or ledger
    await opened.open()
    try:
        rows, base = [], None
        for i, (what, policy) in enumerate(POLICIES.items()):
            key = principal_from_config(KeyConfig(name=f"{backend}{i}", key="k", **policy))
            line, p50 = row(f"KeyGate, {what} ({where})", await timings(cycle(key), args), base)
            rows.append(line)
            base = p50 if base is None else base
        if shared is not None:
            get = shared.redis.get
            rows.append(row("one Redis GET (redis-py)", await timings(lambda: get("-"), args))[0])
        else:
            async with aiosqlite.connect(path) as db:
                spent = await timings(lambda: db.execute_fetchall("SELECT 1"), args)
                rows.append(row("one SQLite statement (SELECT 1, aiosqlite)", spent)[0])
    finally:
        await opened.close()
    return rows


async def micro(args: argparse.Namespace, prefix: str, tmp: Path) -> str:
    rows = [row(what, await timings(call, args))[0] for what, call in boundary_calls().items()]
    for backend in ("sqlite", "redis"):
        rows += await gate_rows(backend, args, prefix + "micro:", tmp)
    return "\n".join([
        f"Micro: one call {args.iterations} times or for {args.row_seconds:g} s (n: whichever came "
        "first), one at a time on uvloop. KeyGate cycle: restrict + admit (server limits, key "
        "limits, budget hold) + leave (settle, release); added: over the backend's no-policy row.",
        "",
        "| call | n | p50 µs | p99 µs | mean µs | added p50 µs |",
        "|---|---:|---:|---:|---:|---:|",
        *rows,
    ])  # fmt: skip


# --- macro -------------------------------------------------------------------------------


def config_of(base_url: str, redis_url: str | None, prefix: str, key: bool) -> dict[str, Any]:
    """bench/replicas.py's config (server limits wide open), prices set, and the key if asked."""
    text = replicas.config_text(base_url, window=replicas.BIG, redis_url=redis_url, prefix=prefix)
    config: dict[str, Any] = json.loads(text)
    config["prices"] = PRICES
    if key:
        config["server"] = {"api_keys": [{"name": "bench", "key": KEY, **LIMITS, **BUDGET}]}
    return config


def start(procs: gw.Processes, name: str, base_url: str, redis_url: str | None, prefix: str,
          key: bool) -> str:  # fmt: skip
    path = procs.workdir / f"{name}.json"
    storage = {"url": f"sqlite:///{path.with_suffix('.db')}"}
    path.write_text(json.dumps({**config_of(base_url, redis_url, prefix, key), "storage": storage}))
    port = gw.free_port()
    cmd = shlex.split(gw.default_gateway_cmd().format(config=path, port=port))
    proc = procs.start(f"nerve-{name}", cmd, cwd=procs.workdir)
    url = f"http://{gw.HOST}:{port}{gw.CHAT_PATH}"
    try:
        gw.wait_for_health(f"http://{gw.HOST}:{port}/health", proc, 30, f"config {name}")
        gw.smoke_test(url)
        if key and asyncio.run(replicas.admitted([url], 1, 1, "sk-wrong")) != Counter({401: 1}):
            raise RuntimeError(f"config {name} did not refuse a wrong key with 401")
    except RuntimeError as e:
        raise RuntimeError(f"{e}\nconfig {name} log:\n{procs.log_tail(proc)}") from None
    return url


def macro(procs: gw.Processes, base_url: str, prefix: str, args: argparse.Namespace) -> str:
    urls = {"direct": f"{base_url}/chat/completions"}
    for name, (_, shared, key) in CONFIGS.items():
        redis_url = args.redis_url if shared else None
        urls[name] = start(procs, name, base_url, redis_url, f"{prefix}{name}:", key)
    runs: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {k: [] for k in urls}
    for r, (name, url) in product(range(1, args.rounds + 1), urls.items()):
        eight, one = (gw.load(url, c, args.seconds, args.warmup, "raw") for c in (8, 1))
        if first := eight["first_error"] or one["first_error"]:
            raise RuntimeError(f"{name}: {eight['errors'] + one['errors']} errors, first: {first}")
        runs[name].append((eight, one))
        gw.log(f"round {r}/{args.rounds}  {name:<6} {eight['rps']:7.0f} req/s  "
               f"p50 {one['p50_ms']:.3f} ms  p99 {one['p99_ms']:.3f} ms")  # fmt: skip
    med = {k: {"rps": statistics.median(e["rps"] for e, _ in v),
               **{m: statistics.median(o[f"{m}_ms"] for _, o in v) for m in ("p50", "p99")}}
           for k, v in runs.items()}  # fmt: skip
    lines = [
        f"Macro: medians over {args.rounds} rounds of {args.seconds:g} s; req/s at concurrency 8, "
        "latency at concurrency 1 (raw load generator).",
        "",
        "| config | req/s | x (A) | x direct | p50 ms | added p50 ms | p99 ms |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    a, direct = med["A"], med["direct"]
    for name, m in med.items():
        what = f"{name}: {CONFIGS[name][0]}" if name in CONFIGS else "direct (upstream)"
        lines.append(
            f"| {what} | {m['rps']:.0f} | {m['rps'] / a['rps']:.2f}x "
            f"| {m['rps'] / direct['rps']:.2f}x | {m['p50']:.3f} | {m['p50'] - direct['p50']:+.3f} "
            f"| {m['p99']:.3f} |"
        )
    lines += ["", round_trips(urls, prefix, args.redis_url), ""]
    for name, usd in asyncio.run(billed(args.redis_url, prefix, procs.workdir)).items():
        counted = sum(e["ok"] + o["ok"] for e, o in runs[name])
        lines.append(f"Ledger of {name}: billed ${usd:.4f}, {usd / PER_REQUEST:.0f} requests' "
                     f"worth; load generators counted {counted} (+ warmups, checks)")  # fmt: skip
    return "\n".join(lines)


def round_trips(urls: dict[str, str], prefix: str, redis_url: str, requests: int = 200) -> str:
    lines = [
        f"Redis per request: MONITOR over {requests} sequential requests, the commands naming "
        "the config's key prefix, by command and key (rl: a rate limiter, rl-own: the key's "
        "own, ledger, br: breaker, cd: cooldown; others are background: stats flush, heartbeat).",
        "",
        "| config | round trips (gateway's commands) | by command and key | inside Lua |",
        "|---|---:|---|---:|",
    ]
    for name in ("B", "C"):
        where = f"{prefix}{name}:"
        seen = monitored(redis_url, where, partial(send, urls[name], requests))
        sent = Counter(kind(c["command"], where) for c in seen if c["client_type"] != "lua")
        inner = sum(1 for c in seen if c["client_type"] == "lua")
        by = ", ".join(f"{what} {n / requests:.2f}" for what, n in sorted(sent.items()))
        trips = sum(sent.values()) / requests
        lines.append(f"| {name} | {trips:.2f} | {by} | {inner / requests:.2f} |")
    return "\n".join(lines)


def kind(command: str, prefix: str) -> str:
    """ "EVALSHA rl-own" for `EVALSHA <sha> 3 <prefix>rl:{key:bench:own}:w ...`."""
    words = command.split(" ")
    key = next((w[len(prefix) :] for w in words if w.startswith(prefix)), "")
    return f"{words[0].upper()} {key.split(':', 1)[0]}{'-own' if ':own}' in key else ''}"


def send(url: str, requests: int) -> None:
    statuses = asyncio.run(replicas.admitted([url], requests, 1, KEY))
    if statuses != Counter({200: requests}):
        raise RuntimeError(f"{url}: unexpected statuses {dict(statuses)}")


def monitored(redis_url: str, prefix: str, during: Callable[[], None]) -> list[dict[str, Any]]:
    """The commands MONITOR saw name `prefix` while `during()` ran."""
    end, seen = f"{prefix}monitor-end:{uuid.uuid4().hex}", []
    with redis.Redis.from_url(redis_url) as client, client.monitor() as monitor:

        def read() -> None:
            while end not in (command := monitor.next_command())["command"]:
                if prefix in command["command"]:
                    seen.append(command)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        try:
            during()
        finally:
            client.exists(end)  # the reader's cue to stop
            reader.join(10)
    return seen


async def billed(redis_url: str, prefix: str, workdir: Path) -> dict[str, float]:
    """What the key spent in C (RedisLedger) and D (SqlLedger on D.db)."""
    key = principal_from_config(KeyConfig(name="bench", key=KEY, **LIMITS, **BUDGET))
    async with Redis.from_url(redis_url, decode_responses=True) as client:
        (c,) = await RedisLedger(client, prefix=f"{prefix}C:").spend([key])
    sql = SqlLedger(f"sqlite:///{workdir / 'D.db'}")
    await sql.open()
    try:
        (d,) = await sql.spend([key])
    finally:
        await sql.close()
    return {"C": c.usd, "D": d.usd}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    summary, _, more = (__doc__ or "\n\n\n\n").split("\n\n", 2)  # more: from "1. Micro"
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        "python bench/access.py", description=summary, epilog=more, formatter_class=raw
    )
    add = parser.add_argument
    add("--part", choices=("micro", "macro", "both"), default="both", help="(default: both)")
    add("--iterations", type=int, default=20_000, help="calls per micro row (20000)")
    add("--row-seconds", type=float, default=4.0, help="at most this long per micro row (4)")
    add("--rounds", type=int, default=3, help="macro rounds (default: 3)")
    add("--seconds", type=float, default=2.0, help="measured s per load run (2)")
    add("--warmup", type=float, default=0.5, help="unmeasured s per load run (0.5)")
    add("--redis-url", default="redis://127.0.0.1:6379/15", help="the Redis for B, C, micro")
    args = parser.parse_args(argv)
    if args.iterations < 100 or args.rounds < 1 or args.warmup < 0:
        parser.error("--iterations must be >= 100, --rounds >= 1, --warmup >= 0")
    if min(args.row_seconds, args.seconds) <= 0:
        parser.error("--row-seconds and --seconds must be > 0")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    prefix = f"nerve-bench:{uuid.uuid4().hex[:8]}:"
    with gw.signals_as_interrupt(), tempfile.TemporaryDirectory(prefix="nerve-bench-") as tmp:
        procs = gw.Processes(Path(tmp))
        try:
            if args.part in ("micro", "both"):
                print(uvloop.run(micro(args, prefix, Path(tmp))) + "\n", flush=True)
            if args.part in ("macro", "both"):
                _, up_port = gw.start_server(procs, "upstream", [])
                print(macro(procs, f"http://{gw.HOST}:{up_port}/v1", prefix, args))
            return 0
        except KeyboardInterrupt:
            gw.log("interrupted; stopping every process")
            return 130
        except (RuntimeError, OSError, subprocess.SubprocessError, redis.RedisError) as e:
            gw.log(f"bench failed: {e}")
            return 1
        finally:
            procs.close()
            replicas.forget(args.redis_url, prefix)


if __name__ == "__main__":
    sys.exit(main())
