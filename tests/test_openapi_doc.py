"""The OpenAPI document says what nerve answers (issue 13, openapi_doc.py): a malformed request is
a documented 400 in the error shape, never FastAPI's 422; the boundary's answers are there; and
what a route declares (its 404) is kept."""

from __future__ import annotations

from typing import Any

import httpx
from fastapi import FastAPI
from pydantic import BaseModel

from nerve.openapi_doc import ErrorBody, errors, fix_openapi
from nerve.server import build_app
from tests.conftest import RunningServer, make_config
from tests.fakes.upstream import FakeUpstream

ERROR = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}


class Thing(BaseModel):
    name: str


def small_app() -> FastAPI:
    app = FastAPI()

    @app.post("/things")
    async def make(thing: Thing) -> dict[str, Any]:
        return {}

    @app.get("/things/{name}", responses=errors(404))
    async def get(name: str) -> dict[str, Any]:
        return {}

    @app.get("/health")
    async def health() -> dict[str, Any]:
        return {}

    fix_openapi(app)
    return app


def test_validation_errors_are_documented_as_400s_in_the_error_shape() -> None:
    document = small_app().openapi()
    post = document["paths"]["/things"]["post"]["responses"]
    assert "422" not in post and post["400"]["content"] == ERROR
    assert {"200", "400", "401", "403", "413", "415", "421"} == set(post)
    schemas = document["components"]["schemas"]
    assert "HTTPValidationError" not in schemas and "ValidationError" not in schemas
    assert schemas["ErrorBody"]["properties"]["error"] == {
        "$ref": "#/components/schemas/ErrorDetail"
    }


def test_a_routes_own_answers_are_kept_and_a_get_sends_no_body_to_refuse() -> None:
    paths = small_app().openapi()["paths"]
    get = paths["/things/{name}"]["get"]["responses"]
    assert {"200", "400", "401", "403", "404", "421"} == set(get)
    assert (
        get["404"]["content"]["application/json"]["schema"] == ERROR["application/json"]["schema"]
    )
    assert set(paths["/health"]["get"]["responses"]) == {"200", "401", "403", "421"}


def test_the_document_is_built_once() -> None:
    app = small_app()
    assert app.openapi() is app.openapi()


def test_the_error_shape_is_what_the_server_sends(serve: Any, upstream: FakeUpstream) -> None:
    server: RunningServer = serve(make_config({"primary": upstream}))
    refused = httpx.post(f"{server.url}/api/memory/recall", json={"user_id": ""}, timeout=10)
    assert refused.status_code == 400
    ErrorBody.model_validate(refused.json())


def test_the_apps_document_has_no_422_and_a_400_wherever_input_is_taken(
    upstream: FakeUpstream,
) -> None:
    """Needs server.py to call fix_openapi(self.api)."""
    document = build_app(make_config({"primary": upstream})).api.openapi()
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            assert "422" not in operation["responses"], (method, path)
            if operation.get("parameters") or operation.get("requestBody"):
                assert "400" in operation["responses"], (method, path)
