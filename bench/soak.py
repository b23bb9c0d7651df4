"""Soak `nerve serve` with hostile clients while a normal client measures its latency.

    python bench/soak.py [--seconds 300] [--slow 50] [--quiet 30] [--fuzz-rate 50]
    python bench/soak.py --seconds 20     # the quick one; the default 300 is nightly length

Starts bench/upstream.py and `nerve serve` with bench/gateway.py's config (rate limits opened
wide) plus limits.header_timeout_seconds and body_timeout_seconds 2, to cut attackers off quickly,
and max_connections_per_client 512: all clients are 127.0.0.1, and 64 would refuse the normal one.

One asyncio process runs --warmup s of normal traffic (bench/loadgen.py's chat request, aiohttp,
--concurrency closed loops), --baseline s of it alone, --seconds of it under attack by
1. slowloris: --slow connections trickling a request line and headers, a byte every 0.5 s;
2. partial bodies: --quiet connections to /v1/chat/completions, /api/memory/store and /mcp,
   sending Content-Length 1000 and 10 bytes of body, then nothing;
3. fuzz: --fuzz-rate malformed requests a second to those paths (bad JSON, wrong types, deep
   nesting, NUL and control characters, huge numbers, text/plain from a foreign Origin, ...);
each connecting or sending again once answered or closed, then --baseline s alone again. It
prints markdown tables: normal latency per phase, how attacks ended, fuzz statuses, nerve's RSS
(its process group), /health. Findings (fuzz 5xx or no answer, a failed normal request, a
connection held past its timeout + 2 s or answered but 408, /health not 200, nerve gone) go to
stderr and make the exit status 1. Nothing leaves 127.0.0.1; every process is stopped on exit.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import uvloop

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:  # `python bench/soak.py` puts bench/ itself on the path
    sys.path.insert(0, str(HERE.parent))

from bench import gateway as gw  # noqa: E402
from bench.loadgen import chat_request_body  # noqa: E402

HEADER_SECONDS, BODY_SECONDS, MAX_CONNECTIONS = 2, 2, 512  # appended to the template's limits
LIMITS = f"  header_timeout_seconds: {HEADER_SECONDS}\n  body_timeout_seconds: {BODY_SECONDS}\n"
LIMITS += f"  max_connections_per_client: {MAX_CONNECTIONS}\n"
TRICKLE = 0.5  # seconds between a slowloris connection's bytes
EDGE = 5.0  # seconds: the first ("before") and the last phase of the attack
MEMORY_PATH, MCP_PATH = "/api/memory/store", "/mcp"
JSON = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
TIMEOUT = aiohttp.ClientTimeout(total=15)
now = time.perf_counter
ERRORS = (RuntimeError, OSError, subprocess.SubprocessError)  # a failed run, not a finding
Sample = tuple[float, float, str]  # started at, seconds, status (or the error's name)
Case = tuple[str, str, bytes, dict[str, str]]  # what, path, body, headers

# Per path: a request it takes (a case breaks it), with wrong types, a name, number, nest field.
PATHS: dict[str, tuple[dict[str, Any], dict[str, Any], tuple[str, str, str]]] = {
    gw.CHAT_PATH: ({"model": "auto", "messages": [{"role": "user", "content": "hi"}]},
                   {"model": 5, "messages": "hi", "stream": "yes", "temperature": [1]},
                   ("model", "max_tokens", "messages")),
    MEMORY_PATH: ({"user_id": "soak", "tier": "short_term", "intent": "note",
                   "data": {"text": "hi"}, "importance": 0.5},
                  {"user_id": [], "tier": 3, "intent": {}, "data": "x", "importance": "high"},
                  ("user_id", "importance", "data")),
    MCP_PATH: ({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
               {"jsonrpc": 2, "id": {}, "method": 7, "params": []},
               ("method", "id", "params")),
}  # fmt: skip


@dataclass
class Held:
    """One kind of attacking connection: how each ended and how long it was held."""

    what: str
    ended: Counter[str] = field(default_factory=Counter)
    seconds: list[float] = field(default_factory=list)


@dataclass
class Soak:
    baseline: list[Sample] = field(default_factory=list)
    attacked: list[Sample] = field(default_factory=list)
    after: list[Sample] = field(default_factory=list)  # alone again, once the attack is over
    started: float = 0.0
    held: list[Held] = field(default_factory=list)
    fuzz: Counter[tuple[str, str]] = field(default_factory=Counter)  # (path, status)
    rss: dict[str, tuple[int, int]] = field(default_factory=dict)  # when: kB, processes
    health: str = ""
    findings: Counter[str] = field(default_factory=Counter)


async def post(session: aiohttp.ClientSession, url: str, body: bytes, headers: Any) -> str:
    try:
        async with session.post(url, data=body, headers=headers) as response:
            await response.read()
            return str(response.status)
    except (OSError, aiohttp.ClientError, TimeoutError) as e:
        return type(e).__name__


async def traffic(url: str, concurrency: int, stop_at: float, samples: list[Sample]) -> None:
    body, headers = chat_request_body(), {**JSON, "Authorization": "Bearer sk-bench"}
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector, timeout=TIMEOUT) as session:

        async def loop() -> None:
            while (start := now()) < stop_at:
                status = await post(session, url, body, headers)
                samples.append((start, now() - start, status))

        await asyncio.gather(*(loop() for _ in range(concurrency)))


def with_raw(valid: dict[str, Any], key: str, raw: str) -> bytes:
    """`valid` as JSON with `key` set to JSON text no encoder writes (1e400, a lone surrogate)."""
    return orjson.dumps({**valid, key: "@@raw@@"}).replace(b'"@@raw@@"', raw.encode())


def fuzz_cases() -> list[Case]:
    deep_arrays, deep_objects = "[" * 300 + "]" * 300, '{"a":' * 300 + "0" + "}" * 300
    foreign = {"Content-Type": "text/plain", "Origin": "http://evil.example"}
    cases: list[Case] = []
    for path, (valid, wrong, (name, number, nest)) in PATHS.items():
        good = orjson.dumps(valid)
        bodies = {
            "bad JSON (cut short)": good[:-3],
            "empty body": b"",
            "a raw NUL byte": good[:4] + b"\x00" + good[4:],
            "invalid UTF-8": b"\xff\xfe" + good,
            "a JSON array": b"[" + good + b"]",
            "wrong types": orjson.dumps(wrong),
            "300 nested arrays": with_raw(valid, nest, deep_arrays),
            "300 nested objects": with_raw(valid, nest, deep_objects),
            "NUL in a name": with_raw(valid, name, r'"a\u0000b"'),
            "control chars in a name": with_raw(valid, name, r'"gpt\u0001\u001b[2J\r\nX-A: 1"'),
            "a lone surrogate": with_raw(valid, name, r'"\ud800"'),
            "a 400-digit integer": with_raw(valid, number, "9" * 400),
            "1e400": with_raw(valid, number, "1e400"),
            "NaN": with_raw(valid, number, "NaN"),
        }
        cases += [(what, path, body, JSON) for what, body in bodies.items()]
        cases.append(("text/plain from a foreign Origin", path, good, foreign))
    return cases


async def fuzz(base: str, rate: float, stop_at: float, soak: Soak) -> None:
    """The cases in turn, `rate` a second, each in a task (slow answers slow nobody), <= 32 open."""
    connector = aiohttp.TCPConnector(limit=32)
    async with aiohttp.ClientSession(connector=connector, timeout=TIMEOUT) as session:

        async def send(what: str, path: str, body: bytes, headers: dict[str, str]) -> None:
            status = await post(session, base + path, body, headers)
            soak.fuzz[path, status] += 1
            if not (status.isdigit() and status[0] in "234"):
                soak.findings[f"fuzz {path} {what}: {status}"] += 1

        due, cases = now(), itertools.cycle(fuzz_cases())
        async with asyncio.TaskGroup() as tasks:  # waits for the last answers
            while due < stop_at:
                tasks.create_task(send(*next(cases)))
                due += 1 / rate
                await asyncio.sleep(max(0.0, due - now()))


def ending(answer: asyncio.Future[bytes]) -> str:
    if not answer.done():
        return "still open at the end"
    if (error := answer.exception()) is not None:
        return f"{type(error).__name__} (server)"
    if not (data := answer.result()):
        return "closed by server"
    return f"answered {data[9:12].decode(errors='replace')}" if data[:7] == b"HTTP/1." else "junk"


async def hold(port: int, head: bytes, trickle: bytes, held: Held, stop_at: float) -> None:
    """Connections one after another until stop_at: each sends `head` at once, then `trickle` a
    byte every TRICKLE s (when empty, it goes quiet) until the server answers or closes it."""
    while (opened := now()) < stop_at:
        try:
            reader, writer = await asyncio.open_connection(gw.HOST, port)
        except OSError as e:
            held.ended[f"connect: {type(e).__name__}"] += 1
            await asyncio.sleep(TRICKLE)
            continue
        answer = asyncio.ensure_future(reader.read(64))
        try:
            writer.write(head)
            for sent in itertools.count():
                if answer.done() or now() >= stop_at:
                    break
                writer.write(trickle[sent : sent + 1])
                await asyncio.wait([answer], timeout=min(TRICKLE, max(0.0, stop_at - now())))
            held.ended[ending(answer)] += 1
            held.seconds.append(now() - opened)
        finally:
            answer.cancel()
            writer.close()


def attackers(port: int, args: argparse.Namespace, stop_at: float, soak: Soak) -> list[Any]:
    line = f"POST {gw.CHAT_PATH} HTTP/1.1\r\nHost: {gw.HOST}:{port}\r\n".encode()
    pad = b"X-Slow: " + b"a" * 4096
    soak.held.append(slow := Held(f"slowloris ({args.slow}, a byte / {TRICKLE:g} s)"))
    runs = [hold(port, *((b"", line + pad) if i % 2 else (line, pad)), slow, stop_at)
            for i in range(args.slow)]  # fmt: skip
    for i, path in enumerate(PATHS):
        count = len(range(i, args.quiet, len(PATHS)))
        soak.held.append(quiet := Held(f"partial body {path} ({count}, 10 of 1000 bytes)"))
        head = (f"POST {path} HTTP/1.1\r\nHost: {gw.HOST}:{port}\r\nContent-Type: "
                'application/json\r\nContent-Length: 1000\r\n\r\n{"model":"').encode()  # fmt: skip
        runs += [hold(port, head, b"", quiet, stop_at) for _ in range(count)]
    return runs


def rss_kb(group: int) -> tuple[int, int]:
    """VmRSS summed over process group `group` (nerve and any workers), in kB, and how many."""
    kbs = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):  # gone meanwhile
            if int(stat.read_text().rsplit(")", 1)[1].split()[2]) == group:
                kbs.append(int((stat.parent / "status").read_text().split("VmRSS:")[1].split()[0]))
    return sum(kbs), len(kbs)


async def peak_rss(pid: int, stop_at: float, soak: Soak) -> None:
    while now() < stop_at:
        soak.rss["peak"] = max(soak.rss.get("peak", (0, 0)), await asyncio.to_thread(rss_kb, pid))
        await asyncio.sleep(1)


async def run(pid: int, port: int, args: argparse.Namespace) -> Soak:
    base, soak, task = f"http://{gw.HOST}:{port}", Soak(), asyncio.current_task()
    assert task is not None
    for sig in (signal.SIGINT, signal.SIGTERM):  # a KeyboardInterrupt raised in a callback is lost
        asyncio.get_running_loop().add_signal_handler(sig, task.cancel)
    url = base + gw.CHAT_PATH
    soak.rss["start"] = rss_kb(pid)
    await traffic(url, args.concurrency, now() + args.warmup, [])
    soak.rss["warm"] = rss_kb(pid)
    await traffic(url, args.concurrency, now() + args.baseline, soak.baseline)
    gw.log(f"nerve (pid {pid}) on {base}: warmed up, baseline done; {args.seconds:g} s of attack")
    soak.started = now()
    stop_at = soak.started + args.seconds
    await asyncio.gather(
        traffic(url, args.concurrency, stop_at, soak.attacked),
        fuzz(base, args.fuzz_rate, stop_at, soak),
        peak_rss(pid, stop_at, soak),
        *attackers(port, args, stop_at, soak),
    )
    soak.rss["end"] = rss_kb(pid)
    await traffic(url, args.concurrency, now() + args.baseline, soak.after)
    return soak


def pct(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(len(values) * q))] if values else float("nan")


def normal_rows(soak: Soak, args: argparse.Namespace) -> list[str]:
    start, end, edge = soak.started, soak.started + args.seconds, min(EDGE, args.seconds)
    phases = [("alone (baseline)", soak.baseline, 0.0, float("inf"), args.baseline),
              (f'attack, first {edge:g} s ("before")', soak.attacked, start, start + edge, edge),
              (f"attack, last {edge:g} s", soak.attacked, end - edge, end, edge),
              ("attack, whole run", soak.attacked, start, end, args.seconds),
              ("alone again, after", soak.after, 0.0, float("inf"), args.baseline)]  # fmt: skip
    rows = ["| normal requests | ok | failed | req/s | p50 ms | p99 ms | p50 x alone "
            "| p99 x alone |", "|---|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    alone: tuple[float, float] | None = None
    for what, samples, since, until, seconds in phases:
        chosen = [s for s in samples if since <= s[0] < until]
        ok = sorted(spent * 1000 for _, spent, status in chosen if status == "200")
        failed = Counter(status for _, _, status in chosen if status != "200")
        p50, p99 = pct(ok, 0.5), pct(ok, 0.99)
        alone = alone or (p50, p99)
        why = f" ({', '.join(f'{s} x{n}' for s, n in failed.most_common(3))})" * bool(failed)
        rows.append(
            f"| {what} | {len(ok)} | {failed.total()}{why} | {len(ok) / seconds:.0f} | "
            f"{p50:.2f} | {p99:.2f} | {p50 / alone[0]:.2f}x | {p99 / alone[1]:.2f}x |"
        )
        soak.findings.update(f"normal request: {status}" for status in failed.elements())
    return rows


def held_rows(soak: Soak) -> list[str]:
    rows = ["| attacking connections | opened | held s p50 | held s max | how they ended |",
            "|---|---:|---:|---:|---|"]  # fmt: skip
    for held in soak.held:
        spent, how = sorted(held.seconds), ", ".join(f"{w} {n}" for w, n in held.ended.items())
        rows.append(f"| {held.what} | {len(spent)} | {pct(spent, 0.5):.2f} "
                    f"| {pct(spent, 1):.2f} | {how} |")  # fmt: skip
        if spent and spent[-1] > max(HEADER_SECONDS, BODY_SECONDS) + 2:
            soak.findings[f"{held.what}: a connection held {spent[-1]:.1f} s"] += 1
        soak.findings.update({f"{held.what}: {w}": n for w, n in held.ended.items()
                              if w.startswith("answered") and w != "answered 408"})  # fmt: skip
    return rows


def fuzz_rows(soak: Soak, args: argparse.Namespace) -> list[str]:
    statuses = sorted({status for _, status in soak.fuzz})
    rows = [f"Fuzz: {len(fuzz_cases())} cases in turn, {args.fuzz_rate:g}/s.", "",
            f"| fuzz path | requests | {' | '.join(statuses)} | 5xx |",
            "|---|---:|" + "---:|" * (len(statuses) + 1)]  # fmt: skip
    for path in PATHS:
        counts = [soak.fuzz[path, status] for status in statuses]
        fives = sum(soak.fuzz[path, s] for s in statuses if s[0] == "5")
        rows.append(f"| {path} | {sum(counts)} | {' | '.join(map(str, counts))} | {fives} |")
    return rows


def report(soak: Soak, args: argparse.Namespace) -> str:
    (start, _), (warm, _), (peak, _), (end, n) = soak.rss.values()  # in the order taken
    if not soak.health.startswith("200"):
        soak.findings["/health at the end: " + soak.health] += 1
    return "\n".join([
        f"Soak: {args.seconds:g} s of attack on `nerve serve`; normal client: aiohttp, concurrency "
        f"{args.concurrency}. limits: header and body timeouts {HEADER_SECONDS} s, max_connections_"
        f"per_client {MAX_CONNECTIONS} (64, the default, would refuse the normal client here).",
        "", *normal_rows(soak, args), "", *held_rows(soak), "", *fuzz_rows(soak, args), "",
        f"| nerve RSS MB ({n} process{'es' * (n != 1)}) | at start | after warmup | peak "
        "| at the end | end - warmup |", "|---|---:|---:|---:|---:|---:|",
        f"| VmRSS | {start / 1024:.1f} | {warm / 1024:.1f} | {peak / 1024:.1f} "
        f"| {end / 1024:.1f} | {(end - warm) / 1024:+.1f} |",
        "", f"/health at the end: {soak.health}.",
    ])  # fmt: skip


def start(procs: gw.Processes) -> tuple[gw.Proc, int]:
    _, up_port = gw.start_server(procs, "upstream", [])
    config = procs.workdir / "nerve.yaml"
    config.write_text(gw.CONFIG_TEMPLATE.format(base_url=f"http://{gw.HOST}:{up_port}/v1") + LIMITS)
    port = gw.free_port()
    cmd = shlex.split(gw.default_gateway_cmd().format(config=config, port=port))
    gateway = procs.start("gateway", cmd, cwd=procs.workdir)  # its SQLite store lands in tmp
    try:
        gw.wait_for_health(f"http://{gw.HOST}:{port}/health", gateway, 30)
        gw.smoke_test(f"http://{gw.HOST}:{port}{gw.CHAT_PATH}")
    except RuntimeError as e:
        raise RuntimeError(f"{e}\ngateway log:\n{procs.log_tail(gateway)}") from None
    return gateway, port


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    summary, _, more = (__doc__ or "\n\n\n\n").split("\n\n", 2)
    parser = argparse.ArgumentParser(
        "python bench/soak.py", description=summary, epilog=more,
        formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    add = parser.add_argument
    add("--seconds", type=float, default=300.0, help="s under attack (300; 20: quick)")
    add("--slow", type=int, default=50, help="slowloris connections (50)")
    add("--quiet", type=int, default=30, help="partial-body connections (30)")
    add("--fuzz-rate", type=float, default=50.0, help="malformed requests a second (50)")
    add("--concurrency", type=int, default=1, help="the normal client's closed loops (1)")
    add("--baseline", type=float, default=5.0, help="s of normal traffic alone, reported (5)")
    add("--warmup", type=float, default=3.0, help="s of normal traffic first, unreported (3)")
    args = parser.parse_args(argv)
    if min(args.seconds, args.baseline, args.fuzz_rate, args.concurrency) <= 0:
        parser.error("--seconds, --baseline, --fuzz-rate and --concurrency must be > 0")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with (
        gw.signals_as_interrupt(),
        tempfile.TemporaryDirectory(prefix="nerve-soak-") as tmp,
        contextlib.closing(gw.Processes(Path(tmp))) as procs,  # every process stopped on exit
    ):
        try:
            gateway, port = start(procs)
            with gw.signals_as_interrupt():  # again after the loop, which leaves SIG_DFL behind
                soak = uvloop.run(run(gateway.pid, port, args))
        except (KeyboardInterrupt, asyncio.CancelledError, *ERRORS) as e:
            stopped = not isinstance(e, ERRORS)
            gw.log("interrupted; stopping every process" if stopped else f"soak failed: {e}")
            return 130 if stopped else 1
        try:  # the first answer, or the last within 1 s
            gw.wait_for_health(f"http://{gw.HOST}:{port}/health", gateway, 1)
            soak.health = "200"
        except RuntimeError as e:
            soak.health = str(e)  # also when nerve has exited
        print(report(soak, args), flush=True)
    for finding, n in soak.findings.most_common():
        gw.log(f"finding: {finding} (x{n})")
    return 1 if soak.findings else 0


if __name__ == "__main__":
    sys.exit(main())
