"""`GET /api/overview`, `GET /api/config`, `GET /api/hooks`: what the console's Overview,
Config and Hooks pages show, as API routes the CLI and scripts can read too (D181).

The overview puts together figures that other routes also give, computed by the same
functions: each channel account as `/healthz` shows it (`channel_entries`), the live processes
as `/api/cluster` (`cluster_view`), and what only the database knows across processes: turns
queued and running, and failed deliveries in the last 24 hours. The config is
`crosstalk config check`'s (`dump_masked`: every secret `***`), hooks its `hooks.mappings`.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from core.config import dump_masked
from core.edge.http.appkeys import RUNTIME, SECRET
from core.edge.http.auth import is_authorized, unauthorized
from core.edge.http.channel_stats import channel_entries
from core.engine.cluster.status import cluster_view
from core.store import now_ms

DAY_MS = 86_400_000


async def get_overview(request: web.Request) -> web.Response:
    if not is_authorized(request, request.app[SECRET]):
        return unauthorized()
    rt = request.app[RUNTIME]
    since = now_ms() - DAY_MS
    cluster = await cluster_view(rt.cluster)
    return web.json_response(
        {
            "ok": True,
            "channels": await channel_entries(rt),
            "queue": await rt.store.run_counts(),
            "failedDeliveries24h": await rt.store.failed_since(since),
            "failedSince": since,
            "processes": cluster["processes"],
            "model": rt.models.default_ref(rt.config.default_agent_id()),
            "agents": rt.config.agent_ids(),
        }
    )


async def get_config(request: web.Request) -> web.Response:
    if not is_authorized(request, request.app[SECRET]):
        return unauthorized()
    return web.json_response({"ok": True, "config": dump_masked(request.app[RUNTIME].config)})


def hook_rows(masked: dict[str, Any]) -> list[dict[str, Any]]:
    """`hooks.mappings` of the masked config (the token is `***`, or null when unset)."""
    mappings: list[dict[str, Any]] = masked.get("hooks", {}).get("mappings", [])
    return [{**m, "url": f"/hooks/{m.get('path', '')}"} for m in mappings]


async def get_hooks(request: web.Request) -> web.Response:
    if not is_authorized(request, request.app[SECRET]):
        return unauthorized()
    return web.json_response(
        {"ok": True, "hooks": hook_rows(dump_masked(request.app[RUNTIME].config))}
    )


def routes() -> list[web.RouteDef]:
    return [
        web.get("/api/overview", get_overview),
        web.get("/api/config", get_config),
        web.get("/api/hooks", get_hooks),
    ]
