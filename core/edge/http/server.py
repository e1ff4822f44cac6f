"""The gateway process: one aiohttp server for the web chat, the HTTP API and webhooks."""

from __future__ import annotations

import asyncio
import gc
import logging
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web
from aiohttp.typedefs import Handler

from core.config import CrosstalkConfig
from core.config.state_dir import TOKEN_FILE
from core.edge.http import (
    http_api,
    http_approvals,
    http_cluster,
    http_cron,
    http_hooks,
    http_identities,
    http_metrics,
    http_openai,
    http_overview,
    http_pairing,
    http_sessions,
    http_tools,
    http_usage,
    openai_routes,
)
from core.edge.http import http_mcp as mcp_http
from core.edge.http.appkeys import RUNTIME, SECRET
from core.edge.http.auth import is_authorized, load_gateway_secret
from core.edge.http.channel_stats import channel_entries
from core.edge.http.connections import GatewayRunner
from core.edge.http.console import install as install_console
from core.edge.http.edge import install_edge
from core.edge.http.openapi import openapi_spec
from core.engine.channels.build import ChannelEnv, build_adapters
from core.engine.cluster.status import held_leases
from core.model.channel import ChannelAdapter, HttpMounted
from core.runtime import Runtime

log = logging.getLogger(__name__)


PUBLIC_CHANNEL_FIELDS = ("channel", "accountId", "state", "refused", "duplicatesDropped")
"""What `/healthz` shows of a channel without a token (D81)."""


async def healthz(request: web.Request) -> web.Response:
    """Health for load balancers (no token: status and channel states only, D81) and, with the
    token, for the owner and `crosstalk channels status` (model, process, every figure)."""
    rt = request.app[RUNTIME]
    channels = await channel_entries(rt)
    ok = rt.started and all(c["state"] != "failed" for c in channels)
    status = 200 if ok else 503
    if not is_authorized(request, request.app[SECRET]):
        public = [{k: c[k] for k in PUBLIC_CHANNEL_FIELDS if k in c} for c in channels]
        return web.json_response({"ok": ok, "channels": public}, status=status)
    process = {"id": rt.cluster.id, "leases": await held_leases(rt.cluster)}  # D27
    return web.json_response(
        {
            "ok": ok,
            "channels": channels,
            "model": rt.models.default_ref(rt.config.default_agent_id()),
            "process": process,
        },
        status=status,
    )


async def openapi(request: web.Request) -> web.Response:
    return web.json_response(openapi_spec(request.app[RUNTIME].config))


TALK_PATHS = frozenset({"/", "/ws", "/v1/chat/completions"})
"""Requests that come just before a turn: the web chat page and socket, the OpenAI API (D54)."""


@web.middleware
async def warm_on_talk(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Start the model-stack import when a chat opens, so the first message does not wait."""
    if request.path in TALK_PATHS:
        request.config_dict[RUNTIME].warm.soon()
    return await handler(request)


def build_app(rt: Runtime, secret: str, adapters: list[ChannelAdapter]) -> web.Application:
    gw = rt.config.gateway
    app = web.Application(client_max_size=gw.max_body_bytes)
    install_edge(app, gw.max_body_bytes, gw.body_timeout_seconds)
    app.middlewares.append(warm_on_talk)
    app[RUNTIME] = rt
    app[SECRET] = secret
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/openapi.json", openapi)
    app.router.add_route("*", "/tools/invoke", http_tools.tools_invoke)
    app.router.add_post("/v1/chat/completions", http_openai.chat_completions)
    app.add_routes(http_api.routes())
    app.add_routes([*http_sessions.routes(), *http_usage.routes(), *http_overview.routes()])
    app.add_routes(http_pairing.routes())
    app.add_routes(http_identities.routes())
    app.add_routes(http_approvals.routes())
    app.add_routes(http_cluster.routes())
    http_metrics.install(app)
    app.add_routes([*http_cron.routes(), *http_hooks.routes()])
    openai_routes.register(app)
    mcp_http.register(app)
    install_console(app)  # D79: the owner console and its sign-in
    for adapter in adapters:
        if isinstance(adapter, HttpMounted):  # D37: declared by type; served by every process
            adapter.mount(app)
    return app


@dataclass
class RunningGateway:
    runtime: Runtime
    runner: web.AppRunner
    url: str
    token: str
    token_generated: bool = False
    """True when this start created the token (the only start that prints it, D12)."""

    token_source: str = "the gateway token"
    """Where a later start's reader finds the token (D130): the token file or the config."""

    def web_chat_line(self) -> str:
        if self.token_generated:
            return f"Web chat: {self.url}?token={self.token}"
        return f"Web chat: {self.url}?token=<token> (the token: {self.token_source})"

    async def stop(self) -> None:
        await self.runtime.stop()
        await self.runner.cleanup()


async def start_gateway(config: CrosstalkConfig, *, port: int | None = None) -> RunningGateway:
    """Start everything; `port=0` picks a free port (tests)."""
    rt = Runtime(config)
    secret, generated = load_gateway_secret(config, rt.state_dir)
    adapters = build_adapters(config, ChannelEnv(rt.state_dir, rt.pages))
    app = build_app(rt, secret, adapters)
    runner = GatewayRunner(
        app,
        max_connections=config.gateway.max_connections,
        header_timeout=config.gateway.header_timeout_seconds,
        shutdown_timeout=2,
        access_log=None,
    )
    await runner.setup()
    bind = config.gateway.bind
    site = web.TCPSite(runner, bind, config.gateway.port if port is None else port)
    await site.start()
    addrs = runner.addresses
    actual_port = addrs[0][1] if addrs else config.gateway.port
    try:
        await rt.start(adapters=adapters)
    except BaseException:
        await rt.stop()
        await runner.cleanup()
        raise
    host = "127.0.0.1" if bind in ("127.0.0.1", "0.0.0.0", "localhost") else bind
    url = f"http://{host}:{actual_port}/"
    return RunningGateway(rt, runner, url, secret, generated, _token_source(config, rt.state_dir))


def _token_source(config: CrosstalkConfig, state_dir: Path) -> str:
    auth = config.gateway.auth
    if auth.mode == "password":
        return "gateway.auth.password in the config"
    if auth.token is not None and auth.token.get_secret_value():
        return "gateway.auth.token in the config or CROSSTALK_GATEWAY_TOKEN"
    return f"the file {state_dir / TOKEN_FILE}"


async def serve(config: CrosstalkConfig) -> None:
    """Run in the foreground until SIGINT/SIGTERM."""
    t0 = time.perf_counter()
    gw = await start_gateway(config)
    from core.engine.observability.logs import redact_also

    redact_also(gw.token)  # a generated token is in no config, and stays out of the log (D143)
    print(f"Crosstalk gateway ready in {time.perf_counter() - t0:.2f}s", flush=True)
    print(f"State: {gw.runtime.state_dir} (CROSSTALK_STATE_DIR picks another)", flush=True)
    print(gw.web_chat_line(), flush=True)
    print(f"Console: {gw.url}console (sign in with the same token)", flush=True)  # D79
    gc.freeze()  # D55: what start-up built lives as long as the process; never scan it again
    gc.enable()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await gw.stop()
