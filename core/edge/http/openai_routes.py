"""Registers the OpenAI-compatible routes besides chat completions, and their error shape."""

from __future__ import annotations

from aiohttp import web

from core.edge.http import openai_models, openai_responses
from core.edge.http.openai_errors import openai_error_middleware


def register(app: web.Application) -> None:
    app.middlewares.append(openai_error_middleware)
    app.router.add_get("/v1/models", openai_models.list_models)
    app.router.add_get("/v1/models/{model:.+}", openai_models.get_model)
    app.router.add_post("/v1/responses", openai_responses.create_response)
