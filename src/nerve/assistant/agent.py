"""The assistant: one agent core behind every channel (SPEC AS-1, AS-2).

`Assistant.reply(Inbound) -> Outbound` is one turn: history and memory context from memory,
the prompt (prompt.py), the tool-call loop (loop.py), then the turns, the token use and the
tools called recorded through memory, and older turns folded into a summary when due.
`run(bus)` serves a bus: a typing indicator, then the reply, for each inbound message;
conversations run concurrently, the turns of one conversation one at a time.

The model is reached only through `ask(body) -> completion` (the gateway's Python API, wired
in build.py); tools only through the registry's chokepoint.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from typing import Any

from nerve.assistant import prompt
from nerve.assistant.bus import Bus, Inbound, Outbound
from nerve.assistant.conversation import (
    Conversation,
    compact,
    load_history,
    record_turn,
    session_of,
    text_summarizer,
)
from nerve.assistant.loop import ChatFn, Loop, LoopResult
from nerve.assistant.streaming import Delta, StreamFn
from nerve.config import Config
from nerve.memory import Memory, build_context
from nerve.memory.summaries import Summarizer, model_summarizer
from nerve.tools import ToolContext, ToolRegistry
from nerve.tools.builtin.task import open_tasks
from nerve.tools.result import Services

__all__ = ["STREAMING_CHANNELS", "Assistant"]

STREAMING_CHANNELS = frozenset({"web"})  # channels that show a reply as it is written

log = logging.getLogger("nerve.assistant")


class Assistant:
    def __init__(
        self,
        config: Config,
        *,
        ask: ChatFn,
        memory: Memory | None,
        tools: ToolRegistry,
        services: Services,
        summarizer: Summarizer | None = None,
        persona: str = prompt.PERSONA,
        ask_stream: StreamFn | None = None,
    ) -> None:
        self.config = config
        self.ask = ask
        self.memory = memory
        self.tools = tools
        self.services = services
        self.persona = persona
        settings = config.assistant
        self.summarizer = summarizer or model_summarizer(text_summarizer(ask), model=settings.model)
        self.loop = Loop(
            ask, tools, model=settings.model, max_rounds=settings.max_rounds,
            max_tokens=settings.max_tokens_per_turn, ask_stream=ask_stream,
        )  # fmt: skip
        self.conversations: dict[tuple[str, str], Conversation] = {}

    def conversation(self, msg: Inbound) -> Conversation:
        key = (msg.user_id, session_of(msg.channel, msg.chat_id))
        conv = self.conversations.get(key)
        if conv is None:
            conv = self.conversations[key] = Conversation(msg.user_id, key[1])
        return conv

    async def reply(self, msg: Inbound, on_delta: Delta | None = None) -> Outbound:
        """One turn: never raises for a model, tool or memory failure; the reply says it.
        `on_delta` gets the answer's text as the model writes it (streaming channels)."""
        conv = self.conversation(msg)
        async with conv.lock:
            try:
                result = await self._turn(conv, msg, on_delta)
            except Exception as e:
                log.exception("a turn failed in %s", conv.session)
                text = f"Sorry, something went wrong on my side ({type(e).__name__}: {e})."
                return Outbound(msg.channel, msg.chat_id, text, reply_to=msg.id)
        return Outbound(msg.channel, msg.chat_id, result.text, result.files, reply_to=msg.id)

    async def run(self, bus: Bus) -> None:
        """Serve the bus until cancelled."""
        pending: set[asyncio.Task[None]] = set()
        try:
            while True:
                msg = await bus.next_inbound()
                task = asyncio.create_task(self._serve(bus, msg), name=f"turn {msg.id}")
                pending.add(task)
                task.add_done_callback(pending.discard)
        finally:
            for task in pending:
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.gather(*pending, return_exceptions=True)

    async def _serve(self, bus: Bus, msg: Inbound) -> None:
        await bus.deliver(Outbound(msg.channel, msg.chat_id, kind="typing", reply_to=msg.id))

        async def delta(text: str) -> None:
            await bus.deliver(Outbound(msg.channel, msg.chat_id, text, kind="delta",
                                       reply_to=msg.id))  # fmt: skip

        streams = msg.channel in STREAMING_CHANNELS
        await bus.deliver(await self.reply(msg, delta if streams else None))

    # -- one turn ------------------------------------------------------------------------------

    async def _turn(
        self, conv: Conversation, msg: Inbound, on_delta: Delta | None = None
    ) -> LoopResult:
        settings = self.config.assistant
        history, block, tasks = await asyncio.gather(  # independent reads: overlap them
            load_history(self.memory, conv, limit=2 * settings.history_turns),
            self._memory_block(conv, msg),
            self._open_tasks(conv),
        )
        _, hint = self._tools_for(conv)
        system = prompt.system_prompt(
            persona=self.persona, tools=hint, memory_block=block, tasks=tasks,
            summary=history.summary,
        )  # fmt: skip
        messages = prompt.build_messages(system, history.turns, msg)
        await record_turn(self.memory, conv, "user", prompt.user_text(msg))
        ctx = ToolContext(
            user_id=msg.user_id, channel=msg.channel, chat_id=msg.chat_id,
            conversation=conv.session, services=self.services, state=conv.state,
        )  # fmt: skip
        # Offered tools are re-read every round: `mcp_server(action="use_tools")` adds some.
        result = await self.loop.run(messages, lambda: self._tools_for(conv)[0], ctx, on_delta)
        conv.tokens += result.tokens
        conv.turns += 1
        await record_turn(
            self.memory, conv, "assistant", result.text,
            tokens=result.tokens, rounds=result.rounds, stop=result.stop,
        )  # fmt: skip
        await self._record_events(conv, result)
        await compact(self.memory, conv, self.summarizer, max_turns=settings.history_turns)
        return result

    def _tools_for(self, conv: Conversation) -> tuple[list[dict[str, Any]], str]:
        """Native tools and the MCP tools this conversation enabled as schemas; every other
        MCP tool only by name, in the hint."""
        mcp_names = self._mcp_names()
        enabled = set(conv.state.get("mcp_tools") or ())
        mcp_set = set(mcp_names)
        offered = [n for n in self.tools.names() if n not in mcp_set or n in enabled]
        others = [n for n in mcp_names if n not in enabled]
        schemas = self.tools.schemas("openai", names=offered) if offered else []
        return schemas, prompt.tool_hint(offered, others)

    def _mcp_names(self) -> list[str]:
        """Every MCP tool's qualified name (McpClients: `qualified_names()`, or `tool_names()`
        as a flat list or by server)."""
        mcp = self.services.mcp
        if mcp is None:
            return []
        try:
            if hasattr(mcp, "qualified_names"):
                return list(mcp.qualified_names())
            names = mcp.tool_names()
            if isinstance(names, Mapping):
                return [n for group in names.values() for n in group]
            return list(names)
        except Exception:
            log.exception("listing MCP tools failed")
            return []

    async def _memory_block(self, conv: Conversation, msg: Inbound) -> str:
        if self.memory is None:
            return ""
        try:
            built = await build_context(
                self.memory, conv.user_id, session_id=conv.session, query=msg.text,
                max_contexts=self.config.memory.max_contexts,
            )  # fmt: skip
        except Exception:
            log.exception("building the memory context failed")
            return ""
        return built.prompt_block

    async def _open_tasks(self, conv: Conversation) -> str:
        if self.memory is None:
            return ""
        try:
            return prompt.render_tasks(await open_tasks(self.memory, conv.user_id))
        except Exception:
            log.exception("reading open tasks failed")
            return ""

    async def _record_events(self, conv: Conversation, result: LoopResult) -> None:
        """Perception events (ME-4) for the tools called and a turn that failed."""
        if self.memory is None:
            return
        events: list[tuple[str, dict[str, Any]]] = [
            ("body_tool", {"tool": c.name, "input": c.arguments[:500], "success": c.result.ok})
            for c in result.calls
        ]
        if result.stop != "answer":
            events.append(("nose_error", {"message": result.text, "error_type": result.stop}))
        for kind, payload in events:
            try:
                await self.memory.record_event(conv.user_id, conv.session, kind, payload)
            except Exception:
                log.exception("recording a %s event failed", kind)
