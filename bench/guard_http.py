"""The tool-call guard over HTTP (SPEC TP-1): what judging a model's tool call costs a client.

    python bench/guard_http.py [--rounds 5] [--seconds 2] [--stream-requests 200]

A real `nerve serve` in front of bench/protocol_upstream.py, whose chat answers for the models
`bench-tool-ls` and `bench-tool-rm` are a Bash tool call (`ls -la`, `rm -rf ~`; streamed with
the arguments in 20 pieces). The same answer goes through routes whose guard is off, flag or
block; the text answer through the default route is the reference. Two measurements, targets
interleaved round by round:

1. Whole answers at concurrency 1, from bench/loadgen.py in its own process: p50 latency.
2. Streams at concurrency 1, from this process: TTFB (first body byte) and TTLB (end of body);
   with the guard on, a tool call's frames are held until the call is complete and judged, so
   its cost shows in TTLB.

Ratios are to the guard-off route with the same answer: measured in one run on one machine.
Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import uvloop

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:  # `python bench/guard_http.py` puts bench/ on the path
    sys.path.insert(0, str(HERE.parent))

from bench.gateway import HOST, Processes, log, signals_as_interrupt  # noqa: E402
from bench.protocols import Target, _stream_round, load, med, ratio, start  # noqa: E402

CONFIG = """\
# Written by bench/guard_http.py for one benchmark run.
providers:
  - {{name: oa, protocol: openai, base_url: "http://{host}:{port}/v1", api_key: "sk-bench"}}
routes:
  - {{name: default, model: {{provider: oa, model: bench-model}}}}
  - {{name: off-ls, model: {{provider: oa, model: bench-tool-ls}}, guard: {{tool_calls: "off"}}}}
  - {{name: flag-ls, model: {{provider: oa, model: bench-tool-ls}}, guard: {{tool_calls: flag}}}}
  - {{name: block-ls, model: {{provider: oa, model: bench-tool-ls}}, guard: {{tool_calls: block}}}}
  - {{name: off-rm, model: {{provider: oa, model: bench-tool-rm}}, guard: {{tool_calls: "off"}}}}
  - {{name: block-rm, model: {{provider: oa, model: bench-tool-rm}}, guard: {{tool_calls: block}}}}
limits:
  rate: {{window_requests: 100000000, burst: 100000000, refill_per_second: 100000000,
          max_concurrent: 100000}}
"""
PATH = "/v1/chat/completions"
TARGETS = [  # (target, the guard-off route with the same answer)
    (Target("text answer, guard flag", "chat", PATH, "default"), "default"),
    (Target("harmless call, guard off", "chat", PATH, "off-ls"), "off-ls"),
    (Target("harmless call, guard flag", "chat", PATH, "flag-ls"), "off-ls"),
    (Target("harmless call, guard block", "chat", PATH, "block-ls"), "off-ls"),
    (Target("dangerous call, guard off", "chat", PATH, "off-rm"), "off-rm"),
    (Target("dangerous call, guard block (replaced)", "chat", PATH, "block-rm"), "off-rm"),
]


def measure(gw: str, workdir: Path, args: argparse.Namespace) -> str:
    latency: dict[str, list[float]] = {t.route: [] for t, _ in TARGETS}
    streams: dict[str, list[tuple[float, float]]] = {t.route: [] for t, _ in TARGETS}
    for r in range(args.rounds):
        for t, _ in TARGETS:
            body = workdir / f"{t.route}.json"
            body.write_bytes(t.body(stream=False))
            run = load(gw + PATH, body, {}, 1, args)
            latency[t.route].append(run["p50_ms"])
            timings, errors = uvloop.run(_stream_round(gw + PATH, t, args.stream_requests))
            if errors:
                raise RuntimeError(f"{t.name}: {len(errors)} bad streams, first: {errors[0]}")
            streams[t.route] += timings
        log(f"round {r + 1}/{args.rounds}")
    rows = [
        f"Concurrency 1; whole answers: median of {args.rounds} p50s over {args.seconds:g} s; "
        f"streams: medians of {args.rounds * args.stream_requests}; ms. Ratios: to the "
        "guard-off route with the same answer.",
        "",
        "| answer, route | p50 | / off | stream TTFB | stream TTLB | TTLB / off |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for t, off in TARGETS:
        p50, base = med(latency[t.route]), med(latency[off])
        ttfb = med(f for f, _ in streams[t.route])
        ttlb, base_ttlb = med(x for _, x in streams[t.route]), med(x for _, x in streams[off])
        rows.append(f"| {t.name} | {p50:.3f} | {ratio(p50, base)} | {ttfb:.3f} | {ttlb:.3f} "
                    f"| {ratio(ttlb, base_ttlb)} |")  # fmt: skip
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python bench/guard_http.py",
                                     description=__doc__.split("\n\n")[0])  # fmt: skip
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0, help="per whole-answer run")
    parser.add_argument("--warmup", type=float, default=0.5)
    parser.add_argument("--stream-requests", type=int, default=40, help="per target and round")
    parser.add_argument("--startup-timeout", type=float, default=30.0)
    args = parser.parse_args(argv)
    args.chunk_delay_ms = 0.0  # what bench.protocols.start passes to the upstream
    with signals_as_interrupt(), tempfile.TemporaryDirectory(prefix="nerve-guard-") as tmp:
        workdir = Path(tmp)
        procs = Processes(workdir)
        try:
            _, port = start(procs, workdir, args, CONFIG)
            print(measure(f"http://{HOST}:{port}", workdir, args))
            return 0
        except KeyboardInterrupt:
            log("interrupted; stopping the upstream and the gateway")
            return 130
        except (RuntimeError, OSError) as e:
            log(f"bench failed: {e}")
            return 1
        finally:
            procs.close()


if __name__ == "__main__":
    sys.exit(main())
