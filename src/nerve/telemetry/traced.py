"""`@traced(name, describe)`: an async function's calls as spans while tracing is on.

    @traced("memory.recall", describe.recalled)
    async def recall(self, user_id, *, query=None, ...) -> list[Recalled]: ...

With tracing off a call costs one check of `active.tracing` and nothing else. With it on, the
call runs in an INTERNAL span named `name`, formatted with the call's arguments ("execute_tool
{name}"), child of the current span; `describe(arguments, result, capture)` gives its attributes
when the call returns (`result` None when it raised: the span then has `error.type` and status
ERROR, as when the describer names an `error.type`: a failure returned as data). `capture` is
telemetry.capture_content: a describer adds text only when it is true.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Coroutine, Mapping, MutableMapping
from typing import Any, ParamSpec, TypeVar

from nerve.telemetry import active
from nerve.telemetry.describe import Describe

__all__ = ["serve_traced", "traced"]

P = ParamSpec("P")
R = TypeVar("R")


def traced(
    name: str, describe: Describe
) -> Callable[[Callable[P, Coroutine[Any, Any, R]]], Callable[P, Coroutine[Any, Any, R]]]:
    def wrap(fn: Callable[P, Coroutine[Any, Any, R]]) -> Callable[P, Coroutine[Any, Any, R]]:
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        async def call(*args: P.args, **kwargs: P.kwargs) -> R:
            tracing = active.tracing
            if tracing is None:
                return await fn(*args, **kwargs)
            try:
                arguments: Mapping[str, Any] = signature.bind(*args, **kwargs).arguments
            except TypeError:  # the call itself will say what is wrong
                arguments = {}
            title = name.format_map(_Named(arguments))
            return await tracing.run(title, describe, arguments, fn(*args, **kwargs))

        return call

    return wrap


TRACED_PREFIXES = ("/api/", "/mcp")  # beside the model endpoints (their own wrapper)
Asgi = Callable[[Any, Any, Any], Awaitable[None]]  # scope typed dict or MutableMapping


async def serve_traced(app: Asgi, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
    """`app` for one HTTP request, inside a SERVER span (the client's traceparent continued)
    when tracing is on and the path is nerve's REST API or MCP; probes, pages and assets are
    not traced."""
    tracing = active.tracing
    if tracing is None or scope["type"] != "http" or not scope["path"].startswith(TRACED_PREFIXES):
        return await app(scope, receive, send)
    await tracing.serve(app, scope, receive, send)


class _Named(dict[str, Any]):
    """The arguments for str.format_map; a name the call did not pass reads "?"."""

    def __missing__(self, key: str) -> str:
        return "?"
