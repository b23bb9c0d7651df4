"""Traces (SPEC OB-1): what telemetry adds to the gateway's latency, off and on.

    python bench/telemetry.py [--rounds 5] [--seconds 2] [--concurrency 1 8] [--before-src DIR]

Starts bench/upstream.py (a fixed chat.completion), a loopback OTLP/HTTP collector (in this
process: aiohttp in a thread, decoding every ExportTraceServiceRequest to count the spans) and
`nerve serve` twice on one config but for `telemetry`: "off" (no endpoint: nothing imported,
nothing exported) and "on" (the collector, sample_ratio 1.0: every request is a server span
and an attempt span, batched and exported while the load runs). `--before-src DIR` adds
"before": nerve from another source tree on the "off" config, e.g. the code before the
telemetry hooks (`git archive HEAD src | tar -x -C DIR`), to show "off" costs nothing.

Every round runs each target back to back at each concurrency with bench/loadgen.py (raw
client, its own process): non-streaming chat, direct to the upstream and through each nerve.
Added p50 is a target's p50 minus direct's in the same round; the table has medians over the
rounds. Load generator, upstream, gateways and collector share the machine's cores (the "on"
gateway's exporter thread too), so compare rows of one run. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import statistics
import sys
import tempfile
import threading
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:  # `python bench/telemetry.py` puts bench/ on the path
    sys.path.insert(0, str(HERE.parent))

from bench.gateway import (  # noqa: E402
    CHAT_PATH,
    CONFIG_TEMPLATE,
    HOST,
    Processes,
    free_port,
    load,
    log,
    signals_as_interrupt,
    smoke_test,
    start_server,
    wait_for_health,
)


class Collector:
    """POST /v1/traces on 127.0.0.1:<free port>: decodes each export and counts its spans."""

    def __init__(self) -> None:
        self.spans = 0
        self.exports = 0
        self.url = ""
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=asyncio.run, args=(self._serve(),), daemon=True)

    def start(self) -> Collector:
        self._thread.start()
        self._ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    async def _serve(self) -> None:
        from aiohttp import web
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
            ExportTraceServiceResponse,
        )

        reply = ExportTraceServiceResponse().SerializeToString()

        async def traces(request: web.Request) -> web.Response:
            export = ExportTraceServiceRequest()
            export.ParseFromString(await request.read())
            self.exports += 1
            self.spans += sum(len(ss.spans) for rs in export.resource_spans
                              for ss in rs.scope_spans)  # fmt: skip
            return web.Response(body=reply, content_type="application/x-protobuf")

        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        app = web.Application()
        app.router.add_post("/v1/traces", traces)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        port = free_port()
        await web.TCPSite(runner, HOST, port).start()
        self.url = f"http://{HOST}:{port}"
        self._ready.set()
        await self._stop.wait()
        await runner.cleanup()


def calls(chat_url: str) -> int:
    """The upstream calls a gateway recorded (GET /stats): each one is 2 spans when traced."""
    with urllib.request.urlopen(chat_url.replace(CHAT_PATH, "/stats"), timeout=10) as response:
        return int(json.loads(response.read())["calls"])


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc), all its threads."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_nerve(
    procs: Processes, name: str, config: str, src: Path | None, timeout: float
) -> tuple[str, int]:
    path = procs.workdir / f"{name}.yaml"
    path.write_text(config)
    port = free_port()
    cmd = [sys.executable, "-m", "nerve", "serve", "--config", str(path), "--port", str(port),
           "--log-level", "warning"]  # fmt: skip
    if src is not None:  # that tree's nerve, not the installed one
        cmd = ["env", f"PYTHONPATH={src}", *cmd]
    workdir = procs.workdir / name
    workdir.mkdir()
    log(f"{name}: {shlex.join(cmd)}")
    proc = procs.start(name, cmd, cwd=workdir)
    url = f"http://{HOST}:{port}"
    try:
        wait_for_health(f"{url}/health", proc, timeout, name)
        smoke_test(url + CHAT_PATH)
    except RuntimeError as e:
        raise RuntimeError(f"{e}\n{name} log:\n{procs.log_tail(proc)}") from None
    return url + CHAT_PATH, proc.pid


def table(runs: dict[str, dict[int, list[dict[str, Any]]]], args: argparse.Namespace,
          spans: int, exports: int, calls_on: int, dropped: bool) -> str:  # fmt: skip
    def med(target: str, c: int, key: str) -> float:
        return float(statistics.median(r[key] for r in runs[target][c]))

    def added(target: str, c: int) -> float:
        pairs = zip(runs[target][c], runs["direct"][c], strict=True)
        return float(statistics.median(t["p50_ms"] - d["p50_ms"] for t, d in pairs))

    def cpu(target: str) -> str:
        per = [r["cpu_ms"] for c in cs for r in runs[target][c] if "cpu_ms" in r]
        return f"{statistics.median(per):.3f}" if per else "-"

    cs = args.concurrency
    head = "| target |" + "".join(f" c={c} RPS | c={c} p50 ms | c={c} added p50 ms |" for c in cs)
    rows = [
        f"Medians over {args.rounds} rounds of {args.seconds:g} s, non-streaming chat, raw "
        "load generator; added p50 = target p50 - direct p50 in the same round.",
        "",
        head + " gateway CPU ms/request | errors |",
        "|---|" + "---:|---:|---:|" * len(cs) + "---:|---:|",
    ]
    for target in runs:
        cells = "".join(
            f" {med(target, c, 'rps'):.0f} | {med(target, c, 'p50_ms'):.3f} | "
            + ("-" if target == "direct" else f"{added(target, c):+.3f}")
            + " |"
            for c in cs
        )
        errors = sum(r["errors"] for c in cs for r in runs[target][c])
        rows.append(f"| {target} |{cells} {cpu(target)} | {errors} |")
    drops = "DROPPED spans (its queue was full)" if dropped else "dropped none"
    rows.append("")
    rows.append(
        f"Telemetry on: {calls_on} requests, {spans} spans exported in {exports} OTLP/HTTP "
        f"posts (2 a request: server span + attempt); the SDK {drops}."
    )
    return "\n".join(rows)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python bench/telemetry.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--rounds", type=int, default=5, help="rounds (default: 5)")
    parser.add_argument("--seconds", type=float, default=2.0, help="measured s per run (2)")
    parser.add_argument("--warmup", type=float, default=0.5, help="unmeasured s per run (0.5)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8], metavar="N",
                        help="keep-alive connections per run (default: 1 8)")  # fmt: skip
    parser.add_argument(
        "--before-src",
        type=Path,
        default=None,
        metavar="DIR",
        help="another nerve source tree (its src/ or the dir holding nerve/)",
    )
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.seconds <= 0 or min(args.concurrency) < 1:
        parser.error("--rounds and --concurrency must be >= 1 and --seconds > 0")
    if args.before_src is not None:
        src = args.before_src.resolve()
        src = src / "src" if (src / "src" / "nerve").is_dir() else src
        if not (src / "nerve" / "__init__.py").is_file():
            parser.error(f"--before-src {args.before_src}: no nerve package there")
        args.before_src = src
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    collector = Collector().start()
    with signals_as_interrupt(), tempfile.TemporaryDirectory(prefix="nerve-bench-otel-") as tmp:
        procs = Processes(Path(tmp))
        try:
            _, up_port = start_server(procs, "upstream", [])
            base = f"http://{HOST}:{up_port}/v1"
            off = CONFIG_TEMPLATE.format(base_url=base)
            on = off + f'telemetry: {{otlp_endpoint: "{collector.url}", sample_ratio: 1.0}}\n'
            targets: dict[str, tuple[str, int | None]] = {
                "direct": (f"{base}/chat/completions", None)
            }
            if args.before_src is not None:
                targets["nerve before"] = start_nerve(procs, "before", off, args.before_src, 30)
            targets["nerve, telemetry off"] = start_nerve(procs, "off", off, None, 30)
            targets["nerve, telemetry on (100%)"] = start_nerve(procs, "on", on, None, 30)
            runs: dict[str, dict[int, list[dict[str, Any]]]] = {
                t: {c: [] for c in args.concurrency} for t in targets
            }
            for r in range(1, args.rounds + 1):
                for c in args.concurrency:
                    for target, (url, pid) in targets.items():
                        if pid is not None:
                            before = (cpu_seconds(pid), calls(url))
                        res = load(url, c, args.seconds, args.warmup)
                        if pid is not None:  # every call of the run, its warmup included
                            spent, n = cpu_seconds(pid) - before[0], calls(url) - before[1]
                            res["cpu_ms"] = spent / max(n, 1) * 1000
                        runs[target][c].append(res)
                        log(f"round {r}/{args.rounds} c={c} {target:<28} {res['rps']:7.0f} req/s "
                            f"p50 {res['p50_ms']:.3f} ms  errors {res['errors']}")  # fmt: skip
            calls_on = calls(targets["nerve, telemetry on (100%)"][0])
            procs.close()  # the "on" gateway flushes its last spans on the way out
            dropped = "dropping Span" in (procs.workdir / "on.log").read_text(errors="replace")
            print(table(runs, args, collector.spans, collector.exports, calls_on, dropped))
            return 0
        except KeyboardInterrupt:
            return 130
        except (RuntimeError, OSError) as e:
            log(f"bench failed: {e}")
            return 1
        finally:
            procs.close()
            collector.stop()


if __name__ == "__main__":
    os.environ.pop("NERVE_CONFIG", None)
    sys.exit(main())
