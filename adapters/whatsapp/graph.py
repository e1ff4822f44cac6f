"""The Graph API calls the WhatsApp channel makes (aiohttp), and its errors as delivery errors.

Graph answers errors as ``{"error": {"message", "type", "code", "error_data": {"details"}}}``;
the WhatsApp codes that matter to a chat bot map onto the gate's error tree (D162):

    429, 130429, 131056, 80007, 4   RateLimited (the gate waits and retries that chunk)
    503, 502, 504, 2, 131016        RateLimited too: "try later", the request was not processed
    131047                          OutsideServiceWindow: the 24-hour window is closed
    131026                          TargetNotFound (not a WhatsApp user, or cannot receive)
    131030, 10, 200-299, 403        TargetForbidden
    190, 401                        ChannelUnavailable (the access token was rejected)
    anything else                   ChannelUnavailable for other 5xx, else DeliveryError

A 500 is not retried: Graph may have sent the message before failing, and a resend would show it
twice (D16); it is recorded ``failed`` with its reason instead.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import aiohttp

from adapters.http_session import LazySession
from core.api.channels import (
    ChannelUnavailable,
    DeliveryError,
    RateLimited,
    TargetForbidden,
    TargetNotFound,
)

WINDOW_CLOSED = 131047
_RATE_CODES = frozenset({4, 80007, 130429, 131056})
_UNAVAILABLE_CODES = frozenset({2, 131016})
_FORBIDDEN_CODES = frozenset({10, 131030, *range(200, 300)})
_TOKEN_CODES = frozenset({190})
#: Hosts that may receive the access token besides the configured Graph API (media downloads).
MEDIA_HOSTS = frozenset({"lookaside.fbsbx.com"})


class OutsideServiceWindow(TargetForbidden):
    """WhatsApp allows free-form replies only within 24 hours of the user's last message;
    after that only approved templates (D162)."""


class GraphError(Exception):
    """A Graph API error answer (the body's ``error`` object and the HTTP status)."""

    def __init__(self, status: int, error: dict[str, Any], retry_after: float | None) -> None:
        self.status = status
        self.code = error.get("code") if isinstance(error.get("code"), int) else None
        self.message = str(error.get("message") or f"HTTP {status}")
        details = (
            (error.get("error_data") or {}).get("details")
            if isinstance(error.get("error_data"), dict)
            else None
        )
        self.details = str(details) if details else None
        self.retry_after = retry_after
        super().__init__(self.describe())

    def describe(self) -> str:
        code = f" {self.code}" if self.code is not None else ""
        extra = f": {self.details}" if self.details else ""
        return f"Graph error{code} (HTTP {self.status}): {self.message}{extra}"


def delivery_error(exc: GraphError, where: str) -> DeliveryError:
    """One Graph error as the gate's typed error (see the table above)."""
    code, status = exc.code, exc.status
    text = f"{where}: {exc.describe()}"
    if code == WINDOW_CLOSED:
        return OutsideServiceWindow(
            f"{where}: outside WhatsApp's 24-hour customer-service window (Graph error "
            f"131047); only template messages can reach this user until they write again"
        )
    if status == 429 or code in _RATE_CODES:
        return RateLimited(text, exc.retry_after if exc.retry_after is not None else 2.0)
    if status in (502, 503, 504) or code in _UNAVAILABLE_CODES:
        return RateLimited(text, exc.retry_after if exc.retry_after is not None else 1.0)
    if status == 401 or code in _TOKEN_CODES:
        return ChannelUnavailable(f"{where}: the access token was rejected ({exc.message})")
    if code == 131026 or status == 404:
        return TargetNotFound(text)
    if status == 403 or code in _FORBIDDEN_CODES:
        return TargetForbidden(text)
    if status >= 500:
        return ChannelUnavailable(text)
    return DeliveryError(text)


def _retry_after(headers: Any) -> float | None:
    raw = headers.get("Retry-After") if headers is not None else None
    try:
        return float(raw) if raw is not None else None
    except ValueError:
        return None


class GraphClient(LazySession):
    """The few Graph endpoints the channel uses, with the account's token (never logged)."""

    def __init__(
        self, base_url: str, phone_number_id: str, token: str, *, timeout: float = 15.0
    ) -> None:
        super().__init__(timeout)
        self.base_url = base_url.rstrip("/")
        self.phone_number_id = phone_number_id
        self._token = token

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._token}"}

    async def _call(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None = None,
        params: dict[str, str] | None = None,
        form: aiohttp.FormData | None = None,
    ) -> dict[str, Any]:
        url = f"{self.base_url}/{path}"
        async with self.http.request(
            method,
            url,
            json=body,
            data=form,
            params=params,
            headers=self._headers(),
        ) as resp:
            try:
                data = await resp.json(content_type=None)
            except (ValueError, aiohttp.ContentTypeError):
                data = None
            if resp.status >= 400 or (isinstance(data, dict) and "error" in data):
                error = data.get("error") if isinstance(data, dict) else None
                raise GraphError(
                    resp.status,
                    error if isinstance(error, dict) else {},
                    _retry_after(resp.headers),
                )
            return data if isinstance(data, dict) else {}

    async def phone_number(self) -> dict[str, Any]:
        """The business number's profile: checks the token and the phone number id."""
        return await self._call(
            "GET", self.phone_number_id, params={"fields": "display_phone_number,verified_name"}
        )

    async def post_text(self, to: str, body: str) -> str | None:
        """Send one text message; returns its ``wamid``."""
        return await self.post_media(to, "text", {"preview_url": False, "body": body})

    async def upload(self, data: bytes, mime: str, name: str) -> str:
        """Step 1 of a media message: the file to ``/{phone-number-id}/media``; its media id."""
        form = aiohttp.FormData()
        form.add_field("messaging_product", "whatsapp")
        form.add_field("type", mime)
        form.add_field("file", data, filename=name, content_type=mime)
        found = await self._call("POST", f"{self.phone_number_id}/media", form=form)
        media_id = found.get("id")
        if not media_id:
            raise GraphError(200, {"message": "the media upload returned no id"}, None)
        return str(media_id)

    async def post_media(self, to: str, kind: str, media: dict[str, Any]) -> str | None:
        """Step 2: a message of ``kind`` (image, audio, video, document) naming the upload; a
        ``text`` message too. Returns its ``wamid``."""
        data = await self._call(
            "POST",
            f"{self.phone_number_id}/messages",
            {
                "messaging_product": "whatsapp",
                "recipient_type": "individual",
                "to": to,
                "type": kind,
                kind: media,
            },
        )
        messages = data.get("messages") or [{}]
        wamid = messages[0].get("id") if isinstance(messages[0], dict) else None
        return str(wamid) if wamid else None

    async def read_and_typing(self, wamid: str) -> None:
        """Mark the user's message read and show "typing…" (up to 25 s or the next reply)."""
        await self._call(
            "POST",
            f"{self.phone_number_id}/messages",
            {
                "messaging_product": "whatsapp",
                "status": "read",
                "message_id": wamid,
                "typing_indicator": {"type": "text"},
            },
        )

    async def media(self, media_id: str) -> bytes:
        """A received media file: its short-lived URL from Graph, then the bytes.

        The token goes only to the Graph API's host and Meta's media host, never to a URL
        merely because an answer named it.
        """
        info = await self._call("GET", media_id)
        url = str(info.get("url") or "")
        allowed = {urlsplit(self.base_url).netloc, *MEDIA_HOSTS}
        if urlsplit(url).scheme not in ("https", "http") or urlsplit(url).netloc not in allowed:
            raise DeliveryError(f"media {media_id}: unexpected download host")
        async with self.http.get(url, headers=self._headers()) as resp:
            if resp.status != 200:
                raise GraphError(
                    resp.status, {"message": "media download failed"}, _retry_after(resp.headers)
                )
            return await resp.read()
