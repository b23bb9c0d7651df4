"""The rules the strings memory keeps follow, in one place: REST bodies and MCP tool arguments
are held to them, `Memory` to what no store can keep, and the OpenAPI and MCP schemas say so.

    text    no C0 control character but tab, newline and carriage return, and no lone surrogate:
            PostgreSQL text cannot hold NUL at all, and the others are never meant from outside
            (a terminal escape kept in a memory waits for the prompt it will be pasted into)
    name    text that is not blank: a user id, an intent, a session, an entity...
    data    a JSON object whose every key and string, at any depth, is text

Each rule exists twice: a check raising `RequestError` naming the field (`check_text`,
`check_name`, `check_data`), and pydantic metadata running the same check, whose JSON schema
states it as a `pattern`: `Annotated[str, Field(max_length=100), NAME]`, and the types `Text`,
`UserId` and `Data`. The patterns are what the checks match, with Python's `re`; the one thing
they leave out is the lone surrogate, which no UTF-8 JSON can carry (a `\\ud800` escape can).

`Memory` (the CLI's path, and the assistant's) checks with `controls=False`: only NUL and lone
surrogates, which no store keeps. Its own writers carry model and tool output (a turn, a
command's output in an event), where an ANSI escape is ordinary and must not fail the turn.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

import orjson
from pydantic import (
    BeforeValidator,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    WrapValidator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import PydanticCustomError, core_schema
from typing_extensions import TypeAliasType

from nerve.errors import RequestError

__all__ = [
    "MAX_USER_ID",
    "NAME",
    "NAME_PATTERN",
    "TEXT",
    "TEXT_PATTERN",
    "TRIMMED_PATTERN",
    "WHOLE",
    "Data",
    "FactPart",
    "FactValue",
    "Intent",
    "JsonValue",
    "Language",
    "Query",
    "SessionId",
    "Text",
    "UserId",
    "check_data",
    "check_name",
    "check_text",
    "data_problem",
    "text_problem",
]

MAX_USER_ID = 200
_CONTROL = r"\u0000-\u0008\u000b\u000c\u000e-\u001f"
# What `str.strip()` removes, less the control characters refused anyway (tests check it).
_SPACE = r"\t\n\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
TEXT_PATTERN = rf"^[^{_CONTROL}]*$"
NAME_PATTERN = rf"^[{_SPACE}]*[^{_SPACE}{_CONTROL}][^{_CONTROL}]*$"  # linear: no backtracking
# A name without surrounding whitespace (a capability): what `value == value.strip()` keeps.
TRIMMED_PATTERN = rf"^[^{_SPACE}{_CONTROL}](?:[^{_CONTROL}]*[^{_SPACE}{_CONTROL}])?$"
_TEXT, _NAME = re.compile(TEXT_PATTERN), re.compile(NAME_PATTERN)
_BAD = re.compile(rf"[{_CONTROL}\ud800-\udfff]")
_UNSTORABLE = re.compile(r"[\u0000\ud800-\udfff]")
# In orjson's output a control character is an escape (\u0000, or \b and \f), never raw; an
# escaped backslash before it ("\\u0000") is text, not one.
_ESCAPED_CONTROL = re.compile(rb"(?<!\\)(?:\\\\)*\\(?:u00(?:0[0-8bcef]|1[0-9a-f])|[bf])")
_ESCAPED_NUL = re.compile(rb"(?<!\\)(?:\\\\)*\\u0000")
_ALLOWED = "tab, newline and carriage return are allowed"


def text_problem(value: str, *, blank: bool = True, controls: bool = True) -> str | None:
    """Why `value` may not be kept (it holds a control character, or is blank when `blank` is
    false), or None. `controls=False`: only NUL and lone surrogates, which no store keeps."""
    bad = _BAD if controls else _UNSTORABLE
    if controls:
        ok = (_TEXT if blank else _NAME).fullmatch(value) and not _has_surrogate(value)
    else:
        ok = bad.search(value) is None and (blank or bool(value.strip()))
    if ok:
        return None
    found = bad.search(value)
    if found is None:
        return "must not be blank"
    char, at = ord(found.group()), found.start()
    if 0xD800 <= char <= 0xDFFF:
        return f"holds a lone surrogate (U+{char:04X}) at index {at}: not valid text"
    if not controls:
        return f"must not hold a NUL character (U+0000 at index {at}): no store can keep it"
    return f"must not hold control characters (U+{char:04X} at index {at}); {_ALLOWED}"


def _has_surrogate(value: str) -> bool:
    return not value.isascii() and _BAD.search(value) is not None


def data_problem(
    data: Any, where: str = "data", *, encoded: bytes | None = None, controls: bool = True
) -> str | None:
    """Why a JSON value may not be kept: the first key or string that is not text, by its path
    (data.items.0.name), or None. Fast for clean data: one scan of its JSON encoding (give
    `encoded`, orjson's, when it is at hand)."""
    if encoded is None:
        try:
            encoded = orjson.dumps(data)
        except TypeError:  # a lone surrogate (orjson refuses it), or something not JSON at all
            return _walk(data, where, controls)
    escaped = _ESCAPED_CONTROL if controls else _ESCAPED_NUL
    return _walk(data, where, controls) if escaped.search(encoded) else None


def _walk(value: Any, where: str, controls: bool) -> str | None:
    if isinstance(value, str):
        why = text_problem(value, controls=controls)
        return f"{where} {why}" if why else None
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and (why := text_problem(key, controls=controls)):
                return f"a key of {where} ({key[:40]!r}) {why}"
            if found := _walk(item, f"{where}.{key}", controls):
                return found
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            if found := _walk(item, f"{where}.{i}", controls):
                return found
    return None


def check_text(value: str | None, param: str, *, controls: bool = True) -> str | None:
    """`value` when it is text (or None); else a RequestError naming `param`."""
    if value is not None and (why := text_problem(value, controls=controls)):
        raise RequestError(f"'{param}' {why}", param=param)
    return value


def check_name(value: str, param: str, *, controls: bool = True) -> str:
    """`value` when it is text and not blank; else a RequestError naming `param`."""
    if why := text_problem(value, blank=False, controls=controls):
        raise RequestError(f"'{param}' {why}", param=param)
    return value


def check_data(
    data: Any, param: str = "data", *, encoded: bytes | None = None, controls: bool = True
) -> Any:
    if why := data_problem(data, param, encoded=encoded, controls=controls):
        raise RequestError(why, param=param)
    return data


# -- the same rules as pydantic types ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Rule:
    """`Annotated[str, Field(max_length=...), TEXT]`: the check runs first, the lengths after
    (give them before the rule: given after, pydantic words their errors oddly)."""

    blank: bool

    def check(self, value: Any) -> Any:
        if isinstance(value, str) and (why := text_problem(value, blank=self.blank)):
            raise PydanticCustomError("text", why)
        return value

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_before_validator_function(self.check, handler(source))

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        found = handler(schema)
        found["pattern"] = TEXT_PATTERN if self.blank else NAME_PATTERN
        return found


TEXT = _Rule(blank=True)
NAME = _Rule(blank=False)
Text = Annotated[str, TEXT]
# The fields of memory's calls, as REST and MCP take them (`Memory` checks the same).
UserId = Annotated[
    str, Field(min_length=1, max_length=MAX_USER_ID, description="Whose memory."), NAME
]
Intent = Annotated[str, Field(min_length=1, max_length=100), NAME]
SessionId = Annotated[str, Field(max_length=200), TEXT]
Language = Annotated[str, Field(max_length=16), TEXT]
Query = Annotated[str, Field(max_length=10_000, description="Text to search for."), TEXT]
FactPart = Annotated[str, Field(min_length=1, max_length=500), NAME]  # an entity, an attribute


def _fact_value(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    # One error at the field, not one per member of the union (value.function-before[...]).
    if not isinstance(value, str | int | float):
        raise PydanticCustomError("fact_value", "must be a string, number or boolean")
    return handler(TEXT.check(value))


FactValue = Annotated[Text | int | float | bool, WrapValidator(_fact_value)]


def _whole(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


# JSON Schema's integer, in a strict model: 3.0 is one; true and "3" are not.
WHOLE = BeforeValidator(_whole)


def _data(value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo) -> Any:
    if not isinstance(value, dict):
        return handler(value)  # pydantic's own "should be a valid dictionary"
    if why := data_problem(value, info.field_name or "data"):
        raise PydanticCustomError("text", why)
    return value  # the recursive type is for the schema: one scan is much faster than it


# `Data`'s schema: JSON whose keys and strings, at any depth, match TEXT_PATTERN.
_Str = Annotated[str, Field(json_schema_extra={"pattern": TEXT_PATTERN})]
_NO_OTHER_KEYS = Field(json_schema_extra={"additionalProperties": False})
if TYPE_CHECKING:  # mypy cannot follow a recursive TypeAliasType; pydantic needs one
    JsonValue = Any
else:
    JsonValue = TypeAliasType(
        "JsonValue",
        _Str | bool | int | float | list["JsonValue"]
        | Annotated[dict[_Str, "JsonValue"], _NO_OTHER_KEYS] | None,
    )  # fmt: skip
Data = Annotated[dict[_Str, JsonValue], _NO_OTHER_KEYS, WrapValidator(_data)]
