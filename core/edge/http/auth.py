"""Bearer-token authentication for the HTTP API (reference [7]: token or password mode)."""

from __future__ import annotations

import hmac
import secrets
from pathlib import Path

from aiohttp import web

from core.config import CrosstalkConfig, secret_value

UNAUTHORIZED = {"error": {"message": "Unauthorized", "type": "unauthorized"}}
CONSOLE_SIGNED_IN: web.RequestKey[bool] = web.RequestKey("crosstalk.console.signed_in", bool)
"""Set by the console's middleware when the request carries a valid console sign-in (D79)."""


def gateway_secret(config: CrosstalkConfig, state_dir: Path) -> str:
    """The configured token/password; in token mode without one, a token kept in the state dir."""
    return load_gateway_secret(config, state_dir)[0]


def load_gateway_secret(config: CrosstalkConfig, state_dir: Path) -> tuple[str, bool]:
    """`gateway_secret` and whether this call generated it (only then is it printed, D12)."""
    auth = config.gateway.auth
    if auth.mode == "password":
        return secret_value(auth.password) or "", False
    token = secret_value(auth.token)
    if token:
        return token, False
    path = state_dir / "gateway-token"
    if path.exists():
        return path.read_text(encoding="utf-8").strip(), False
    state_dir.mkdir(parents=True, exist_ok=True)
    token = secrets.token_urlsafe(24)
    path.write_text(token + "\n", encoding="utf-8")
    path.chmod(0o600)
    return token, True


def presented_secret(request: web.Request) -> str | None:
    header = request.headers.get("Authorization", "")
    if header[:7].lower() == "bearer ":
        return header[7:].strip()
    return request.query.get("token")


def is_authorized(request: web.Request, secret: str) -> bool:
    """Constant-time comparison of UTF-8 bytes (D12): any token, ASCII or not, is 200 or 401.

    `?token=` arrives percent-decoded as UTF-8 by aiohttp; undecodable bytes become U+FFFD,
    which no configured token matches unless it holds U+FFFD itself.
    """
    if request.get(CONSOLE_SIGNED_IN):  # the console's session cookie stands for the token
        return True
    given = presented_secret(request)
    if not secret or given is None:
        return False
    return hmac.compare_digest(_utf8(given), _utf8(secret))


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def unauthorized() -> web.Response:
    return web.json_response(UNAUTHORIZED, status=401)
