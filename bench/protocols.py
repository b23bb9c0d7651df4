"""Benchmark nerve's three client protocols, passed through and translated, over loopback.

    python bench/protocols.py [--rounds 5] [--seconds 2] [--concurrency 8 1] [--stream-requests 200]

Starts bench/protocol_upstream.py (aiohttp, fixed chat.completion / Anthropic message / Response
bodies and SSE streams of ~20 text pieces) on a free port and `nerve serve --config FILE --port P`
with three providers on it, rate limiter opened wide: `oa` (openai), `oar` (openai with
`responses: true`) and `an` (anthropic), behind the routes `default` -> oa, `native-messages`
-> an and `native-responses` -> oar. Each client picks its path with "model": <route>:

    chat direct            POST upstream /v1/chat/completions (no nerve)
    chat nerve             POST nerve /v1/chat/completions   -> oa /chat/completions
    messages passthrough   POST nerve /v1/messages   (native-messages)  -> an /v1/messages
    messages translated    POST nerve /v1/messages   (default)          -> oa /chat/completions
    responses passthrough  POST nerve /v1/responses  (native-responses) -> oar /responses
    responses translated   POST nerve /v1/responses  (default)          -> oa /chat/completions

First it checks every path once with the real SDKs (openai.OpenAI, anthropic.Anthropic; against
the upstream directly, which validates the fake's wire shapes, and through nerve), plain and
streamed: the reply text and usage must come back whole. Then:

1. Non-streamed throughput. Every round, for each concurrency, the six targets back to back, each
   in a fresh bench/loadgen.py process (raw client, --body-file with a ~1 KB request of the
   target's own protocol: system prompt and three turns) for --seconds after --warmup. Table:
   medians over rounds of req/s and p50, the RPS ratio to chat-through-nerve (what a protocol
   costs over nerve's own pivot) and to direct (what the whole gateway costs), and the extra p50
   milliseconds over chat-through-nerve.
2. Streams at concurrency 1, from this process: one keep-alive connection per target and round,
   two unmeasured requests, then --stream-requests/rounds measured ones, targets interleaved
   round by round. TTFB is the time from sending the request to the first byte of the response
   *body* (the first SSE event; headers alone do not count), TTLB to the end of the chunked body.
   Table: medians over all requests, and the TTFB/TTLB ratios to the direct stream and to the
   chat-through-nerve stream. The upstream writes its events back to back (--chunk-delay-ms 0),
   so TTLB is gateway work, not model time; with a delay, TTLB is dominated by it.

Load generator, upstream and nerve share the machine's cores: compare ratios measured in the
same run, not absolute numbers across machines. A default run (60 load runs of ~2.9 s, 1,200
streams, start-up and the SDK check) takes about 3.5 minutes. Every subprocess is stopped on
exit, error or Ctrl-C. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvloop

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:  # `python bench/protocols.py` puts bench/ itself on the path
    sys.path.insert(0, str(HERE.parent))

from bench import protocol_upstream as wire  # noqa: E402
from bench.gateway import (  # noqa: E402
    HOST,
    Processes,
    default_gateway_cmd,
    free_port,
    log,
    signals_as_interrupt,
    wait_for_health,
    wait_for_port_file,
)
from bench.loadgen import _Connection, build_request  # noqa: E402

CONFIG_TEMPLATE = """\
# Written by bench/protocols.py for one benchmark run.
providers:
  - {{name: oa, protocol: openai, base_url: "http://{host}:{port}/v1", api_key: "sk-bench"}}
  - {{name: oar, protocol: openai, base_url: "http://{host}:{port}/v1", api_key: "sk-bench",
     responses: true}}
  - {{name: an, protocol: anthropic, base_url: "http://{host}:{port}", api_key: "sk-bench"}}
routes:
  - {{name: default, model: {{provider: oa, model: bench-model}}}}
  - {{name: native-messages, model: {{provider: an, model: bench-model}}}}
  - {{name: native-responses, model: {{provider: oar, model: bench-model}}}}
limits:
  rate:
    window_requests: 100000000
    burst: 100000000
    refill_per_second: 100000000
    max_concurrent: 100000
"""
ANTHROPIC_HEADERS = {"anthropic-version": "2023-06-01"}
STREAM_ENDS = {"chat": b"[DONE]", "messages": b"message_stop", "responses": b"response.completed"}


@dataclass(frozen=True)
class Target:
    name: str
    protocol: str  # chat | messages | responses
    path: str
    route: str
    direct: bool = False  # to the upstream, not through nerve

    def body(self, stream: bool) -> bytes:
        make = {"chat": wire.chat_body, "messages": wire.messages_body}
        return make.get(self.protocol, wire.responses_body)(self.route, stream)

    @property
    def headers(self) -> dict[str, str]:
        return ANTHROPIC_HEADERS if self.protocol == "messages" else {}


TARGETS = [
    Target("chat direct", "chat", "/v1/chat/completions", "default", direct=True),
    Target("chat nerve", "chat", "/v1/chat/completions", "default"),
    Target("messages passthrough", "messages", "/v1/messages", "native-messages"),
    Target("messages translated", "messages", "/v1/messages", "default"),
    Target("responses passthrough", "responses", "/v1/responses", "native-responses"),
    Target("responses translated", "responses", "/v1/responses", "default"),
]
DIRECT, CHAT_NERVE = TARGETS[0].name, TARGETS[1].name


# -- the SDK check ----------------------------------------------------------------------------


def sdk_check(up: str, gw: str) -> None:
    """Each path once with the real SDKs, plain and streamed; text and usage must come back."""
    import anthropic
    import openai

    kw: dict[str, Any] = {"api_key": "sk-bench", "max_retries": 0, "timeout": 10}
    turns: list[Any] = [{"role": "user", "content": "Hi!"}]
    Got = list[tuple[str | None, int | None]]  # (text, output tokens), plain then streamed

    def chat(base: str, model: str) -> Got:
        client, opts = openai.OpenAI(base_url=f"{base}/v1", **kw), {"include_usage": True}
        plain = client.chat.completions.create(model=model, messages=turns)
        with client.chat.completions.stream(model=model, messages=turns, stream_options=opts) as s:
            final = s.get_final_completion()
        return [(c.choices[0].message.content, c.usage and c.usage.completion_tokens)
                for c in (plain, final)]  # fmt: skip

    def messages(base: str, model: str) -> Got:
        client = anthropic.Anthropic(base_url=base, **kw)
        plain = client.messages.create(model=model, max_tokens=64, messages=turns)
        with client.messages.stream(model=model, max_tokens=64, messages=turns) as s:
            final = s.get_final_message()
        return [("".join(b.text for b in m.content if b.type == "text"), m.usage.output_tokens)
                for m in (plain, final)]  # fmt: skip

    def responses(base: str, model: str) -> Got:
        client = openai.OpenAI(base_url=f"{base}/v1", **kw)
        plain = client.responses.create(model=model, input="Hi!", store=False)
        with client.responses.stream(model=model, input="Hi!", store=False) as s:
            final = s.get_final_response()
        return [(r.output_text, r.usage and r.usage.output_tokens) for r in (plain, final)]

    check = {"chat": chat, "messages": messages, "responses": responses}
    paths = [(f"{p} direct", p, up, "default") for p in check]
    paths += [(t.name, t.protocol, gw, t.route) for t in TARGETS if not t.direct]
    for name, protocol, base, route in paths:
        try:
            got = check[protocol](base, route)
        except Exception as e:  # any SDK error: say which path, with the SDK's own message
            raise RuntimeError(f"SDK check {name!r} failed: {type(e).__name__}: {e}") from None
        if got != [(wire.REPLY, wire.COMPLETION_TOKENS)] * 2:
            raise RuntimeError(f"SDK check {name!r}: (text, output tokens), plain/stream: {got}")
    log(f"SDK check: {len(paths)} paths answered the reply and usage, plain and streamed")


# -- 1. non-streamed throughput ---------------------------------------------------------------

Run = dict[str, Any]


def load(url: str, body_file: Path, headers: dict[str, str], c: int, args: Any) -> Run:
    """One bench/loadgen.py run in its own process (a core's worth of CPU to itself)."""
    cmd = [sys.executable, str(HERE / "loadgen.py"), url, "--body-file", str(body_file)]
    cmd += ["--concurrency", str(c), "--seconds", str(args.seconds), "--warmup", str(args.warmup)]
    cmd += [arg for name, value in headers.items() for arg in ("--header", f"{name}: {value}")]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=args.seconds + 60)
    if done.returncode != 0:
        raise RuntimeError(f"the load generator failed ({done.returncode}):\n{done.stderr}")
    result: Run = json.loads(done.stdout)
    return result


def throughput(urls: dict[str, str], workdir: Path, args: Any) -> dict[int, dict[str, list[Run]]]:
    files = {}
    for t in TARGETS:
        files[t.name] = workdir / f"{t.name.replace(' ', '-')}.json"
        files[t.name].write_bytes(t.body(stream=False))
    runs: dict[int, dict[str, list[Run]]] = {c: {t.name: [] for t in TARGETS} for c in args.cs}
    for r in range(1, args.rounds + 1):
        for c in args.cs:
            for t in TARGETS:
                res = load(urls[t.name], files[t.name], t.headers, c, args)
                runs[c][t.name].append(res)
                note = f"  {res['errors']} errors, first: {res['first_error']}"
                log(
                    f"round {r}/{args.rounds}  c={c:<3} {t.name:<22} {res['rps']:8.0f} req/s  "
                    f"p50 {res['p50_ms']:.3f} ms{note if res['errors'] else ''}"
                )
    return runs


def med(values: Any) -> float:
    return float(statistics.median(values))


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "n/a"


def throughput_table(runs: dict[int, dict[str, list[Run]]], args: Any) -> str:
    rows = [
        f"Non-streamed, raw load generator, ~1 KB request per protocol. Medians over "
        f"{args.rounds} rounds of {args.seconds:g} s; latency in ms.",
        "",
        "| c | target | req/s | p50 | p99 | RPS / chat nerve | RPS / direct "
        "| p50 - chat nerve | errors |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for c, by_target in runs.items():
        rps = {name: med(r["rps"] for r in rs) for name, rs in by_target.items()}
        p50 = {name: med(r["p50_ms"] for r in rs) for name, rs in by_target.items()}
        for name, rs in by_target.items():
            rows.append(
                f"| {c} | {name} | {rps[name]:.0f} | {p50[name]:.3f} "
                f"| {med(r['p99_ms'] for r in rs):.3f} | {ratio(rps[name], rps[CHAT_NERVE])} "
                f"| {ratio(rps[name], rps[DIRECT])} | {p50[name] - p50[CHAT_NERVE]:+.3f} "
                f"| {sum(r['errors'] for r in rs)} |"
            )
    return "\n".join(rows)


# -- 2. streams -------------------------------------------------------------------------------


class _Timed(_Connection):
    """loadgen's keep-alive connection, noting when the body starts and how it ends."""

    first, body = 0.0, b""

    def on_body(self, body: bytes) -> None:
        self.first = self.first or time.perf_counter()
        self.body += body


async def _stream_round(url: str, t: Target, n: int) -> tuple[list[tuple[float, float]], list[str]]:
    host, port, raw = build_request(url, t.body(stream=True), "sk-bench", t.headers)
    _, conn = await asyncio.get_running_loop().create_connection(_Timed, host, port)
    timings, errors = [], []
    try:
        for i in range(n + 2):  # two unmeasured: the connection and nerve's pool warm up
            conn.first, conn.body = 0.0, b""
            t0 = time.perf_counter()
            status = await asyncio.wait_for(conn.request(raw), 30)
            t1 = time.perf_counter()
            if status != 200 or STREAM_ENDS[t.protocol] not in conn.body[-3000:]:
                errors.append(f"HTTP {status}, ends {conn.body[-80:]!r}")
            elif i >= 2:
                timings.append(((conn.first - t0) * 1000, (t1 - t0) * 1000))
    finally:
        assert conn.transport is not None
        conn.transport.close()
    return timings, errors


def streams(urls: dict[str, str], args: Any) -> dict[str, tuple[list[tuple[float, float]], int]]:
    out: dict[str, tuple[list[tuple[float, float]], int]] = {t.name: ([], 0) for t in TARGETS}
    for r in range(args.rounds):
        n = args.stream_requests // args.rounds + (r < args.stream_requests % args.rounds)
        for t in TARGETS:
            timings, errors = uvloop.run(_stream_round(urls[t.name], t, n))
            if errors:
                log(f"streams {t.name}: {len(errors)} bad responses, first: {errors[0]}")
            out[t.name] = (out[t.name][0] + timings, out[t.name][1] + len(errors))
        log(f"streams round {r + 1}/{args.rounds}: {n} per target")
    return out


def stream_table(results: dict[str, tuple[list[tuple[float, float]], int]]) -> str:
    ttfb = {name: med(f for f, _ in ts) for name, (ts, _) in results.items() if ts}
    ttlb = {name: med(last for _, last in ts) for name, (ts, _) in results.items() if ts}
    n = max(len(ts) for ts, _ in results.values())
    rows = [
        f"Streams at concurrency 1: medians over {n} requests per target; ms. TTFB = first "
        "body byte, TTLB = end of body.",
        "",
        "| target | TTFB | TTLB | TTFB / direct | TTFB / chat nerve | TTLB / direct "
        "| TTLB / chat nerve | errors |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, (_, errors) in results.items():
        if name not in ttfb:
            rows.append(f"| {name} | n/a | n/a | | | | | {errors} |")
            continue
        rows.append(
            f"| {name} | {ttfb[name]:.3f} | {ttlb[name]:.3f} "
            f"| {ratio(ttfb[name], ttfb[DIRECT])} | {ratio(ttfb[name], ttfb[CHAT_NERVE])} "
            f"| {ratio(ttlb[name], ttlb[DIRECT])} | {ratio(ttlb[name], ttlb[CHAT_NERVE])} "
            f"| {errors} |"
        )
    return "\n".join(rows)


# -- the run ----------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python bench/protocols.py",
        description="Benchmark nerve's chat, Messages and Responses paths on loopback.",
        epilog=__doc__.split("\n\n", 2)[2] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--rounds", type=int, default=5, help="rounds (default: 5)")
    parser.add_argument("--seconds", type=float, default=2.0, help="measured s per run (2)")
    parser.add_argument("--warmup", type=float, default=0.5, help="unmeasured s per run (0.5)")
    parser.add_argument("--concurrency", dest="cs", type=int, nargs="+", default=[8, 1],
                        metavar="N", help="connections per load run (default: 8 1)")  # fmt: skip
    parser.add_argument("--stream-requests", type=int, default=200,
                        help="timed streams per target, all rounds (default: 200)")  # fmt: skip
    parser.add_argument("--chunk-delay-ms", type=float, default=0.0,
                        help="upstream sleep between SSE events (default: 0)")  # fmt: skip
    parser.add_argument("--skip-sdk-check", action="store_true", help="no real-SDK check")
    parser.add_argument("--startup-timeout", type=float, default=30.0, help="s to wait for nerve")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.seconds <= 0 or args.warmup < 0 or min(args.cs) < 1:
        parser.error("--rounds and --concurrency must be >= 1, --seconds > 0, --warmup >= 0")
    if args.stream_requests < args.rounds:
        parser.error("--stream-requests must be at least --rounds")
    return args


def start(
    procs: Processes, workdir: Path, args: argparse.Namespace, template: str = CONFIG_TEMPLATE
) -> tuple[int, int]:
    """The upstream, then nerve in front of it (configured by `template`), both answering."""
    port_file = workdir / "upstream.port"
    cmd = [sys.executable, "-m", "bench.protocol_upstream", "--host", HOST]
    cmd += ["--port-file", str(port_file), "--chunk-delay-ms", str(args.chunk_delay_ms)]
    upstream = procs.start("upstream", cmd, cwd=HERE.parent)
    try:
        up_port = wait_for_port_file(port_file, upstream, 15, "the upstream")
    except RuntimeError as e:
        raise RuntimeError(f"{e}\nupstream log:\n{procs.log_tail(upstream)}") from None
    config = workdir / "nerve.yaml"
    config.write_text(template.format(host=HOST, port=up_port))
    port = free_port()
    cmd = shlex.split(default_gateway_cmd().format(config=config, port=port))
    log(f"upstream on port {up_port}; gateway: {shlex.join(cmd)}")
    gateway = procs.start("gateway", cmd, cwd=workdir)  # any state files land in tmp
    try:
        wait_for_health(f"http://{HOST}:{port}/health", gateway, args.startup_timeout)
    except RuntimeError as e:
        raise RuntimeError(f"{e}\ngateway log:\n{procs.log_tail(gateway)}") from None
    return up_port, port


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with signals_as_interrupt(), tempfile.TemporaryDirectory(prefix="nerve-protocols-") as tmp:
        workdir = Path(tmp)
        procs = Processes(workdir)
        try:
            up_port, port = start(procs, workdir, args)
            up, gw = f"http://{HOST}:{up_port}", f"http://{HOST}:{port}"
            if not args.skip_sdk_check:
                sdk_check(up, gw)
            urls = {t.name: (up if t.direct else gw) + t.path for t in TARGETS}
            runs = throughput(urls, workdir, args)
            stream_results = streams(urls, args)
            print(throughput_table(runs, args) + "\n\n" + stream_table(stream_results))
            for name, proc, _ in procs.children:
                if proc.poll() is not None:
                    raise RuntimeError(f"the {name} died during the run:\n{procs.log_tail(proc)}")
            return 0
        except KeyboardInterrupt:
            log("interrupted; stopping the upstream and the gateway")
            return 130
        except (RuntimeError, OSError, subprocess.SubprocessError) as e:
            log(f"bench failed: {e}")
            return 1
        finally:
            procs.close()


if __name__ == "__main__":
    sys.exit(main())
