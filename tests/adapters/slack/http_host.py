"""A host aiohttp app for the Slack adapter's Events API mode (HTTP): the adapter mounts its
route on it, as it does on the gateway's app."""

from __future__ import annotations

from aiohttp import web

from adapters.slack.adapter import SlackAdapter


async def serve(adapter: SlackAdapter) -> tuple[web.AppRunner, str]:
    app = web.Application()
    adapter.mount(app)
    runner = web.AppRunner(app, shutdown_timeout=1)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner, f"http://127.0.0.1:{runner.addresses[0][1]}"
