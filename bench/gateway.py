"""Benchmark the nerve gateway against a fast fake upstream, on this machine, over loopback.

    python bench/gateway.py [--rounds 5] [--seconds 2] [--concurrency 8 1] [--clients raw aiohttp]
    python -m bench.gateway --gateway-cmd "python proto.py --port {port} --upstream {upstream}"

Starts bench/upstream.py (aiohttp, fixed ~400-byte chat.completion) on a free port; in front of it
bench/passthrough.py, the "bare aiohttp pass-through proxy" baseline of the speed target; and
`nerve serve --config FILE --port P` with a temporary config routing everything to the upstream,
rate limiter opened wide. Each proxy must answer GET /health and one chat request (200 with
usage). Then, every round, for each load generator (--clients) and concurrency, it runs three
targets back to back, each in a fresh load-generator process for --seconds after --warmup:
direct (-> upstream), baseline (-> pass-through -> upstream) and nerve (-> nerve -> upstream).
It prints one markdown table of medians per load generator.

Why two load generators: the ratio to direct depends on how fast the client itself is. The raw
asyncio+httptools generator drives the upstream ~2x harder than an aiohttp client, so direct
RPS is higher and every proxy's ratio looks lower. The speed references in NOTES.md (bare
pass-through 0.46x direct) were measured with an aiohttp-style client: compare nerve with the
baseline measured by the same generator, in the same round, not with a number from elsewhere.
Load generator, upstream and proxies share the machine's cores, so compare ratios between runs
on the same machine rather than absolute numbers across machines.

The default --seconds is 2 (not 3) so that a default full run (5 rounds x 2 generators x 2
concurrencies x 3 targets = 60 runs of ~2.9 s each with warmup and process start) takes about
3 minutes. Every subprocess it starts is stopped on exit, error or Ctrl-C. Nothing leaves
127.0.0.1.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from itertools import product
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
HOST = "127.0.0.1"
CHAT_PATH = "/v1/chat/completions"
Proc = subprocess.Popen[bytes]
CLIENT_NOTES = {
    "raw": "raw asyncio transport + httptools",
    "aiohttp": "one aiohttp.ClientSession, the kind of client behind the NOTES.md references",
}

CONFIG_TEMPLATE = """\
# Written by bench/gateway.py for one benchmark run.
providers:
  - {{name: fake, protocol: openai, base_url: "{base_url}", api_key: "sk-bench"}}
routes:
  - {{name: default, model: {{provider: fake, model: bench-model}}}}
limits:
  rate:
    window_requests: 100000000
    burst: 100000000
    refill_per_second: 100000000
    max_concurrent: 100000
"""


def default_gateway_cmd() -> str:
    script = Path(sys.executable).with_name("nerve")
    exe = shlex.quote(str(script)) if script.exists() else f"{shlex.quote(sys.executable)} -m nerve"
    return exe + " serve --config {config} --port {port}"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


class Processes:
    """Children started in their own process groups, all stopped by close()."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.children: list[tuple[str, Proc, Path]] = []

    def start(self, name: str, cmd: list[str], cwd: Path) -> Proc:
        log_path = self.workdir / f"{name}.log"
        with open(log_path, "wb") as out:  # a file, not a pipe: a chatty child can never block
            proc = subprocess.Popen(
                cmd,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own group: we signal it (and its workers) ourselves
            )
        self.children.append((name, proc, log_path))
        return proc

    def log_tail(self, proc: Proc, lines: int = 30) -> str:
        for _, p, path in self.children:
            if p is proc:
                text = path.read_text(errors="replace").splitlines()
                return "\n".join(text[-lines:])
        return ""

    def close(self) -> None:
        for _, proc, _ in reversed(self.children):
            self._signal(proc, signal.SIGTERM)
        deadline = time.monotonic() + 10
        for name, proc, _ in reversed(self.children):
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                log(f"{name} (pid {proc.pid}) ignored SIGTERM; killing it")
                self._signal(proc, signal.SIGKILL)
                proc.wait()
        self.children.clear()

    @staticmethod
    def _signal(proc: Proc, sig: signal.Signals) -> None:
        if proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)  # the group whose leader we started (start_new_session)


def wait_for_port_file(path: Path, proc: Proc, timeout: float, name: str) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited with code {proc.returncode}")
        with contextlib.suppress(FileNotFoundError, ValueError):
            return int(path.read_text())
        time.sleep(0.05)
    raise RuntimeError(f"{name} did not report its port within {timeout:.0f} s")


def wait_for_health(url: str, proc: Proc, timeout: float, name: str = "the gateway") -> None:
    """Poll GET url until 200. Connection refused is expected while the gateway starts."""
    deadline = time.monotonic() + timeout
    last: object = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited with code {proc.returncode} before /health")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
                last = f"HTTP {response.status}"
        except urllib.error.HTTPError as e:
            last = f"HTTP {e.code}"
        except (urllib.error.URLError, ConnectionError, TimeoutError) as e:
            last = e
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer 200 within {timeout:.0f} s (last: {last})")


def start_server(procs: Processes, name: str, extra: list[str]) -> tuple[Proc, int]:
    """Start bench/NAME.py on a free port (it reports the port through --port-file). For the
    pass-through, also check /health and one chat request through it."""
    port_file = procs.workdir / f"{name}.port"
    script = [sys.executable, str(HERE / f"{name}.py"), "--host", HOST]
    proc = procs.start(name, [*script, "--port-file", str(port_file), *extra], cwd=procs.workdir)
    try:
        port = wait_for_port_file(port_file, proc, 15, f"the {name}")
        if name != "upstream":
            wait_for_health(f"http://{HOST}:{port}/health", proc, 15, f"the {name}")
            smoke_test(f"http://{HOST}:{port}{CHAT_PATH}")
    except RuntimeError as e:
        raise RuntimeError(f"{e}\n{name} log:\n{procs.log_tail(proc)}") from None
    return proc, port


def smoke_test(url: str) -> None:
    """One request through the gateway, so a misconfiguration fails loudly, not as errors/s."""
    from bench.loadgen import chat_request_body

    request = urllib.request.Request(
        url,
        data=chat_request_body(),
        method="POST",
        headers={"Content-Type": "application/json", "Authorization": "Bearer sk-bench"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            payload = json.loads(response.read())
    except urllib.error.HTTPError as e:
        body = e.read()[:500].decode(errors="replace")
        raise RuntimeError(f"POST {url} answered {e.code}: {body}") from None
    if "usage" not in payload:
        raise RuntimeError(f"POST {url} answered 200 without usage: {str(payload)[:300]}")


def load(
    url: str, concurrency: int, seconds: float, warmup: float, client: str = "raw"
) -> dict[str, Any]:
    """One load-generator run in its own process (so it has a core's worth of CPU to itself)."""
    cmd = [sys.executable, str(HERE / "loadgen.py"), url, "--client", client]
    cmd += ["--concurrency", str(concurrency), "--seconds", str(seconds), "--warmup", str(warmup)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + warmup + 60)
    if done.returncode != 0:
        raise RuntimeError(f"the load generator failed ({done.returncode}):\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


Results = dict[str, dict[int, dict[str, list[dict[str, Any]]]]]  # client -> c -> target -> runs


def bench(targets: dict[str, str], args: argparse.Namespace) -> Results:
    """Every round: for each client and concurrency, each target back to back (so slow drift
    on the machine hits all three alike)."""
    clients, cs, rounds = args.clients, args.concurrency, args.rounds
    results: Results = {cl: {c: {k: [] for k in targets} for c in cs} for cl in clients}
    for r, client, c, (kind, url) in product(range(1, rounds + 1), clients, cs, targets.items()):
        res = load(url, c, args.seconds, args.warmup, client)
        results[client][c][kind].append(res)
        err = res["errors"]
        note = f"  {err} errors, first: {res['first_error']}" if err else ""
        log(
            f"round {r}/{rounds}  {client:<7} c={c:<3} {kind:<8} {res['rps']:8.0f} req/s  "
            f"p50 {res['p50_ms']:.3f} ms  p99 {res['p99_ms']:.3f} ms{note}"
        )
    return results


def table(
    client: str, runs_by_c: dict[int, dict[str, list[dict[str, Any]]]], rounds: int, seconds: float
) -> str:
    def med(runs: list[dict[str, Any]], key: str) -> float:
        return float(statistics.median(run[key] for run in runs))

    def ratio(a: float, b: float) -> str:
        return f"{a / b:.2f}x" if b else "n/a"

    rows = [
        f"Load generator: {client} ({CLIENT_NOTES[client]}). "
        f"Medians over {rounds} rounds of {seconds:g} s; latency in ms.",
        "",
        "| concurrency | direct RPS | baseline RPS | nerve RPS | nerve/direct | baseline/direct "
        "| nerve/baseline | direct p50 | baseline p50 | nerve p50 | nerve added p50 "
        "| nerve p99 | errors b/n |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for c, runs in runs_by_c.items():
        d, b, n = runs["direct"], runs["baseline"], runs["nerve"]
        d_rps, b_rps, n_rps = med(d, "rps"), med(b, "rps"), med(n, "rps")
        d_p50, b_p50, n_p50 = med(d, "p50_ms"), med(b, "p50_ms"), med(n, "p50_ms")
        b_err, n_err = sum(run["errors"] for run in b), sum(run["errors"] for run in n)
        rows.append(
            f"| {c} | {d_rps:.0f} | {b_rps:.0f} | {n_rps:.0f} | {ratio(n_rps, d_rps)} "
            f"| {ratio(b_rps, d_rps)} | {ratio(n_rps, b_rps)} "
            f"| {d_p50:.3f} | {b_p50:.3f} | {n_p50:.3f} | {n_p50 - d_p50:+.3f} "
            f"| {med(n, 'p99_ms'):.3f} | {b_err}/{n_err} |"
        )
    return "\n".join(rows)


@contextlib.contextmanager
def signals_as_interrupt() -> Iterator[None]:
    """Make SIGTERM, and SIGINT even where inherited as ignored (a background job), unwind like
    Ctrl-C, so the finally blocks stop the children."""

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python bench/gateway.py",
        description="Benchmark nerve's chat path against a fast fake upstream on loopback.",
        epilog=__doc__.split("\n\n", 2)[2] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--rounds", type=int, default=5, help="rounds (default: 5)")
    parser.add_argument("--seconds", type=float, default=2.0, help="measured s per run (2)")
    parser.add_argument("--warmup", type=float, default=0.5, help="unmeasured seconds per run")
    parser.add_argument(
        "--concurrency",
        type=int,
        nargs="+",
        default=[8, 1],
        metavar="N",
        help="keep-alive connections per run (default: 8 1)",
    )
    clients = parser.add_mutually_exclusive_group()
    clients.add_argument(
        "--clients",
        nargs="+",
        choices=tuple(CLIENT_NOTES),
        default=list(CLIENT_NOTES),
        metavar="CLIENT",
        help="load generators to run, one table each: raw and/or aiohttp (default: both)",
    )
    clients.add_argument(
        "--client",
        choices=tuple(CLIENT_NOTES),
        help="run only this load generator (same as --clients CLIENT)",
    )
    parser.add_argument(
        "--gateway-cmd",
        default=None,
        help="command that starts the gateway; {config}, {port} and {upstream} (the provider "
        "base URL, http://127.0.0.1:PORT/v1) are filled in. "
        "Default: nerve serve --config {config} --port {port}",
    )
    parser.add_argument(
        "--startup-timeout", type=float, default=30.0, help="seconds to wait for /health"
    )
    args = parser.parse_args(argv)
    if args.client:
        args.clients = [args.client]
    args.clients = list(dict.fromkeys(args.clients))  # drop repeats, keep the order
    if args.rounds < 1 or args.seconds <= 0 or args.warmup < 0 or min(args.concurrency) < 1:
        parser.error("--rounds and --concurrency must be >= 1, --seconds > 0, --warmup >= 0")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if str(HERE.parent) not in sys.path:  # `python bench/gateway.py` puts bench/ on the path
        sys.path.insert(0, str(HERE.parent))
    with (
        signals_as_interrupt(),
        tempfile.TemporaryDirectory(prefix="nerve-bench-") as tmp,
    ):
        workdir = Path(tmp)
        procs = Processes(workdir)
        try:
            upstream, up_port = start_server(procs, "upstream", [])
            base_url = f"http://{HOST}:{up_port}/v1"
            upstream_url = f"{base_url}/chat/completions"
            passthrough, pt_port = start_server(procs, "passthrough", ["--upstream", upstream_url])

            config = workdir / "nerve.yaml"
            config.write_text(CONFIG_TEMPLATE.format(base_url=base_url))
            port = free_port()
            template = args.gateway_cmd or default_gateway_cmd()
            cmd = shlex.split(template.format(config=config, port=port, upstream=base_url))
            log(f"upstream {base_url}; baseline on port {pt_port}; gateway: {shlex.join(cmd)}")
            gateway = procs.start("gateway", cmd, cwd=workdir)  # any state files land in tmp
            try:
                wait_for_health(f"http://{HOST}:{port}/health", gateway, args.startup_timeout)
                smoke_test(f"http://{HOST}:{port}{CHAT_PATH}")
            except RuntimeError as e:
                raise RuntimeError(f"{e}\ngateway log:\n{procs.log_tail(gateway)}") from None

            targets = {
                "direct": upstream_url,
                "baseline": f"http://{HOST}:{pt_port}{CHAT_PATH}",
                "nerve": f"http://{HOST}:{port}{CHAT_PATH}",
            }
            results = bench(targets, args)
            print(
                "\n\n".join(table(c, results[c], args.rounds, args.seconds) for c in args.clients)
            )
            for name, proc in (
                ("upstream", upstream),
                ("pass-through", passthrough),
                ("gateway", gateway),
            ):
                if proc.poll() is not None:
                    raise RuntimeError(f"the {name} died during the run:\n{procs.log_tail(proc)}")
            return 0
        except KeyboardInterrupt:
            log("interrupted; stopping the upstream, the pass-through and the gateway")
            return 130
        except (RuntimeError, OSError, subprocess.SubprocessError) as e:
            log(f"bench failed: {e}")
            return 1
        finally:
            procs.close()


if __name__ == "__main__":
    sys.exit(main())
