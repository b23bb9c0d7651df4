"""What is wrong with a config, all of it at once, each problem at its key path.

pydantic reports every error of a document; `problems` turns them into (key path, message)
pairs a person can act on: an unknown key says which known key it most resembles (`bse_url:
unknown key; did you mean base_url?`), and the "field required" that a misspelt key causes is
dropped, since the misspelling already says it. Cross-field errors (`Located`) keep their own path.
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel
from pydantic_core import ErrorDetails

from nerve.config_routes import Located

__all__ = ["key_path", "problems", "summary"]


def key_path(loc: Sequence[int | str]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not part.startswith(("function-", "model-")):
            out += f".{part}" if out else part
    return out


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The model a field holds, through list[...], dict[str, ...] and `| None`."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is not None:
        for arg in typing.get_args(annotation):
            found = _model_of(arg)
            if found is not None:
                return found
    return None


def _fields_at(model: type[BaseModel], loc: Sequence[int | str]) -> list[str]:
    """The keys the object at `loc` may have (none when the path leaves the models)."""
    current: type[BaseModel] | None = model
    for part in loc:
        if current is None:
            return []
        if isinstance(part, int) or part not in current.model_fields:
            continue  # a list index, a dict key, or a union's tag
        current = _model_of(current.model_fields[part].annotation)
    return list(current.model_fields) if current is not None else []


def problems(errors: Sequence[ErrorDetails], model: type[BaseModel]) -> list[tuple[str, str]]:
    """(key path, message) for each error, misspellings explained."""
    found: list[tuple[str, str]] = []
    meant: set[str] = set()  # key paths a did-you-mean already names
    for err in errors:
        located = (err.get("ctx") or {}).get("error")
        if isinstance(located, Located):
            found.append((located.path, str(located)))
            continue
        loc = err["loc"]
        path = key_path(loc) or "<root>"
        if err["type"] == "extra_forbidden" and loc and isinstance(loc[-1], str):
            fields = _fields_at(model, loc[:-1])
            guess = difflib.get_close_matches(loc[-1], fields, n=1, cutoff=0.6)
            if guess:
                meant.add(key_path([*loc[:-1], guess[0]]))
                found.append((path, f"unknown key; did you mean {guess[0]}?"))
            else:
                known = ", ".join(fields[:12]) + (", ..." if len(fields) > 12 else "")
                found.append(
                    (path, f"unknown key (known here: {known})" if fields else "unknown key")
                )
            continue
        found.append((path, err["msg"].removeprefix("Value error, ")))
    return [(p, m) for p, m in found if not (m == "Field required" and p in meant)]


def summary(found: Sequence[tuple[str, str]]) -> str:
    """One problem as `path: message`; several as a count and one line each."""
    if len(found) == 1:
        return f"{found[0][0]}: {found[0][1]}"
    lines = "\n".join(f"  {path}: {message}" for path, message in found)
    return f"{len(found)} problems:\n{lines}"
