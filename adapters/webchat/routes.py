"""The web chat page's extra routes: vendored scripts and what the page shows on first run.

``GET /webchat/static/{name}``: the vendored markdown renderer and sanitiser (marked,
DOMPurify; no build step). ``GET /webchat/info`` (gateway token required): which model answers,
or how to add one, and the chat commands, so the page can show a useful empty state and tell
a wrong token apart from a dropped connection (a browser WebSocket never sees the 401).
``GET /webchat/media/{id}`` (token in the header): the bytes of a stored media item the chat
shows (D78), sandboxed so a file can never run as the page.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from aiohttp import web

from adapters.webchat.history import tool_cards
from core.api.channels import request_authorized

if TYPE_CHECKING:
    from adapters.webchat.env import WebchatEnv

STATIC = Path(__file__).parent / "static"
VENDOR = STATIC / "vendor"
_FILES = {
    "marked.umd.js": VENDOR,
    "purify.min.js": VENDOR,
    "media.js": STATIC,  # the page's media: shown, uploaded, recorded (D78)
}
HOW_TO_GET_THE_URL = (
    'Open the "Web chat:" link printed by the start of ./scripts/run (or crosstalk gateway) '
    "that created the token, or add ?token=<token> to this page's address. The token is in "
    "the file gateway-token of the state directory the gateway prints as State: when it starts "
    "(.crosstalk/gateway-token in the checkout with ./scripts/run), or gateway.auth.token in "
    "your config."
)
HOW_TO_ADD_A_MODEL = (
    "Add a provider under models.providers and set agents.defaults.model (e.g. local/llama3.2), "
    "or start an OpenAI-compatible server (Ollama, llama.cpp, LM Studio) on this machine."
)


_MIME = re.compile(r"[a-z0-9][a-z0-9!#$&^_.+-]{0,126}/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}")


def served_mime(stored: str) -> str:
    """A stored item's type as a header may carry it: `type/subtype` of token characters,
    lower-cased, parameters dropped; anything else (its sender wrote it: a newline, a NUL, a
    list) is a download of `application/octet-stream`, not a 500 or a dropped connection."""
    mime = stored.split(";", 1)[0].strip().lower()
    return mime if _MIME.fullmatch(mime) else "application/octet-stream"


def mount_routes(app: web.Application, rt: WebchatEnv) -> None:
    async def static(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in _FILES:
            raise web.HTTPNotFound(text=f"no such file: {name}")
        return web.Response(
            body=(_FILES[name] / name).read_bytes(),
            content_type="text/javascript",
            headers={"Cache-Control": "public, max-age=86400"},
        )

    async def info(request: web.Request) -> web.Response:
        if not request_authorized(request):
            return web.json_response(
                {
                    "error": {
                        "message": "invalid token",
                        "type": "unauthorized",
                        "howToFix": HOW_TO_GET_THE_URL,
                    }
                },
                status=401,
            )
        agent_id = rt.config.default_agent_id()
        model = rt.models.default_ref(agent_id)
        commands = [
            {"name": spec.name, "description": spec.description}
            for spec in rt.commands.visible(is_owner=True)
        ]  # token holder = owner
        return web.json_response(
            {
                "agent": agent_id,
                "model": model,
                "howToAddModel": None if model else HOW_TO_ADD_A_MODEL,
                "commands": commands,
                "media": {  # what uploads may weigh (D154)
                    "maxImageBytes": rt.config.agents.defaults.media.max_image_bytes,
                    "maxUploadBytes": rt.config.agents.defaults.media.max_upload_bytes,
                },
            }
        )

    async def media(request: web.Request) -> web.Response:
        if not request_authorized(request):
            return web.json_response(
                {"error": {"message": "invalid token", "type": "unauthorized"}}, status=401
            )
        media_id = request.match_info["id"]
        found = (await rt.store.media_by_id([media_id])).get(media_id)
        if found is None:
            raise web.HTTPNotFound(text=f"no such media: {media_id}")
        mime = served_mime(found.mime)
        inline = mime.split("/", 1)[0] in ("image", "audio", "video")
        name = quote(found.name)
        return web.Response(
            body=found.data,
            content_type=mime if inline else "application/octet-stream",
            headers={
                "Content-Disposition": (
                    f"{'inline' if inline else 'attachment'}; filename*=UTF-8''{name}"
                ),
                "Content-Security-Policy": "sandbox; default-src 'none'",
                "X-Content-Type-Options": "nosniff",
                "Cache-Control": "private, max-age=3600",
            },
        )

    async def run_tools(request: web.Request) -> web.Response:
        """`GET /webchat/runs/{id}`: a finished turn's tool calls, folded under its reply."""
        if not request_authorized(request):
            return web.json_response(
                {"error": {"message": "invalid token", "type": "unauthorized"}}, status=401
            )
        key = rt.keys.main_session_key(rt.config.default_agent_id())
        entry = await rt.store.get_session(key)
        msgs = (
            []
            if entry is None
            else await rt.store.history(entry.session_id, run_id=request.match_info["id"][:100])
        )
        cards = [card for group in tool_cards(msgs).values() for card in group]
        return web.json_response({"tools": cards})

    app.router.add_get("/webchat/runs/{id}", run_tools)
    app.router.add_get("/webchat/static/{name}", static)
    app.router.add_get("/webchat/media/{id}", media)
    app.router.add_get("/webchat/info", info)
