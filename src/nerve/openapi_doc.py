"""The OpenAPI document (/openapi.json, /docs) says what the app answers, so generated clients work.

FastAPI documents a 422 for every operation that takes input; nerve answers a malformed request
400, naming the field (server.py's handler), in the OpenAI error shape `ErrorBody`.
`fix_openapi(app)` makes the document say so, and adds what the boundary in front of every route
may answer (nerve.access): 401 without a valid key, 403 what the key may not do (or a page of
another origin), 421 a Host that is not this server's; and for a method that sends a body, 413
over limits.max_body_bytes and 415 not JSON. What one route answers besides (404 for a missing
record, 502 when the model upstream failed) is declared on its router or route with
`responses=errors(404)`.

`docs_routes()` serves the page at /docs with Swagger UI's own files from the installed
`fastapi-offline` (under /docs/static/; its Swagger UI reads OpenAPI 3.1, which FastAPI writes),
so the docs work with no network; `/favicon.ico` is
nerve's icon, for every page the server shows.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from pydantic import BaseModel, Field
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

__all__ = ["DOCS_STATIC", "ErrorBody", "docs_routes", "errors", "fix_openapi"]

DOCS_STATIC = "/docs/static"
FAVICON = Path(__file__).parent / "static" / "favicon.png"
SWAGGER_UI = files("fastapi_offline") / "static"  # swagger-ui-bundle.js, swagger-ui.css

_WHY = {
    400: "Invalid request: `error.param` names the field and `error.message` says why.",
    401: "No valid API key (this server has keys): send `Authorization: Bearer <key>`.",
    403: "The key may not do this (its routes, models or users), or a page of another origin.",
    404: "Not found (or, for memory routes, memory is disabled: code `memory_disabled`).",
    413: "The body is larger than limits.max_body_bytes.",
    415: "The body is not JSON.",
    421: "The Host header does not name this server.",
    429: "A rate limit or budget of the key: `Retry-After` says when to try again.",
    502: "The model upstream failed (every candidate of the route).",
    503: "Not available here: a voice engine not installed, or shared state (Redis) down.",
    504: "The model upstream did not answer in time.",
}
_EVERY = (401, 403, 421)  # the boundary, for every operation
_WITH_BODY = (413, 415)  # ... and for the methods that send one
_SAFE = frozenset({"get", "head", "options"})


class ErrorDetail(BaseModel):
    message: str
    type: str = Field(description="invalid_request_error, not_found_error, upstream_error...")
    code: str | None = Field(description="a machine-readable reason, when there is one")
    param: str | None = Field(None, description="the field at fault (400s)")


class ErrorBody(BaseModel):
    """Every error nerve answers, OpenAI-shaped."""

    error: ErrorDetail


def errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """`responses=` for a router or route: these answers, with the error body."""
    return {code: {"model": ErrorBody, "description": _WHY[code]} for code in codes}


def fix_openapi(app: FastAPI) -> None:
    """Make `app.openapi()` (built once, on first use) say what the app answers, as above."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = fixed(build())
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]  # FastAPI's documented way to extend it


def fixed(document: dict[str, Any]) -> dict[str, Any]:
    """`document` with the 422s replaced by 400s and the boundary's answers added (in place)."""
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    for model in (ErrorDetail, ErrorBody):
        schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
        schema.pop("$defs", None)
        schemas.setdefault(model.__name__, schema)
    error = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
    for operations in document.get("paths", {}).values():
        for method, operation in operations.items():
            responses = operation.setdefault("responses", {})
            codes = [*_EVERY, *(() if method in _SAFE else _WITH_BODY)]
            if responses.pop("422", None) is not None or "requestBody" in operation:
                codes.append(400)  # a route reading its body itself refuses a bad one too
            for code in codes:
                responses.setdefault(str(code), {"description": _WHY[code], "content": error})
            operation["responses"] = dict(sorted(responses.items()))
    for unused in ("HTTPValidationError", "ValidationError"):
        schemas.pop(unused, None)
    return document


def docs_routes(title: str, openapi_url: str = "/openapi.json") -> list[BaseRoute]:
    """/docs (Swagger UI from the package, not a CDN), its OAuth2 redirect, and /favicon.ico."""
    redirect = "/docs/oauth2-redirect"

    async def page(request: Request) -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=openapi_url, title=f"{title} — API", oauth2_redirect_url=redirect,
            swagger_js_url=f"{DOCS_STATIC}/swagger-ui-bundle.js",
            swagger_css_url=f"{DOCS_STATIC}/swagger-ui.css", swagger_favicon_url="/favicon.ico",
        )  # fmt: skip

    async def oauth2(request: Request) -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    async def favicon(request: Request) -> FileResponse:
        return FileResponse(
            FAVICON, media_type="image/png", headers={"cache-control": "max-age=86400"}
        )

    return [
        Route("/docs", page, methods=["GET"], include_in_schema=False),
        Route(redirect, oauth2, methods=["GET"], include_in_schema=False),
        Mount(DOCS_STATIC, app=StaticFiles(directory=str(SWAGGER_UI))),
        Route("/favicon.ico", favicon, methods=["GET"], include_in_schema=False),
    ]
