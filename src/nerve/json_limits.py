"""The limits of the JSON nerve accepts from a client: nesting depth and numbers.

A body nerve forwards must survive being written again, and must reach the upstream meaning
what the client sent. orjson reads 1,024 levels of nesting but writes only about 254, and it
reads an integer beyond 64 bits as a float, another number. So a request body is held to:

- MAX_DEPTH (128) nested arrays and objects, the body itself counting as one. A real request is
  far shallower: a tool whose JSON schema nests 25 objects (each `properties` adds a level too)
  sits about 55 levels deep. 128 is room for twice that, and what nerve adds on the way out (the
  Anthropic translation wraps at most two levels) stays well under what the encoder writes.
- integers from -2**63 to 2**64-1, which orjson keeps exact; outside that range a number is
  refused (400 `number_out_of_range`, naming where it is) rather than silently rounded.
- finite numbers: NaN and Infinity are not JSON; orjson refuses them, the stdlib reader behind
  FastAPI does not, and orjson would write them as null.

A float is an IEEE-754 double, as in the readers upstreams use: a literal with more digits than
a double holds means its nearest double, here as there.

    loads(raw)                 bytes -> value under the limits, or a RequestError (400)
    check_json(value)          the same limits on a value another reader produced
    check_depth(value, limit)  depth alone
"""

from __future__ import annotations

import json
import math
from typing import Any

import orjson

from nerve.errors import RequestError

__all__ = ["MAX_DEPTH", "MAX_INT", "MIN_INT", "check_depth", "check_json", "loads"]

MAX_DEPTH = 128
MIN_INT, MAX_INT = -(2**63), 2**64 - 1
_ROUNDED = float(2**63)  # a float this large may be an integer orjson could not keep
Path = tuple[str | int, ...]


def loads(raw: bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """Parse a request body; too deep, a number out of range or bad JSON is a RequestError."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        if str(e).startswith("depth limit exceeded"):  # orjson's own, at 1,024
            raise _too_deep(max_depth, ()) from None
        raise RequestError(
            f"the request body is not valid JSON: {e}", code="invalid_json"
        ) from None
    if _suspect(value, max_depth, numbers=True):
        check_depth(value, max_depth)
        # orjson read an integer beyond 64 bits as a float; the stdlib reader keeps it exact.
        check_json(json.loads(raw), max_depth)
    return value


def check_depth(value: Any, limit: int = MAX_DEPTH) -> None:
    """Raise a RequestError (too_deep, naming the top-level field) if `value` nests more than
    `limit` arrays and objects; a scalar is depth 0. Iterative: any depth is safe to check."""
    if _suspect(value, limit, numbers=False):
        _locate(value, limit, numbers=False)


def check_json(value: Any, max_depth: int = MAX_DEPTH) -> None:
    """The limits on a value another JSON reader produced: depth, integer range, finiteness."""
    if _suspect(value, max_depth, numbers=True):
        _locate(value, max_depth, numbers=True)


_CONTAINERS = (dict, list)


def _suspect(value: Any, limit: int, *, numbers: bool) -> bool:
    """Whether `value` may break a limit: exact for depth; for numbers never False when one is
    out of range, but True for some that are not (2**63, 1e300...). Level by level, in
    comprehensions, as it runs on every request: the exact `_locate` runs only after a True."""
    if not isinstance(value, _CONTAINERS):
        return numbers and _bad_number(value)
    level = [value]  # the containers at depth 1, 2, ...
    for _ in range(limit):
        children = [c for node in level
                    for c in (node.values() if isinstance(node, dict) else node)]  # fmt: skip
        if numbers:
            found = [c for c in children if type(c) is int or type(c) is float]
            if found and (max(found) >= _ROUNDED or min(found) <= -_ROUNDED
                          or not math.isfinite(sum(found))):  # fmt: skip
                return True
        level = [c for c in children if isinstance(c, _CONTAINERS)]
        if not level:
            return False
    return True  # containers at depth limit + 1


def _bad_number(value: Any) -> bool:
    if type(value) is int:
        return not MIN_INT <= value <= MAX_INT
    return type(value) is float and not math.isfinite(value)


def _locate(value: Any, limit: int, *, numbers: bool) -> None:
    """Raise the RequestError naming where `value` breaks a limit, if it does."""
    if numbers:
        _check_number(value, ())
    stack: list[tuple[Any, int, Path]] = [(value, 1, ())]
    while stack:
        node, depth, path = stack.pop()
        if not isinstance(node, _CONTAINERS):
            continue
        if depth > limit:
            raise _too_deep(limit, path)
        children = node.items() if isinstance(node, dict) else enumerate(node)
        for key, child in children:
            if isinstance(child, _CONTAINERS):
                stack.append((child, depth + 1, (*path, key)))
            elif numbers:
                _check_number(child, (*path, key))


def _check_number(value: Any, path: Path) -> None:
    if not _bad_number(value):
        return
    if type(value) is int:
        problem = f"an integer beyond 64 bits cannot be forwarded exactly ({MIN_INT} to {MAX_INT})"
    else:
        problem = f"{value} is not a JSON number"
    param = _name(path) if path else None
    where = "the body" if param is None else f"'{param}'"
    raise RequestError(f"{where}: {problem}", param=param, code="number_out_of_range")


def _too_deep(limit: int, path: Path) -> RequestError:
    param = _name(path[:1]) if path else None
    where = "the body" if param is None else f"'{param}'"
    return RequestError(
        f"{where} nests arrays and objects more than {limit} levels deep", param=param,
        code="too_deep",
    )  # fmt: skip


def _name(path: Path) -> str:
    """A path as the error's param: messages[0].content[1].text."""
    out = ""
    for i, part in enumerate(path):
        out += f"[{part}]" if isinstance(part, int) else f".{part}" if i else part
    return out
