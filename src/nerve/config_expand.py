"""A config file's parsed YAML before validation: ${VAR} values and preset rows filled in.

Interpolation runs after YAML parsing, so an environment value never changes the file's structure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from nerve.errors import ConfigError
from nerve.presets import PRESETS

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def interpolate(
    value: Any, environ: Mapping[str, str], unset: list[tuple[str, str]] | None = None,
    path: str = "",
) -> Any:  # fmt: skip
    """Replace ${VAR} and ${VAR:-default} in every string of a parsed YAML tree; `unset`
    collects (key path, VAR) for each variable that was unset and had no default."""
    if isinstance(value, str):

        def sub(m: re.Match[str]) -> str:
            found = environ.get(m.group(1))
            if not found and m.group(2) is None and unset is not None:
                unset.append((path, m.group(1)))
            return found or (m.group(2) or "")

        return _VAR.sub(sub, value)
    if isinstance(value, list):
        return [interpolate(v, environ, unset, f"{path}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {
            k: interpolate(v, environ, unset, f"{path}.{k}" if path else str(k))
            for k, v in value.items()
        }
    return value


def expand_presets(data: dict[str, Any]) -> dict[str, Any]:
    """Fill provider rows that name a preset with its protocol, URL and ${KEY_ENV} key."""
    providers = data.get("providers")
    if not isinstance(providers, list):
        return data
    rows: list[Any] = []
    for i, row in enumerate(providers):
        if isinstance(row, dict) and row.get("preset"):
            preset = PRESETS.get(row["preset"])
            if preset is None:
                known = ", ".join(PRESETS)
                raise ConfigError(
                    f"unknown preset {row['preset']!r}; known: {known}",
                    path=f"providers[{i}].preset",
                )
            defaults: dict[str, Any] = {"protocol": preset.protocol, "base_url": preset.base_url}
            if preset.responses:
                defaults["responses"] = True
            if preset.key_env:
                defaults["api_key"] = f"${{{preset.key_env}}}"
            row = {**defaults, **row}
        rows.append(row)
    return {**data, "providers": rows}
