"""The admin panel's config editor, reload and keys (SPEC AD-1, GW-17, GW-18).

    GET  /admin/api/config           {path, text, editable}: the file with secret values masked
    PUT  /admin/api/config           {text}: placeholders → current values, validate, apply, save
    POST /admin/api/reload           re-read the config file
    GET  /admin/api/keys             every provider's key: where it comes from, masked
    PUT  /admin/api/keys/{provider}  {value}: stored as `enc:` (needs $NERVE_MASTER_KEY), applied

Applying goes through the server's `reload(text)`: an invalid text is a 400 naming the key, the
file stays as it was and the old config keeps serving. No response, event or error message
carries a secret value: they are masked in text and scrubbed from messages.
"""

from __future__ import annotations

from typing import Any

import yaml
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from nerve.admin.http import Handler, read_json
from nerve.admin.keystore import encrypt_key, key_views, masked, set_key_text
from nerve.admin.masking import find_secrets, mask, redactor, unmask
from nerve.admin.panel import AdminPanel
from nerve.errors import ConfigError, RequestError
from nerve.secrets import MASTER_KEY_ENV

__all__ = ["config_routes"]

_MAX_TEXT = 1024 * 1024
_NO_FILE = (
    "# nerve was started without a config file, so there is nothing to edit here.\n"
    "# Start it with `nerve serve --config nerve.yaml` (see examples/nerve.yaml).\n"
)


def _secrets_in(text: str) -> list[str]:
    try:
        return [s.value for s in find_secrets(text)]
    except yaml.YAMLError:
        return []


def config_routes(panel: AdminPanel) -> list[tuple[str, Handler, list[str]]]:
    host, events = panel.host, panel.events

    def current_text() -> str:
        if host.config_path is None:
            raise RequestError(
                "nerve was started without a config file: start it with --config FILE",
                code="no_config_file",
            )
        try:
            return host.config_path.read_text(encoding="utf-8")
        except OSError as e:
            raise RequestError(f"cannot read {host.config_path}: {e.strerror}") from None

    async def apply(text: str | None, kind: str, **fields: Any) -> dict[str, Any]:
        try:
            result = await host.reload(text)
        except ConfigError as e:
            message = panel.scrub(e.message)
            if text is not None and (extra := redactor(_secrets_in(text))) is not None:
                message = extra.sub("***", message)
            await events.record(kind, ok=False, error=message, **fields)
            raise RequestError(message, code="invalid_config") from None
        panel.attach()  # a reload builds a new gateway: subscribe to it, scrub the new keys
        if kind != "RELOAD":  # a successful reload is logged by the server itself
            await events.record(kind, ok=True, changed=result.get("changed"), **fields)
        return result

    async def get_config(request: Request) -> Response:
        if host.config_path is None:
            return JSONResponse({"path": None, "text": _NO_FILE, "editable": False})
        text = current_text()
        try:
            shown = mask(text)
        except yaml.YAMLError:
            return JSONResponse({
                "path": str(host.config_path),
                "text": "# the file on disk is not valid YAML; fix it there, then reload\n",
                "editable": False,
            })  # fmt: skip
        return JSONResponse({"path": str(host.config_path), "text": shown, "editable": True})

    async def put_config(request: Request) -> Response:
        text = (await read_json(request)).get("text")
        if not isinstance(text, str) or len(text) > _MAX_TEXT:
            raise RequestError("'text': the whole config file, at most 1 MB", param="text")
        original = current_text()
        try:
            new = unmask(text, original)
        except yaml.YAMLError:  # the file on disk is broken: nothing to take values from
            new = unmask(text, "")
        return JSONResponse(await apply(new, "CONFIG_SAVE", path=str(host.config_path)))

    async def reload(request: Request) -> Response:
        return JSONResponse(await apply(None, "RELOAD"))

    async def keys(request: Request) -> Response:
        text = current_text() if host.config_path is not None else None
        return JSONResponse({
            "keys": key_views(host.config, text),
            "master_key": bool(panel.environ.get(MASTER_KEY_ENV)),
            "editable": host.config_path is not None,
        })  # fmt: skip

    async def set_key(request: Request) -> Response:
        provider = request.path_params["provider"]
        value = (await read_json(request)).get("value")
        encrypted = encrypt_key(value, panel.environ)  # refuses without the master key
        new = set_key_text(current_text(), provider, encrypted)
        result = await apply(new, "KEY_SET", provider=provider)
        key = next((p.api_key for p in host.config.providers if p.name == provider), None)
        return JSONResponse({**result, "provider": provider, "masked": masked(key)})

    return [
        ("/admin/api/config", get_config, ["GET"]),
        ("/admin/api/config", put_config, ["PUT"]),
        ("/admin/api/reload", reload, ["POST"]),
        ("/admin/api/keys", keys, ["GET"]),
        ("/admin/api/keys/{provider}", set_key, ["PUT"]),
    ]
