"""The server's one tool registry runs the pipeline's intent handlers, hidden from every model."""

from __future__ import annotations

from pathlib import Path

from nerve.config import parse_config_text
from nerve.server import build_app
from tests.fakes.upstream import FakeUpstream, Reply


def config_text(upstream: FakeUpstream, answer_model: str | None, where: Path) -> str:
    model = "null" if answer_model is None else answer_model
    return f"""
providers:
  - {{name: primary, protocol: openai, base_url: "{upstream.openai_base_url}", api_key: sk-x}}
routes:
  - {{name: default, model: {{provider: primary, model: m1}}}}
pipeline: {{answer_model: {model}}}
storage: {{url: "sqlite:///{where}/nerve.db"}}
probes: {{interval_seconds: 0}}
server: {{config_poll_seconds: 0}}
"""


async def test_answers_run_through_the_one_registry_and_a_reload_removes_them(
    upstream: FakeUpstream, tmp_path: Path
) -> None:
    app = build_app(parse_config_text(config_text(upstream, "default", tmp_path)))
    async with app.api.router.lifespan_context(app.api):
        assert app.pipeline.tools is app.tools
        assert "intent_explain" in app.tools and "shell" in app.tools.names()
        assert not any(n.startswith("intent_") for n in app.tools.names())  # no model sees them
        upstream.script(Reply(text="DNS maps names to addresses"))
        result = await app.pipeline.process("explain how DNS works", "asha")
        assert result.execution == {
            "status": "ok",
            "executed": True,
            "attempts": 1,
            "result": {"answer": "DNS maps names to addresses"},
        }

        await app.reload(config_text(upstream, None, tmp_path))
        assert "intent_explain" not in app.tools and app.pipeline.tools is app.tools
        result = await app.pipeline.process("explain how DNS works", "asha")
        assert result.execution is not None and result.execution["status"] == "no_handler"
