"""The exact-match response cache (SPEC OB-2): what a hit costs next to a miss, over HTTP.

    python bench/cache.py [--rounds 5] [--requests 200] [--chunk-delay-ms 0] [--no-redis]

A real `nerve serve` in front of bench/protocol_upstream.py (on loopback, answering at once:
no added latency unless --chunk-delay-ms, which only spaces a stream's events), once with the
cache in the store (SQLite, the default) and once in Redis (127.0.0.1:6379/15, if reachable).
Three routes to the same model: `plain` (no cache), `cached` (cache: {ttl_seconds: 3600}).
Per backend and round, at concurrency 1 over one keep-alive connection each:

- no cache: `plain`, a fresh body each request;
- miss: `cached`, a fresh body each request (lookup, upstream call, entry written before the
  answer's last byte);
- hit: `cached`, the same body each request (the first, unmeasured, stores it).

Whole answers (latency to the last byte) and streams (TTFB, TTLB); the chat body is ~1 KB at
temperature 0, the answer ~0.4 KB (a stream: 24 events). Medians of every sample; each
response's `x-nerve-cache` is checked (a hit must say hit, a miss miss). With an upstream this
fast the miss is the worst case for the cache's relative gain: a real model call takes
hundreds of milliseconds, all of which a hit saves.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
import uuid
from pathlib import Path

import orjson
import uvloop

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:  # `python bench/cache.py` puts bench/ on the path
    sys.path.insert(0, str(HERE.parent))

from bench.gateway import HOST, Processes, log, signals_as_interrupt  # noqa: E402
from bench.loadgen import SYSTEM_PROMPT, USER_PROMPT, _Connection, build_request  # noqa: E402
from bench.protocols import med, ratio, start  # noqa: E402

CONFIG = """\
# Written by bench/cache.py for one benchmark run.
providers:
  - {{name: oa, protocol: openai, base_url: "http://{host}:{port}/v1", api_key: "sk-bench"}}
routes:
  - {{name: default, model: {{provider: oa, model: bench-model}}}}
  - {{name: plain, model: {{provider: oa, model: bench-model}}}}
  - {{name: cached, model: {{provider: oa, model: bench-model}}, cache: {{ttl_seconds: 3600}}}}
limits:
  rate: {{window_requests: 100000000, burst: 100000000, refill_per_second: 100000000,
          max_concurrent: 100000}}
memory: {{enabled: false}}
probes: {{interval_seconds: 0}}
"""
REDIS_URL = "redis://127.0.0.1:6379/15"
PATH = "/v1/chat/completions"
KINDS = ("no cache", "miss", "hit")


def body(route: str, stream: bool, n: int | None) -> bytes:
    """The ~1 KB chat request; `n` makes it unlike any other (None: always the same)."""
    tail = "" if n is None else f" (request {n})"
    return orjson.dumps({
        "model": route, "temperature": 0, "max_tokens": 256, "stream": stream,
        "messages": [{"role": "system", "content": SYSTEM_PROMPT},
                     {"role": "user", "content": USER_PROMPT + tail}],
    })  # fmt: skip


class _Timed(_Connection):
    """loadgen's keep-alive connection, noting the first body byte and x-nerve-cache."""

    first, body, cache = 0.0, b"", b""

    def on_header(self, name: bytes, value: bytes) -> None:
        if name.lower() == b"x-nerve-cache":
            self.cache = value

    def on_body(self, body: bytes) -> None:
        self.first = self.first or time.perf_counter()
        self.body += body


Timings = list[tuple[float, float]]  # (TTFB, TTLB) in ms


async def _round(url: str, kind: str, stream: bool, n: int, seq: list[int]) -> Timings:
    route = "plain" if kind == "no cache" else "cached"
    want = {"no cache": b"", "miss": b"miss", "hit": b"hit"}[kind]
    fixed = build_request(url, body(route, stream, None), None)
    host, port, _ = fixed
    _, conn = await asyncio.get_running_loop().create_connection(_Timed, host, port)
    timings: Timings = []
    try:
        for i in range(n + 2):  # two unmeasured: the connection warms up, the hit is stored
            if kind == "hit":
                raw = fixed[2]
            else:
                seq[0] += 1
                raw = build_request(url, body(route, stream, seq[0]), None)[2]
            conn.first, conn.body, conn.cache = 0.0, b"", b""
            t0 = time.perf_counter()
            status = await asyncio.wait_for(conn.request(raw), 30)
            t1 = time.perf_counter()
            if status != 200:
                raise RuntimeError(f"{kind}: HTTP {status}: {conn.body[:200]!r}")
            if i >= 2:
                if conn.cache != want:
                    raise RuntimeError(f"{kind}: x-nerve-cache {conn.cache!r}, wanted {want!r}")
                timings.append(((conn.first - t0) * 1000, (t1 - t0) * 1000))
    finally:
        assert conn.transport is not None
        conn.transport.close()
    return timings


def measure(url: str, args: argparse.Namespace) -> dict[tuple[str, bool], Timings]:
    out: dict[tuple[str, bool], Timings] = {(k, s): [] for k in KINDS for s in (False, True)}
    seq = [int(time.time())]  # fresh bodies, unlike any a previous run stored
    for r in range(args.rounds):
        for stream in (False, True):
            for kind in KINDS:  # interleaved, round by round
                out[kind, stream] += uvloop.run(_round(url, kind, stream, args.requests, seq))
        log(f"round {r + 1}/{args.rounds}")
    return out


def table(results: dict[str, dict[tuple[str, bool], Timings]], n: int) -> str:
    rows = [
        f"Concurrency 1, one keep-alive connection; medians over {n} requests per cell; ms. "
        "Whole answers: latency to the last byte; streams: TTLB (TTFB in brackets).",
        "",
        "| backend | answer | no cache | miss | hit | hit / miss | miss − no cache |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for backend, runs in results.items():
        for stream in (False, True):
            last = {k: med(x for _, x in runs[k, stream]) for k in KINDS}
            first = {k: med(f for f, _ in runs[k, stream]) for k in KINDS}
            cell = {k: f"{last[k]:.3f}" + (f" ({first[k]:.3f})" if stream else "") for k in KINDS}
            rows.append(
                f"| {backend} | {'stream' if stream else 'whole'} | {cell['no cache']} "
                f"| {cell['miss']} | {cell['hit']} | {ratio(last['hit'], last['miss'])} "
                f"| {last['miss'] - last['no cache']:+.3f} |"
            )
    return "\n".join(rows)


def redis_reachable() -> bool:
    try:
        import redis

        with redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1) as client:
            return bool(client.ping())
    except Exception:
        return False


def forget(prefix: str) -> None:
    import redis

    with redis.Redis.from_url(REDIS_URL) as client:
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            client.delete(*keys)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python bench/cache.py",
                                     description=__doc__.split("\n\n")[0])  # fmt: skip
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=200, help="per cell and round")
    parser.add_argument("--chunk-delay-ms", type=float, default=0.0,
                        help="upstream sleep between stream events (default 0)")  # fmt: skip
    parser.add_argument("--no-redis", action="store_true", help="the store only")
    parser.add_argument("--startup-timeout", type=float, default=30.0)
    args = parser.parse_args(argv)
    backends = {"SQLite store": ""}
    prefix = f"nerve-bench-cache:{uuid.uuid4().hex[:8]}:"
    if not args.no_redis and redis_reachable():
        backends["Redis"] = f'redis: {{url: "{REDIS_URL}", key_prefix: "{prefix}"}}\n'
    elif not args.no_redis:
        log(f"Redis is not reachable at {REDIS_URL}: the store only")
    results = {}
    with signals_as_interrupt(), tempfile.TemporaryDirectory(prefix="nerve-cache-") as tmp:
        try:
            for name, extra in backends.items():
                workdir = Path(tmp) / name.split()[0].lower()
                workdir.mkdir()
                procs = Processes(workdir)
                try:
                    _, port = start(procs, workdir, args, CONFIG + extra.replace("{", "{{")
                                    .replace("}", "}}"))  # fmt: skip
                    log(f"{name}: measuring")
                    results[name] = measure(f"http://{HOST}:{port}{PATH}", args)
                finally:
                    procs.close()
            print(table(results, args.rounds * args.requests))
            return 0
        except KeyboardInterrupt:
            log("interrupted; stopping the upstream and the gateway")
            return 130
        except (RuntimeError, OSError) as e:
            log(f"bench failed: {e}")
            return 1
        finally:
            if "Redis" in backends:
                forget(prefix)


if __name__ == "__main__":
    sys.exit(main())
