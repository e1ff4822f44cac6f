"""`GET /v1/models` and `GET /v1/models/{id}`: the agents as OpenAI models (D14).

Model-discovering clients (Open WebUI, LibreChat, LobeChat) list these first. Ids contain `/`,
so both `/v1/models/crosstalk/helper` and `/v1/models/crosstalk%2Fhelper` resolve.
"""

from __future__ import annotations

from urllib.parse import unquote

from aiohttp import web

from core.edge.http.appkeys import RUNTIME, SECRET
from core.edge.http.auth import is_authorized, unauthorized
from core.edge.http.openai_target import model_ids, model_not_found, model_object


async def list_models(request: web.Request) -> web.Response:
    if not is_authorized(request, request.app[SECRET]):
        return unauthorized()
    data = [model_object(m) for m in model_ids(request.app[RUNTIME])]
    return web.json_response({"object": "list", "data": data})


async def get_model(request: web.Request) -> web.Response:
    if not is_authorized(request, request.app[SECRET]):
        return unauthorized()
    wanted = unquote(request.match_info["model"])
    if wanted not in model_ids(request.app[RUNTIME]):
        return model_not_found(wanted)
    return web.json_response(model_object(wanted))
