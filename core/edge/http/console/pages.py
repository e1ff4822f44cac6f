"""`GET /console`: the owner console's page, its sign-in and sign-out, its static files (D79).

The page is static HTML, CSS and JavaScript modules from `static/` (no build step, no CDN, no
inline script or style), sent with a Content-Security-Policy that allows only this gateway's
own scripts, styles and API. Without a valid sign-in, `/console` answers with the sign-in form
instead (also when the sign-in expired or was ended elsewhere): never an error page.
"""

from __future__ import annotations

import html
from pathlib import Path

from aiohttp import web

from core.edge.http.appkeys import SECRET
from core.edge.http.console.signin import same_origin, sign_in, sign_out, signed_in, token_matches

STATIC = Path(__file__).parent / "static"
_TYPES = {
    ".js": "text/javascript",
    ".css": "text/css",
    ".svg": "image/svg+xml",
    ".html": "text/html",
}
FILES = frozenset(
    p.relative_to(STATIC).as_posix()
    for p in STATIC.rglob("*")
    if p.is_file() and p.suffix in _TYPES and p.name != "index.html"
)
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
MAX_FORM_BYTES = 4096
WHERE_IS_THE_TOKEN = (
    "The token is gateway.auth.token in your config, or the file "
    "gateway-token in the gateway's state directory."
)


def _html(body: str, status: int = 200) -> web.Response:
    return web.Response(
        text=body,
        status=status,
        content_type="text/html",
        charset="utf-8",
        headers=SECURITY_HEADERS,
    )


def sign_in_page(
    problem: str | None = None, status: int = 200, *, here: str = "console/"
) -> web.Response:
    """The sign-in form; `here` is the way from the request's URL to `/console/` (relative
    links, so a gateway behind a path prefix works too)."""
    note = (
        f'<p class="problem" id="problem" role="alert">{html.escape(problem)}</p>'
        if problem
        else ""
    )
    return _html(
        f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Sign in · Crosstalk console</title>
<link rel="icon" href="{here}static/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="{here}static/console.css">
</head><body class="signin">
<main class="signin-card">
<h1>Crosstalk console</h1>
<p>Sign in with the gateway token. {html.escape(WHERE_IS_THE_TOKEN)}</p>
{note}
<form method="post" action="{here}sign-in" id="signin">
<label for="token">Gateway token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required
 autofocus spellcheck="false">
<button type="submit" id="signin-button">Sign in</button>
</form>
</main></body></html>
""",
        status,
    )


async def console_page(request: web.Request) -> web.Response:
    if not await signed_in(request):
        return sign_in_page()
    return _html((STATIC / "index.html").read_text(encoding="utf-8"))


async def back_to_console(request: web.Request) -> web.Response:
    """`/console/` and a reloaded `/console/sign-in`: the page itself."""
    raise web.HTTPSeeOther("../console")


async def sign_in_handler(request: web.Request) -> web.Response:
    """The form's token, compared in constant time; right: a cookie and back to the page."""

    def problem(text: str, status: int) -> web.Response:
        return sign_in_page(text, status, here="")

    if not same_origin(request):
        return problem("Sign in from the console's own page.", 403)
    if len(await request.read()) > MAX_FORM_BYTES:
        return problem("That is not a gateway token (too long).", 400)
    if request.content_type != "application/x-www-form-urlencoded":
        return problem("Sign in with the form on this page.", 400)
    form = await request.post()
    token = form.get("token")
    if not isinstance(token, str) or not token.strip():
        return problem("Enter the gateway token.", 400)
    if not token_matches(token.strip(), request.app[SECRET]):
        return problem("That token is not this gateway's token.", 401)
    resp = web.HTTPSeeOther("../console", headers={"Cache-Control": "no-store"})
    await sign_in(request, resp)
    raise resp


async def sign_out_handler(request: web.Request) -> web.Response:
    if not same_origin(request):
        return sign_in_page("Sign out from the console's own page.", 403, here="")
    resp = web.HTTPSeeOther("../console", headers={"Cache-Control": "no-store"})
    await sign_out(request, resp)
    raise resp


async def static_file(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    if name not in FILES:
        raise web.HTTPNotFound(text=f"no such file: {name}")
    path = STATIC / name
    return web.Response(
        body=path.read_bytes(),
        content_type=_TYPES[path.suffix],
        headers={**SECURITY_HEADERS, "Cache-Control": "no-cache"},
    )


def install(app: web.Application) -> None:
    app.router.add_get("/console", console_page)
    app.router.add_get("/console/", back_to_console)
    app.router.add_get("/console/sign-in", back_to_console)
    app.router.add_post("/console/sign-in", sign_in_handler)
    app.router.add_post("/console/sign-out", sign_out_handler)
    app.router.add_get("/console/static/{name:.+}", static_file)
