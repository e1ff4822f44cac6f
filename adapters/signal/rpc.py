"""signal-cli's HTTP daemon as the Signal channel calls it (aiohttp): JSON-RPC at
``/api/v1/rpc``, liveness at ``/api/v1/check``; and its errors as delivery errors (D164).

    JSON-RPC error -1 "... not registered" / "group not found"   TargetNotFound
    JSON-RPC error -1 "not a member" / "not allowed", -4         TargetForbidden
    JSON-RPC error -5, result RATE_LIMIT_FAILURE, HTTP 429       RateLimited (retryAfterSeconds)
    HTTP 502/503/504                                             RateLimited (not processed)
    result UNREGISTERED_FAILURE / IDENTITY_FAILURE               TargetNotFound / TargetForbidden
    JSON-RPC error -3, NETWORK_FAILURE, other HTTP errors        ChannelUnavailable

The account is sent with every call (``account``), which a multi-account daemon needs and a
single-account daemon ignores.
"""

from __future__ import annotations

import base64
import itertools
from typing import Any

import aiohttp

from adapters.http_session import LazySession
from core.api.channels import (
    ChannelUnavailable,
    DeliveryError,
    RateLimited,
    TargetForbidden,
    TargetNotFound,
)

_NETWORK = (aiohttp.ClientError, TimeoutError, OSError)


class RpcError(Exception):
    """A JSON-RPC error answer."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"signal-cli error {code}: {message}")
        self.code, self.message, self.data = code, message, data


def rpc_error(exc: RpcError, where: str) -> DeliveryError:
    text = f"{where}: {exc.message} (signal-cli error {exc.code})"
    lower = exc.message.lower()
    if exc.code == -5 or "rate limit" in lower:
        retry = _retry_after(
            (exc.data or {}).get("response") if isinstance(exc.data, dict) else None
        )
        return RateLimited(text, retry or 5.0)
    if exc.code == -4 or "not a member" in lower or "not allowed" in lower:
        return TargetForbidden(text)
    if "not registered" in lower or "not found" in lower:
        return TargetNotFound(text)
    if exc.code == -3:
        return ChannelUnavailable(text)
    return DeliveryError(text)


def _retry_after(response: Any) -> float | None:
    for result in (response or {}).get("results") or [] if isinstance(response, dict) else []:
        if isinstance(result, dict) and result.get("retryAfterSeconds") is not None:
            return float(result["retryAfterSeconds"])
    return None


def send_outcome(result: Any, where: str) -> str:
    """The sent message's timestamp (its id), or the delivery error its results name."""
    results = (
        [r for r in (result or {}).get("results") or [] if isinstance(r, dict)]
        if isinstance(result, dict)
        else []
    )
    timestamp = result.get("timestamp") if isinstance(result, dict) else None
    if timestamp is None:
        raise DeliveryError(f"{where}: signal-cli answered without a timestamp")
    if not results or any(r.get("type") == "SUCCESS" for r in results):
        return str(timestamp)  # a group message reached at least one member
    first = results[0]
    kind = str(first.get("type"))
    text = f"{where}: {kind}"
    if kind == "RATE_LIMIT_FAILURE":
        retry = first.get("retryAfterSeconds")
        return _raise(RateLimited(text, float(retry) if retry is not None else 5.0))
    if kind == "UNREGISTERED_FAILURE":
        return _raise(TargetNotFound(f"{text} (not a Signal user)"))
    if kind == "IDENTITY_FAILURE":
        return _raise(
            TargetForbidden(
                f"{text} (the recipient's safety number changed; trust it with `signal-cli trust`)"
            )
        )
    return _raise(ChannelUnavailable(text))


def _raise(exc: DeliveryError) -> str:
    raise exc


def http_error(status: int, headers: Any, where: str) -> DeliveryError:
    text = f"{where}: signal-cli answered HTTP {status}"
    if status in (429, 502, 503, 504):
        raw = headers.get("Retry-After") if headers is not None else None
        try:
            retry = float(raw) if raw is not None else 1.0
        except ValueError:
            retry = 1.0
        return RateLimited(text, retry)
    return ChannelUnavailable(text)


class SignalRpc(LazySession):
    """JSON-RPC calls for one account of one daemon."""

    def __init__(self, http_url: str, account: str, *, timeout: float = 30.0) -> None:
        super().__init__(timeout)
        self.http_url = http_url.rstrip("/")
        self.account = account
        self._ids = itertools.count(1)

    async def check(self) -> None:
        """The daemon is up (raises otherwise)."""
        async with self.http.get(f"{self.http_url}/api/v1/check") as resp:
            if resp.status != 200:
                raise ConnectionError(f"signal-cli check answered HTTP {resp.status}")

    async def call(self, method: str, params: dict[str, Any], where: str) -> Any:
        """One JSON-RPC call; delivery errors as the gate expects them."""
        body = {
            "jsonrpc": "2.0",
            "method": method,
            "id": next(self._ids),
            "params": {"account": self.account, **params},
        }
        try:
            async with self.http.post(f"{self.http_url}/api/v1/rpc", json=body) as resp:
                if resp.status not in (200, 201):
                    raise http_error(resp.status, resp.headers, where)
                answer = await resp.json(content_type=None) if resp.status == 200 else {}
        except _NETWORK as exc:
            raise ChannelUnavailable(f"{where}: signal-cli unreachable: {exc}") from exc
        if isinstance(answer, dict) and isinstance(answer.get("error"), dict):
            error = answer["error"]
            raise rpc_error(
                RpcError(
                    int(error.get("code") or 0),
                    str(error.get("message") or "error"),
                    error.get("data"),
                ),
                where,
            )
        return answer.get("result") if isinstance(answer, dict) else None

    async def send(self, to: str, text: str, styles: list[str], where: str) -> str:
        params: dict[str, Any] = {"message": text, **target_params(to)}
        if styles:
            params["textStyle"] = styles
        return send_outcome(await self.call("send", params, where), where)

    async def send_attachment(self, to: str, data_uri: str, caption: str | None, where: str) -> str:
        """One message carrying a file (signal-cli's ``attachments``, as a data URI) and its
        caption as the message text."""
        params: dict[str, Any] = {"message": caption or "", "attachments": [data_uri]}
        return send_outcome(await self.call("send", {**params, **target_params(to)}, where), where)

    async def typing(self, to: str, where: str) -> None:
        await self.call("sendTyping", target_params(to), where)

    async def read_receipt(self, sender: str, timestamps: list[int], where: str) -> None:
        await self.call(
            "sendReceipt",
            {"recipient": sender, "targetTimestamp": timestamps, "type": "read"},
            where,
        )

    async def attachment(self, attachment_id: str, where: str) -> str:
        result = await self.call("getAttachment", {"id": attachment_id}, where)
        data = result.get("data") if isinstance(result, dict) else None
        if not isinstance(data, str):
            raise DeliveryError(f"{where}: signal-cli returned no attachment data")
        return data


def data_uri(data: bytes, mime: str, name: str | None) -> str:
    """signal-cli's attachment as data: ``data:<mime>;filename=<name>;base64,<data>`` (a voice
    note goes without a name, which is how Signal's apps send one)."""
    named = f";filename={name}" if name else ""
    return f"data:{mime}{named};base64,{base64.b64encode(data).decode()}"


def target_params(to: str) -> dict[str, Any]:
    """``group:<id>`` → ``groupId``; a number or ACI → ``recipient``."""
    text = to.strip()
    if text.lower().startswith("group:"):
        return {"groupId": text.split(":", 1)[1].strip()}
    return {"recipient": [text.removeprefix("signal:")]}
