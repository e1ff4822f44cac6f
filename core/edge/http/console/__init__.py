"""The owner console (D79, D180–D184): `GET /console`, its sign-in, and its live feed.

Everything the console shows and does goes through the gateway's HTTP API, the one the CLI
uses; this package only adds the page, the sign-in that turns the gateway token into a session
cookie, and the `/api/events` stream that tells an open page what changed.
"""

from __future__ import annotations

from aiohttp import web

from core.edge.http.console import live, pages
from core.edge.http.console.signin import console_session_middleware


def install(app: web.Application) -> None:
    """Mount the console on the gateway's app (after its runtime and secret are set)."""
    app.middlewares.append(console_session_middleware)
    pages.install(app)
    live.install(app)
