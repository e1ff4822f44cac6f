"""`GET /api/cluster` (bearer token): the live gateway processes and the leases each holds."""

from __future__ import annotations

from aiohttp import web

from core.edge.http.appkeys import RUNTIME, SECRET
from core.edge.http.auth import is_authorized, unauthorized
from core.engine.cluster.status import cluster_view


async def get_cluster(request: web.Request) -> web.Response:
    if not is_authorized(request, request.app[SECRET]):
        return unauthorized()
    return web.json_response(await cluster_view(request.app[RUNTIME].cluster))


def routes() -> list[web.RouteDef]:
    return [web.get("/api/cluster", get_cluster)]
