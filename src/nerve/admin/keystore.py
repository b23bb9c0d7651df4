"""Provider keys for the admin panel: masked views, and setting one as an `enc:` value.

`key_views` says for each provider where its key comes from (an `${ENV}` reference, an `enc:`
value, a literal in the file, a preset's environment variable, or nothing) and shows at most its
last 4 characters. `set_key_text` writes a new `enc:` value into the config text at that
provider's `api_key`, editing only that value (or adding the line), so comments survive. The
plaintext never reaches the disk: encryption needs `$NERVE_MASTER_KEY` and is refused without it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from nerve.config import Config
from nerve.errors import NotFound, RequestError
from nerve.presets import PRESETS
from nerve.secrets import MASTER_KEY_ENV, PREFIX, encrypt

__all__ = ["encrypt_key", "key_views", "masked", "set_key_text"]

_REF = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}$")


def masked(value: str | None) -> str:
    if not value:
        return "not set"
    return f"…{value[-4:]}" if len(value) >= 12 else "set (too short to show any of it)"


def _raw_rows(text: str | None) -> dict[str, dict[str, Any]]:
    try:
        data = yaml.safe_load(text or "") or {}
    except yaml.YAMLError:
        return {}
    rows = data.get("providers") if isinstance(data, dict) else None
    return {str(r.get("name")): r for r in rows or [] if isinstance(r, dict)}


def key_views(config: Config, text: str | None) -> list[dict[str, Any]]:
    rows = _raw_rows(text)
    views = []
    for provider in config.providers:
        raw = rows.get(provider.name, {}).get("api_key")
        preset = PRESETS.get(provider.preset or "")
        env = None
        if isinstance(raw, str) and raw.startswith(PREFIX):
            source = "encrypted"
        elif isinstance(raw, str) and (ref := _REF.match(raw.strip())):
            source, env = "env", ref.group(1)
        elif isinstance(raw, str):
            source = "literal"
        elif raw is None and preset is not None and preset.key_env:
            source, env = "env", preset.key_env
        else:
            source = "none"
        views.append({
            "provider": provider.name,
            "protocol": provider.protocol,
            "base_url": provider.base_url,
            "source": source,
            "env": env,
            "encrypted": source == "encrypted",
            "set": bool(provider.api_key),
            "masked": masked(provider.api_key),
        })  # fmt: skip
    return views


def encrypt_key(value: Any, environ: Mapping[str, str]) -> str:
    if not isinstance(value, str) or not value.strip():
        raise RequestError("'value': the new key, a non-empty string", param="value")
    if len(value) > 4096 or any(c in value for c in "\r\n\0"):
        raise RequestError("'value': one line, at most 4096 characters", param="value")
    if not environ.get(MASTER_KEY_ENV):
        raise RequestError(
            f"set ${MASTER_KEY_ENV} in nerve's environment (`nerve keys generate` makes one) "
            "and restart it: keys are stored only encrypted, never in plaintext",
            code="master_key_required",
        )
    return encrypt(value.strip(), environ)


def set_key_text(text: str, provider: str, value: str) -> str:
    """The config text with `providers[<provider>].api_key` set to `value` (a YAML-safe token)."""
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    row = None
    if isinstance(root, MappingNode):
        for key, node in root.value:
            if key.value == "providers" and isinstance(node, SequenceNode):
                row = next((item for item in node.value if _name(item) == provider), None)
    if not isinstance(row, MappingNode):
        raise NotFound(
            f"provider {provider!r} is not listed under providers in the config file; "
            "add it there first",
            code="provider_not_in_file",
        )
    quoted = f'"{value}"'
    current = next((v for k, v in row.value if k.value == "api_key"), None)
    if current is not None:
        new = text[: current.start_mark.index] + quoted + _tail(text, current)
    elif row.flow_style:
        close = row.end_mark.index - 1
        if text[close] != "}":
            raise RequestError(f"cannot edit provider {provider!r} in place", code="uneditable")
        new = f"{text[:close].rstrip()}, api_key: {quoted}{text[close:]}"
    else:
        first_key, first_value = row.value[0]
        eol = text.find("\n", first_value.end_mark.index)
        eol = len(text) if eol < 0 else eol
        line = f"\n{' ' * first_key.start_mark.column}api_key: {quoted}"
        new = text[:eol] + line + text[eol:]
    check = _raw_rows(new).get(provider, {})
    if check.get("api_key") != value:  # never save a file that does not say what we meant
        raise RequestError(f"cannot edit provider {provider!r} in place", code="uneditable")
    return new


def _name(node: Any) -> str | None:
    if isinstance(node, MappingNode):
        for key, value in node.value:
            if key.value == "name" and isinstance(value, ScalarNode):
                return str(value.value)
    return None


def _tail(text: str, node: Any) -> str:
    span = text[node.start_mark.index : node.end_mark.index]
    return span[len(span.rstrip("\n")) :] + text[node.end_mark.index :]
