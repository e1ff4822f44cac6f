"""Bearer-token authentication for the HTTP API (reference [7]: token or password mode)."""

from __future__ import annotations

import hmac
import secrets
from pathlib import Path

from aiohttp import web

from core.config import CrosstalkConfig, secret_value
from core.config.state_dir import TOKEN_FILE
from core.store.files import open_private, private_dir, private_file

UNAUTHORIZED = {"error": {"message": "Unauthorized", "type": "unauthorized"}}
CONSOLE_SIGNED_IN: web.RequestKey[bool] = web.RequestKey("crosstalk.console.signed_in", bool)
"""Set by the console's middleware when the request carries a valid console sign-in (D79)."""


def gateway_secret(config: CrosstalkConfig, state_dir: Path) -> str:
    """The configured token/password; in token mode without one, a token kept in the state dir."""
    return load_gateway_secret(config, state_dir)[0]


def configured_secret(config: CrosstalkConfig, state_dir: Path) -> str | None:
    """The secret a client presents, read only: it never creates a token (D130); `None` when
    token mode has no configured token and the state dir holds no token file."""
    auth = config.gateway.auth
    if auth.mode == "password":
        return secret_value(auth.password) or ""
    token = secret_value(auth.token)
    if token:
        return token
    path = state_dir / TOKEN_FILE
    try:
        return path.read_text(encoding="utf-8").strip() or None
    except FileNotFoundError:
        return None


def load_gateway_secret(config: CrosstalkConfig, state_dir: Path) -> tuple[str, bool]:
    """`gateway_secret` and whether this call generated it (only then is it printed, D12). The
    state dir is made 0700 and the token file 0600 (D130), tightened if an older start left
    them readable."""
    existing = configured_secret(config, state_dir)
    if existing is not None:
        if config.gateway.auth.mode == "token" and (state_dir / TOKEN_FILE).exists():
            private_dir(state_dir)
            private_file(state_dir / TOKEN_FILE)
        return existing, False
    private_dir(state_dir)
    token = secrets.token_urlsafe(24)
    with open_private(state_dir / TOKEN_FILE, "w") as fh:
        fh.write(token + "\n")
    return token, True


def presented_secret(request: web.Request, *, query: bool = False) -> str | None:
    """The bearer token of the `Authorization` header; `?token=` only where `query` (D81: the
    web-chat page and its socket, which a browser opens without a header)."""
    header = request.headers.get("Authorization", "")
    if header[:7].lower() == "bearer ":
        return header[7:].strip()
    return request.query.get("token") if query else None


def is_authorized(request: web.Request, secret: str, *, query: bool = False) -> bool:
    """Constant-time comparison of UTF-8 bytes (D12): any token, ASCII or not, is 200 or 401.

    `?token=` (read only with `query`, D81) arrives percent-decoded as UTF-8 by aiohttp;
    undecodable bytes become U+FFFD, which no configured token matches unless it holds U+FFFD
    itself.
    """
    if request.get(CONSOLE_SIGNED_IN):  # the console's session cookie stands for the token
        return True
    given = presented_secret(request, query=query)
    if not secret or given is None:
        return False
    return hmac.compare_digest(_utf8(given), _utf8(secret))


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def unauthorized() -> web.Response:
    return web.json_response(UNAUTHORIZED, status=401)
