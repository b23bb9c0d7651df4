"""Benchmark nerve replicas sharing their state through Redis (SPEC GW-19), over loopback.

    python bench/replicas.py [--rounds 3] [--seconds 2] [--redis-url redis://127.0.0.1:6379/15]

Starts bench/upstream.py (a fast fake OpenAI upstream) and `nerve serve` processes with temporary
configs, then measures three things, each a median over --rounds:

1. Over-admission. Two replicas with a window limit of 100 requests; 16 concurrent clients with
   ONE API key send 300 requests, alternating replicas. With redis.url the replicas share one
   window: the target is exactly 100 admitted. Without it each replica admits its own 100.
2. Overhead. p50 latency of one request at a time (bench/loadgen.py, raw client, concurrency 1)
   through one process without redis.url and one with it (rate limits opened wide, so the
   limiter, breaker and cooldown round trips to Redis are all paid). Target: <= 0.5 ms added.
3. Throughput. Requests/s of one process without Redis at concurrency 8, the same with Redis,
   and two replicas with Redis driven by two load generators at concurrency 4 each (summed).
   Everything shares this machine's cores (upstream, Redis, replicas, load generators), so
   read it as the cost of the shared state here, not as how replicas scale on separate hosts.

Redis keys go under a fresh prefix, deleted at the end. Every process started is stopped on exit,
error or Ctrl-C. Needs a Redis server at --redis-url; nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import uuid
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
HOST = "127.0.0.1"
CHAT_PATH = "/v1/chat/completions"
WINDOW = 100
BIG = 100_000_000


def _modules() -> tuple[ModuleType, ModuleType]:
    """bench.gateway (processes, health, load) and bench.loadgen, importable either way this
    script is run (`python bench/replicas.py` puts bench/ itself on the path)."""
    if str(HERE.parent) not in sys.path:
        sys.path.insert(0, str(HERE.parent))
    from bench import gateway, loadgen

    return gateway, loadgen


def config_text(base_url: str, *, window: int, redis_url: str | None, prefix: str) -> str:
    rate = {"window_requests": window, "window_seconds": 600, "burst": BIG,
            "refill_per_second": BIG, "max_concurrent": 100_000}  # fmt: skip
    config: dict[str, Any] = {
        "providers": [{"name": "fake", "protocol": "openai", "base_url": base_url,
                       "api_key": "sk-bench"}],
        "routes": [{"name": "default", "model": {"provider": "fake", "model": "bench-model"}}],
        "limits": {"rate": rate},
        "probes": {"interval_seconds": 0},
        "memory": {"enabled": False},
    }  # fmt: skip
    if redis_url:
        config["redis"] = {"url": redis_url, "key_prefix": prefix}
    return json.dumps(config)  # JSON is YAML


class Fleet:
    """The nerve processes of one phase of the benchmark, stopped together."""

    def __init__(self, gw: ModuleType, workdir: Path, base_url: str, args: argparse.Namespace):
        self.gw, self.workdir, self.base_url, self.args = gw, workdir, base_url, args
        self.procs = gw.Processes(workdir)

    def start(self, name: str, *, window: int, redis: bool, prefix: str = "") -> str:
        config = self.workdir / f"{name}.yaml"
        url = self.args.redis_url if redis else None
        config.write_text(config_text(self.base_url, window=window, redis_url=url, prefix=prefix))
        port = self.gw.free_port()
        cmd = self.gw.default_gateway_cmd().format(config=config, port=port).split()
        cwd = self.workdir / name
        cwd.mkdir()
        proc = self.procs.start(name, cmd, cwd=cwd)
        try:
            self.gw.wait_for_health(f"http://{HOST}:{port}/health", proc, 30, name)
        except RuntimeError as e:
            raise RuntimeError(f"{e}\n{name} log:\n{self.procs.log_tail(proc)}") from None
        return f"http://{HOST}:{port}{CHAT_PATH}"

    def close(self) -> None:
        self.procs.close()


async def admitted(urls: list[str], total: int, concurrency: int, key: str) -> Counter[int]:
    """`total` requests of one client (one API key) over `urls` in turn, `concurrency` at once."""
    import aiohttp

    _, loadgen = _modules()
    body = loadgen.chat_request_body()
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {key}"}
    queue = [urls[i % len(urls)] for i in range(total)]
    statuses: Counter[int] = Counter()

    async def worker(session: aiohttp.ClientSession) -> None:
        while queue:
            async with session.post(queue.pop(), data=body, headers=headers) as response:
                await response.read()
                statuses[response.status] += 1

    async with aiohttp.ClientSession() as session:
        await asyncio.gather(*(worker(session) for _ in range(concurrency)))
    return statuses


def parallel_load(urls: list[str], concurrency: int, args: argparse.Namespace) -> float:
    """One load generator per URL, all at once; their requests/s summed."""
    cmd = [sys.executable, str(HERE / "loadgen.py"), "--concurrency", str(concurrency),
           "--seconds", str(args.seconds), "--warmup", str(args.warmup)]  # fmt: skip
    procs = [subprocess.Popen([*cmd, url], stdout=subprocess.PIPE, text=True) for url in urls]
    results = [json.loads(p.communicate(timeout=args.seconds + args.warmup + 60)[0]) for p in procs]
    for r in results:
        if r["errors"]:
            raise RuntimeError(f"load generator errors: {r['errors']}, first: {r['first_error']}")
    return float(sum(r["rps"] for r in results))


def over_admission(gw: ModuleType, fleet: Fleet, prefix: str, args: argparse.Namespace) -> dict:
    shared = [fleet.start(f"shared{i}", window=WINDOW, redis=True, prefix=prefix) for i in (1, 2)]
    alone = [fleet.start(f"alone{i}", window=WINDOW, redis=False) for i in (1, 2)]
    runs: dict[str, list[int]] = {"redis": [], "local": []}
    for r in range(args.rounds):
        for kind, urls in (("redis", shared), ("local", alone)):
            key = f"bench-{uuid.uuid4().hex[:8]}"  # a fresh client: a fresh window
            statuses = asyncio.run(admitted(urls, args.requests, 16, key))
            if set(statuses) - {200, 429}:
                raise RuntimeError(f"unexpected statuses: {dict(statuses)}")
            runs[kind].append(statuses[200])
            gw.log(f"round {r + 1}: over-admission {kind:<5} admitted {statuses[200]}")
    return {k: statistics.median(v) for k, v in runs.items()}


def overhead_and_throughput(gw: ModuleType, fleet: Fleet, prefix: str, args: argparse.Namespace):
    local = fleet.start("local", window=BIG, redis=False)
    redis1 = fleet.start("redis1", window=BIG, redis=True, prefix=prefix + "t:")
    redis2 = fleet.start("redis2", window=BIG, redis=True, prefix=prefix + "t:")
    runs: dict[str, list[float]] = {k: [] for k in ("p50_local", "p50_redis", "rps_local",
                                                    "rps_redis", "rps_two")}  # fmt: skip
    for r in range(args.rounds):
        for kind, url in (("local", local), ("redis", redis1)):
            one = gw.load(url, 1, args.seconds, args.warmup, "raw")
            runs[f"p50_{kind}"].append(one["p50_ms"])
            eight = gw.load(url, 8, args.seconds, args.warmup, "raw")
            runs[f"rps_{kind}"].append(eight["rps"])
            if one["errors"] or eight["errors"]:
                raise RuntimeError(f"{kind}: errors, first: {one['first_error']}")
        runs["rps_two"].append(parallel_load([redis1, redis2], 4, args))
        gw.log(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:.3f}" for k, v in runs.items()))
    return {k: statistics.median(v) for k, v in runs.items()}


def table(over: dict[str, float], perf: dict[str, float], args: argparse.Namespace) -> str:
    added = perf["p50_redis"] - perf["p50_local"]
    rows = [
        f"Medians over {args.rounds} rounds; load runs of {args.seconds:g} s; "
        f"Redis at {args.redis_url}.",
        "",
        "| measure | without Redis | with Redis | target |",
        "|---|---:|---:|---|",
        f"| admitted of {args.requests} (window {WINDOW}, 2 replicas, 16 clients, one key) "
        f"| {over['local']:.0f} | {over['redis']:.0f} | exactly {WINDOW} with Redis |",
        f"| over-admitted | {over['local'] - WINDOW:.0f} | {over['redis'] - WINDOW:.0f} | 0 |",
        f"| p50 ms, 1 process, concurrency 1 | {perf['p50_local']:.3f} "
        f"| {perf['p50_redis']:.3f} | |",
        f"| added p50 ms | | {added:+.3f} | <= +0.5 |",
        f"| req/s, 1 process, concurrency 8 | {perf['rps_local']:.0f} "
        f"| {perf['rps_redis']:.0f} | |",
        f"| req/s, 2 replicas, concurrency 4 + 4 | | {perf['rps_two']:.0f} | |",
    ]
    return "\n".join(rows)


def forget(redis_url: str, prefix: str) -> None:
    import redis

    with redis.Redis.from_url(redis_url) as client:
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            client.delete(*keys)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python bench/replicas.py",
        description="Benchmark nerve replicas sharing state through Redis.",
        epilog=__doc__.split("\n\n", 2)[2] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--rounds", type=int, default=3, help="rounds (default: 3)")
    parser.add_argument("--seconds", type=float, default=2.0, help="measured s per load run (2)")
    parser.add_argument("--warmup", type=float, default=0.5, help="unmeasured s per load run")
    parser.add_argument("--requests", type=int, default=300, help="requests per admission run")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/15", help="Redis to use")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.seconds <= 0 or args.warmup < 0 or args.requests < WINDOW:
        parser.error(f"--rounds >= 1, --seconds > 0, --warmup >= 0, --requests >= {WINDOW}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    gw, _ = _modules()
    prefix = f"nerve-bench:{uuid.uuid4().hex[:8]}:"
    with gw.signals_as_interrupt(), tempfile.TemporaryDirectory(prefix="nerve-bench-") as tmp:
        workdir = Path(tmp)
        procs = gw.Processes(workdir)
        fleets: list[Fleet] = []
        try:
            _, up_port = gw.start_server(procs, "upstream", [])
            base_url = f"http://{HOST}:{up_port}/v1"
            fleets.append(Fleet(gw, workdir, base_url, args))
            over = over_admission(gw, fleets[-1], prefix, args)
            fleets.pop().close()  # free the cores before timing
            fleets.append(Fleet(gw, workdir, base_url, args))
            perf = overhead_and_throughput(gw, fleets[-1], prefix, args)
            print(table(over, perf, args))
            return 0
        except KeyboardInterrupt:
            gw.log("interrupted; stopping every process")
            return 130
        except (RuntimeError, OSError, subprocess.SubprocessError) as e:
            gw.log(f"bench failed: {e}")
            return 1
        finally:
            for fleet in fleets:
                fleet.close()
            procs.close()
            forget(args.redis_url, prefix)


if __name__ == "__main__":
    sys.exit(main())
