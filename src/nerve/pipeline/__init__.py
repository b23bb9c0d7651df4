"""The process pipeline: language → intent → safety → execute → memory (SPEC PR-1, PR-2).

Seam: `Handlers.register(intent, handler)`; a handler is an async function of `Understood`.
To add a capability, register a handler for its intent where the server is wired.
"""

from nerve.pipeline.build import build_pipeline
from nerve.pipeline.handlers import Handler, Handlers, Understood
from nerve.pipeline.process import Pipeline, ProcessResult

__all__ = ["Handler", "Handlers", "Pipeline", "ProcessResult", "Understood", "build_pipeline"]
