"""What path memory (SPEC TP-2) adds to a gateway request: recall, injection, the stream tap.

    python bench/path_memory.py [--records 1000] [--iterations 300] [--messages 40]

On a temp SQLite file (build_memory, as `nerve serve` builds it) one user gets `--records`
records: conversation turns stored through `PathMemory.store_later` (the background path,
timed as turns/s), 50 facts and 50 perception events. Then, per request, in process:

- recall: `PathMemory.recall` of a chat body of `--messages` messages whose last one asks
  something the store can answer (build_context's four tiers, search included); the first
  call, which builds the user's search index, is shown apart. The baseline is a route without
  memory: no call at all, 0 ms; `recall` with memory off (None) shows the cost of asking.
- with_context per dialect on a Claude-Code-sized body (a cached system prompt, `--messages`
  messages); `asked`, which recall runs on every body; and a TextTap over a 400-chunk stream.

Everything stays on this machine.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from typing import Any

import orjson

from nerve.config import parse_config
from nerve.gateway.recall import PathMemory, with_context
from nerve.gateway.recall_text import TextTap, asked
from nerve.memory import build_memory

USER = "bench"
TOPICS = ["deploy", "staging", "kestrel", "invoice", "payments", "redis", "timeout", "login",
          "docker", "pagination", "export", "csv", "retry", "budget", "alerts",
          "migration"]  # fmt: skip
SYSTEM = "You are a careful coding agent. " * 400  # ~12 KB, like an agent's system prompt


def sentence(rng: random.Random, n: int = 12) -> str:
    return " ".join(rng.choice(TOPICS) for _ in range(n))


def bodies(rng: random.Random, messages: int) -> dict[str, dict[str, Any]]:
    talk = [{"role": "user" if i % 2 == 0 else "assistant", "content": sentence(rng, 40)}
            for i in range(messages - 1)]  # fmt: skip
    talk.append({"role": "user", "content": "what did we decide about the staging deploy?"})
    cached = {"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}
    return {
        "chat": {"model": "auto", "messages": [{"role": "system", "content": SYSTEM}, *talk]},
        "messages": {"model": "m", "system": [cached], "messages": talk, "max_tokens": 1024},
        "responses": {"model": "m", "instructions": SYSTEM, "input": talk},
    }


def chat_stream(pieces: int) -> list[bytes]:
    chunk = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": "word "}, "finish_reason": None}],
    }
    return [b"data: " + orjson.dumps(chunk) + b"\n\n"] * pieces + [b"data: [DONE]\n\n"]


async def timed(call: Callable[[], Awaitable[Any]], n: int) -> list[float]:
    ms: list[float] = []
    for _ in range(n):
        t0 = time.perf_counter()
        await call()
        ms.append((time.perf_counter() - t0) * 1000)
    return sorted(ms)


def timed_sync(call: Callable[[], Any], n: int) -> list[float]:
    ms: list[float] = []
    for _ in range(n):
        t0 = time.perf_counter()
        call()
        ms.append((time.perf_counter() - t0) * 1000)
    return sorted(ms)


async def seed(path: PathMemory, memory: Any, records: int, rng: random.Random) -> float:
    for i in range(50):
        await memory.store_fact(USER, f"project {i}", rng.choice(TOPICS), sentence(rng, 4), 0.8)
    for _ in range(50):
        await memory.record_event(USER, "s-old", "body_bash", {"command": sentence(rng, 6)})
    exchanges = max(0, records - 100) // 2
    start = time.perf_counter()
    for i in range(exchanges):
        body = {"messages": [{"role": "user", "content": f"{i}: {sentence(rng)}"}]}
        path.store_later(USER, "chat", body, sentence(rng, 30))
    await path.idle()
    return 2 * exchanges / (time.perf_counter() - start)


async def run(records: int, iterations: int, messages: int) -> list[tuple[str, list[float]]]:
    rng = random.Random(1)
    rows: list[tuple[str, list[float]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        config = parse_config({"storage": {"url": f"sqlite:///{tmp}/bench.db"}}, environ={})
        memory = build_memory(config, environ={})
        await memory.open()
        try:
            path = PathMemory(lambda: memory, max_pending=records)
            rate = await seed(path, memory, records, rng)
            print(f"seeded {records} records; turns stored in the background at {rate:.0f}/s")
            body = bodies(rng, messages)
            n_items: list[int] = []

            async def recall() -> None:
                n_items.append((await path.recall("chat", body["chat"], USER))[1])

            rows.append(("recall, first (builds the search index)", await timed(recall, 1)))
            rows.append((f"recall ({records} records)", await timed(recall, iterations)))
            off = PathMemory(lambda: None)
            rows.append(("recall, memory off", await timed(
                lambda: off.recall("chat", body["chat"], USER), iterations)))  # fmt: skip
            rows.append(("no memory on the route (baseline)", [0.0]))
            block = "<memory>\n" + "\n".join(f"- [fact] {sentence(rng)}" for _ in range(5))
            for dialect, b in body.items():

                def inject(d: str = dialect, b: dict[str, Any] = b) -> None:
                    with_context(d, b, block)

                rows.append((f"with_context {dialect}", timed_sync(inject, iterations * 10)))
            rows.append((f"asked (chat, {messages} messages)", timed_sync(
                lambda: asked("chat", body["chat"]), iterations * 10)))  # fmt: skip
            frames = chat_stream(400)

            def tap() -> None:
                t = TextTap("chat")
                for frame in frames:
                    t.feed(frame)

            rows.append(("TextTap, 400-chunk chat stream", timed_sync(tap, iterations)))
            print(f"items recalled per call: {statistics.median(n_items):g}; "
                  f"failures: {path.failures}")  # fmt: skip
        finally:
            await memory.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--messages", type=int, default=40)
    args = parser.parse_args()
    rows = asyncio.run(run(args.records, args.iterations, args.messages))
    print("| per request | p50 ms | p95 ms |")
    print("|---|---:|---:|")
    for name, ms in rows:
        p95 = ms[min(len(ms) - 1, int(0.95 * len(ms)))]
        print(f"| {name} | {statistics.median(ms):.3f} | {p95:.3f} |")


if __name__ == "__main__":
    main()
