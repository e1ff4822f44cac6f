"""Console sign-in (D79, D180): the gateway token, once, for an HttpOnly session cookie.

The sign-in form posts the token in its body; the gateway answers with a random session
cookie (`HttpOnly`, `SameSite=Strict`, `Path=/`, `Secure` over HTTPS, also behind a proxy
that says so in `X-Forwarded-Proto`) and a redirect, so the
token never appears in a URL and the page's scripts never hold it. The database keeps only the
cookie's HMAC-SHA-256 keyed with the gateway token, with its expiry (`console.sessionHours`), so
every gateway process accepts it, a sign-out ends it everywhere at once, and rotating the token
ends every sign-in made with the old one (D185): a leaked token's console session does not
outlive the rotation that answers the leak.

The cookie stands for the token on the HTTP API (the same routes the CLI uses) when the request
also shows it came from the console itself: the browser's `Sec-Fetch-Site` is `same-origin`
(or absent, for clients that do not send it), and any request that can change something
carries `X-Crosstalk-Console: 1`, a header no cross-site form can send and no cross-origin
script may send without a CORS preflight, which the gateway never grants.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from aiohttp import web
from aiohttp.typedefs import Handler

from core.edge.http.appkeys import RUNTIME, SECRET
from core.edge.http.auth import CONSOLE_SIGNED_IN
from core.features.cron.clock import Clock, SystemClock, to_ms

COOKIE = "crosstalk_console"
CSRF_HEADER = "X-Crosstalk-Console"
CLOCK: web.AppKey[Clock] = web.AppKey("crosstalk.console.clock")
API_PREFIXES = ("/api/",)
API_PATHS = frozenset({"/tools/invoke", "/healthz", "/openapi.json", "/metrics"})
"""Where the console's cookie stands for the token: the HTTP API, nothing else (not the web
chat, not `/v1/*`, not `/mcp`, not webhooks)."""
SAFE_METHODS = frozenset({"GET", "HEAD"})


def over_https(request: web.Request) -> bool:
    """HTTPS here or at a proxy in front (`X-Forwarded-Proto`): the cookie is then `Secure`.
    Trusting the header costs nothing: it can only restrict the cookie further."""
    return request.secure or request.headers.get("X-Forwarded-Proto", "").lower() == "https"


def digest(cookie: str, secret: str) -> str:
    """What the store keeps of a cookie: bound to the token it was signed in with (D185)."""
    return hmac.new(
        secret.encode("utf-8", "surrogatepass"),
        cookie.encode("utf-8", "surrogatepass"),
        hashlib.sha256,
    ).hexdigest()


def clock_of(app: web.Application) -> Clock:
    return app.get(CLOCK) or SystemClock()


def token_matches(given: str, secret: str) -> bool:
    """Constant-time comparison of UTF-8 bytes, as the bearer check (D12)."""
    return bool(secret) and hmac.compare_digest(
        given.encode("utf-8", "surrogatepass"), secret.encode("utf-8", "surrogatepass")
    )


async def sign_in(request: web.Request, response: web.StreamResponse) -> None:
    """Start a console session and set its cookie on `response`."""
    rt = request.app[RUNTIME]
    now = to_ms(clock_of(request.app).now())
    seconds = int(rt.config.console.session_hours * 3600)
    cookie = secrets.token_urlsafe(32)
    await rt.store.add_console_session(
        digest(cookie, request.app[SECRET]), now, now + seconds * 1000
    )
    response.set_cookie(
        COOKIE,
        cookie,
        max_age=seconds,
        path="/",
        httponly=True,
        samesite="Strict",
        secure=over_https(request),
    )


async def sign_out(request: web.Request, response: web.StreamResponse) -> None:
    """End the request's console session (if any) and clear its cookie."""
    cookie = request.cookies.get(COOKIE)
    if cookie:
        await request.app[RUNTIME].store.end_console_session(digest(cookie, request.app[SECRET]))
    response.del_cookie(
        COOKIE, path="/", httponly=True, samesite="Strict", secure=over_https(request)
    )


async def signed_in(request: web.Request) -> bool:
    """The request carries a console cookie that is signed in and not expired."""
    cookie = request.cookies.get(COOKIE)
    if not cookie or len(cookie) > 128:
        return False
    now = to_ms(clock_of(request.app).now())
    store = request.app[RUNTIME].store
    return await store.console_session_expiry(digest(cookie, request.app[SECRET]), now) is not None


def same_origin(request: web.Request) -> bool:
    """The browser says the request comes from a page of this gateway (or says nothing)."""
    site = request.headers.get("Sec-Fetch-Site")
    return (
        site is None or site == "same-origin" or (site == "none" and request.method in SAFE_METHODS)
    )


def _api_request(request: web.Request) -> bool:
    path = request.path
    return path in API_PATHS or path.startswith(API_PREFIXES)


@web.middleware
async def console_session_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Mark API requests that the console makes with a valid sign-in (`is_authorized` then
    accepts them); a bearer token, when given, is checked as always instead."""
    if (
        COOKIE in request.cookies
        and "Authorization" not in request.headers
        and _api_request(request)
        and same_origin(request)
        and (request.method in SAFE_METHODS or request.headers.get(CSRF_HEADER) == "1")
        and request.app[SECRET]
        and await signed_in(request)
    ):
        request[CONSOLE_SIGNED_IN] = True
    return await handler(request)
