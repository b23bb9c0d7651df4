"""The tool-call guard (SPEC TP-1): its cost on answers and streams, and its quality.

    .venv/bin/python bench/guard.py [--data ../shared/data/safety] [--samples 3000]
                                    [--only cost|quality]

1. Answers: p50/p95 µs of `judge_body` on a non-streamed answer holding one tool call (Bash,
   harmless and dangerous), per format (chat, messages, responses as nerve builds them), with the
   guard off, flagging and blocking; and on an answer with no tool call (the byte check alone).
2. Streams: µs of CPU to push a typical stream through the filter (30 text deltas, then one
   tool call whose arguments come in 20 deltas; frames as nerve's own translators emit them),
   next to the same loop with no filter; and ns per text frame on the hot path.
3. Quality: recall (blocked / label block) and false positives (blocked / label allow) of the
   guard in `block` mode on the labelled shell and SQL data wrapped as the agents send them
   (Claude Code Bash in a Messages answer, Codex shell's argv array and exec_command in a
   Responses answer, OpenHands execute_bash and execute_sql in a chat answer), next to the
   engine's own figure on the raw commands; "differ" counts rows where the wrapped verdict is not
   the raw one (0 means no wrapper loses or adds anything). nl2bash (unlabelled, mostly benign)
   gives the share blocked. Nothing is tuned on this data.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast

import orjson

from nerve.config_sections import GuardConfig
from nerve.gateway.dialects.messages_wire import MessagesStream, chat_to_message
from nerve.gateway.dialects.responses_wire import ResponsesStream, chat_to_response
from nerve.gateway.guard import Format, ToolGuard
from nerve.safety import Kind, SafetyEngine

if str(Path(__file__).resolve().parents[1]) not in sys.path:  # `python bench/guard.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.safety import Score, load

ROOT = Path(__file__).resolve().parents[1]
FORMATS: tuple[Format, ...] = ("chat", "messages", "responses")
MODES = ("off", "flag", "block")
JSON = dict[str, Any]
REQUEST: JSON = {"model": "m", "input": "hi", "tools": []}


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def guard(mode: str) -> ToolGuard:
    return ToolGuard(GuardConfig.model_validate({"tool_calls": mode}), SafetyEngine())


# --- answers ---------------------------------------------------------------------------------


def completion(calls: list[tuple[str, JSON]], text: str | None = None) -> JSON:
    tool_calls = [{"id": f"call_{i}", "type": "function",
                   "function": {"name": name, "arguments": json.dumps(args)}}
                  for i, (name, args) in enumerate(calls)]  # fmt: skip
    message: JSON = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = tool_calls
    usage = {"prompt_tokens": 900, "completion_tokens": 40, "total_tokens": 940}
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": "tool_calls" if tool_calls else "stop"}],
            "usage": usage}  # fmt: skip


def answer(fmt: Format, calls: list[tuple[str, JSON]], text: str | None = None) -> bytes:
    chat = completion(calls, text)
    if fmt == "chat":
        return orjson.dumps(chat)
    if fmt == "messages":
        return orjson.dumps(chat_to_message(chat, "claude-x"))
    return orjson.dumps(chat_to_response(chat, REQUEST))


async def timed(run: Callable[[], Awaitable[object]], samples: int) -> tuple[float, float]:
    for _ in range(min(200, samples)):
        await run()
    times = []
    for _ in range(samples):
        start = time.perf_counter_ns()
        await run()
        times.append((time.perf_counter_ns() - start) / 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95)]


async def answers(samples: int) -> None:
    cases = [("one harmless call (`ls -la`)", [("Bash", {"command": "git status && ls -la"})]),
             ("one dangerous call (`rm -rf ~`)", [("Bash", {"command": "rm -rf ~"})]),
             ("no tool call (text only)", [])]  # fmt: skip
    guards = {mode: guard(mode) for mode in MODES}
    rows = []
    for fmt in FORMATS:
        for name, calls in cases:
            body = answer(fmt, calls, None if calls else "Here is the plan: " + "step " * 200)
            row = [fmt, name, f"{len(body):,}"]
            for mode in MODES:
                run = guards[mode].judge_body
                p50, p95 = await timed(lambda r=run, f=fmt, b=body: r(f, b), samples)
                row.append(f"{p50:.1f} / {p95:.1f}")
            rows.append(row)
    print(f"\n### Answers: µs per judge_body, p50 / p95 ({samples:,} calls per cell)\n")
    print(table(["format", "answer", "bytes", *(f"guard {m}" for m in MODES)], rows))


# --- streams ---------------------------------------------------------------------------------


def chunks(command: str) -> list[JSON]:
    """A typical agent turn: 30 text deltas, then one Bash call in 20 argument deltas."""

    def chunk(delta: JSON, finish: str | None = None) -> JSON:
        return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
                "choices": [{"index": 0, "delta": delta, "logprobs": None,
                             "finish_reason": finish}]}  # fmt: skip

    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"content": f"word{i} "}) for i in range(30)]
    arguments = json.dumps({"command": command, "description": "List the files of the repo"})
    size = -(-len(arguments) // 20)
    head = {"index": 0, "id": "call_1", "type": "function",
            "function": {"name": "Bash", "arguments": ""}}  # fmt: skip
    out.append(chunk({"tool_calls": [head]}))
    for i in range(0, len(arguments), size):
        piece = {"index": 0, "function": {"arguments": arguments[i : i + size]}}
        out.append(chunk({"tool_calls": [piece]}))
    out.append(chunk({}, "tool_calls"))
    usage = {"prompt_tokens": 900, "completion_tokens": 60, "total_tokens": 960}
    return [*out, {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
                   "model": "m", "choices": [], "usage": usage}]  # fmt: skip


def frames(fmt: Format, command: str) -> list[bytes]:
    """The stream as nerve sends it in `fmt`, one frame per event."""
    parts = chunks(command)
    if fmt == "chat":
        return [b"data: " + orjson.dumps(c) + b"\n\n" for c in parts] + [b"data: [DONE]\n\n"]
    stream: Any = MessagesStream("m", input_tokens=900) if fmt == "messages" else (
        ResponsesStream(REQUEST, "m"))  # fmt: skip
    return [f for c in parts for f in stream.feed(c)] + stream.finish()


async def push(g: ToolGuard | None, fmt: Format, stream: list[bytes]) -> int:
    sink: list[bytes] = []
    if g is None:
        for frame in stream:
            sink.append(frame)
        return len(sink)
    flt = g.stream(fmt)
    for frame in stream:
        sink += await flt.feed(frame)
    sink += flt.finish()
    return len(sink)


async def streams(samples: int) -> None:
    guards = {mode: guard(mode) for mode in MODES}
    rows = []
    for fmt in FORMATS:
        for name, command in (("harmless call", "ls -la"), ("dangerous call", "rm -rf ~")):
            stream = frames(fmt, command)
            row = [fmt, name, str(len(stream))]
            base, _ = await timed(lambda f=fmt, s=stream: push(None, f, s), samples)
            row.append(f"{base:.1f}")
            for mode in MODES:
                g = guards[mode]
                p50, p95 = await timed(lambda g=g, f=fmt, s=stream: push(g, f, s), samples)
                row.append(f"{p50:.1f} / {p95:.1f}")
            rows.append(row)
    print(f"\n### Streams: µs to push a whole stream through, p50 / p95 ({samples:,} streams)\n")
    heads = ["format", "stream", "frames", "no filter", *(f"guard {m}" for m in MODES)]
    print(table(heads, rows))
    rows = []
    for fmt in FORMATS:
        text = [f for f in frames(fmt, "ls") if b"word" in f and b"tool" not in f][5]
        row = [fmt]
        for mode in MODES:
            flt = guards[mode].stream(fmt)
            runs = []
            for _ in range(7):  # the median of runs: one run is at the mercy of the machine
                start = time.perf_counter_ns()
                for _ in range(10_000):
                    await flt.feed(text)
                runs.append((time.perf_counter_ns() - start) / 10_000)
            row.append(f"{statistics.median(runs):.0f}")
        rows.append(row)
    print("\n### Hot path: ns per text-delta frame fed (median of 7 runs of 10,000 frames)\n")
    print(table(["format", *(f"guard {m}" for m in MODES)], rows))


# --- quality ---------------------------------------------------------------------------------

WRAPPERS: list[tuple[str, str, Format, str, Callable[[str], JSON]]] = [
    ("shell", "Claude Code Bash", "messages", "Bash", lambda t: {"command": t}),
    ("shell", "Codex shell (argv)", "responses", "shell",
     lambda t: {"command": ["bash", "-lc", t], "workdir": "/work"}),
    ("shell", "Codex exec_command", "responses", "exec_command", lambda t: {"cmd": t}),
    ("shell", "OpenHands execute_bash", "chat", "execute_bash", lambda t: {"command": t}),
    ("sql", "execute_sql", "chat", "execute_sql", lambda t: {"sql": t}),
]  # fmt: skip


async def quality(data: Path) -> None:
    engine = SafetyEngine()
    block = ToolGuard(GuardConfig(tool_calls="block"), engine)
    rows_by_kind = {"shell": load(data / "shell_commands_labeled.jsonl"),
                    "sql": load(data / "sql_statements_labeled.jsonl")}  # fmt: skip
    nl2bash = [r["text"] for r in load(data / "nl2bash_commands.jsonl")]
    raw: dict[str, list[bool]] = {}
    for kind, rows in rows_by_kind.items():
        raw[kind] = [not (await engine.check(cast(Kind, kind), r["text"])).allowed for r in rows]
    raw_nl = [not (await engine.check("shell", t)).allowed for t in nl2bash]
    table_rows = []
    for kind, rows in rows_by_kind.items():
        score = Score()
        for row, blocked in zip(rows, raw[kind], strict=True):
            score.add(row["label"], blocked)
        nl = f"{sum(raw_nl) / len(raw_nl):.2%}" if kind == "shell" else "–"
        table_rows.append([f"engine on raw {kind}", *score.cells(), "–", nl])
    for kind, name, fmt, tool, wrap in WRAPPERS:
        rows = rows_by_kind[kind]
        score, differ = Score(), 0
        for row, raw_blocked in zip(rows, raw[kind], strict=True):
            outcome = await block.judge_body(fmt, answer_of(fmt, tool, wrap(row["text"])))
            blocked = bool(outcome.blocked)
            score.add(row["label"], blocked)
            differ += blocked != raw_blocked
        nl = "–"
        if kind == "shell":
            shares = [bool((await block.judge_body(fmt, answer_of(fmt, tool, wrap(t)))).blocked)
                      for t in nl2bash]  # fmt: skip
            differ += sum(s != r for s, r in zip(shares, raw_nl, strict=True))
            nl = f"{sum(shares) / len(shares):.2%}"
        table_rows.append([f"{name} ({fmt})", *score.cells(), str(differ), nl])
    print("\n### Quality: the guard in block mode vs the engine on the raw commands\n")
    heads = ["judged", "recall", "false positives", "differ from raw", "nl2bash blocked"]
    print(table(heads, table_rows))


def answer_of(fmt: Format, tool: str, arguments: JSON) -> bytes:
    return answer(fmt, [(tool, arguments)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "safety")
    parser.add_argument("--samples", type=int, default=3000, help="timed calls per cell")
    parser.add_argument("--only", choices=("cost", "quality"))
    args = parser.parse_args()

    async def run() -> None:
        if args.only != "quality":
            gc.collect()
            gc.freeze()  # the bench's own objects are not what a call costs
            await answers(args.samples)
            await streams(max(200, args.samples // 5))
            gc.unfreeze()
        if args.only != "cost":
            await quality(args.data)

    asyncio.run(run())


if __name__ == "__main__":
    main()
