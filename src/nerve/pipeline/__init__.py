"""The process pipeline: language → intent → safety → execute → memory (SPEC PR-1, PR-2).

Seam: `Pipeline.handle(intent, handler)`; a handler is an async function of `Understood`, run
as a hidden tool of the pipeline's `ToolRegistry` (the server's one registry). To add a
capability, register a handler for its intent where the server is wired.
"""

from nerve.pipeline.build import build_pipeline
from nerve.pipeline.handlers import Handler, Understood, intent_tool
from nerve.pipeline.process import Pipeline, ProcessResult

__all__ = ["Handler", "Pipeline", "ProcessResult", "Understood", "build_pipeline", "intent_tool"]
