"""`GET /metrics` (Prometheus text format, bearer token), and optionally the same exposition
token-free on a loopback-only port (`gateway.metrics.port`) for a local scraper."""

from __future__ import annotations

from aiohttp import web

from core.edge.http.appkeys import RUNTIME, SECRET
from core.edge.http.auth import is_authorized, unauthorized
from core.engine.observability.metrics import CONTENT_TYPE, Metrics

METRICS_LOOPBACK = "127.0.0.1"
METRICS_RUNNER: web.AppKey[web.AppRunner] = web.AppKey("metrics_runner", web.AppRunner)


def _exposition(metrics: Metrics) -> web.Response:
    return web.Response(body=metrics.exposition(), headers={"Content-Type": CONTENT_TYPE})


async def metrics(request: web.Request) -> web.Response:
    if not is_authorized(request, request.app[SECRET]):
        return unauthorized()
    return _exposition(request.app[RUNTIME].metrics)


def loopback_port(app: web.Application) -> int | None:
    """The port the loopback listener is bound to (None when it is off)."""
    runner = app.get(METRICS_RUNNER)
    return None if runner is None or not runner.addresses else int(runner.addresses[0][1])


def install(app: web.Application) -> None:
    """Add the route, and the loopback listener when `gateway.metrics.port` is set."""
    app.router.add_get("/metrics", metrics)
    if app[RUNTIME].config.gateway.metrics.port is None:
        return

    async def start(app: web.Application) -> None:
        rt = app[RUNTIME]
        side = web.Application()

        async def loopback_metrics(_request: web.Request) -> web.Response:
            return _exposition(rt.metrics)

        side.router.add_get("/metrics", loopback_metrics)
        runner = web.AppRunner(side, access_log=None)
        await runner.setup()
        port = rt.config.gateway.metrics.port
        await web.TCPSite(runner, METRICS_LOOPBACK, port).start()
        app[METRICS_RUNNER] = runner

    async def stop(app: web.Application) -> None:
        runner = app.get(METRICS_RUNNER)
        if runner is not None:
            await runner.cleanup()

    app.on_startup.append(start)
    app.on_cleanup.append(stop)
