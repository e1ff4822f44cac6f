"""The Matrix device: logging in once, and keeping what it needs private (D170).

Everything lives in ``<stateDir>/matrix/<account>/`` (mode 0700): ``session.json`` (user id,
device id and, after a password login, the access token it yielded), the sync cursor, and
matrix-nio's end-to-end store (the device's Olm account and Megolm sessions). Every file there
is made 0600. A restart reuses the device, so encrypted rooms keep working and the server's
transaction ids keep de-duplicating resends (D16).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nio import AsyncClient, AsyncClientConfig, LoginResponse, WhoamiResponse

from adapters.matrix.spec import MatrixConfig
from core.api.channels import secret_value


class LoginRefused(Exception):
    """The server refused the credentials: retrying cannot help."""


@dataclass(slots=True)
class Device:
    user_id: str
    device_id: str
    access_token: str


def account_dir(state_dir: Path | None, account_id: str) -> Path:
    """``<stateDir>/matrix/<account>``, created 0700 (a temporary one without a state dir)."""
    if state_dir is None:
        import tempfile

        state_dir = Path(tempfile.mkdtemp(prefix="crosstalk-matrix-"))
    path = state_dir / "matrix" / account_id
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path.parent, 0o700)
    os.chmod(path, 0o700)
    return path


def lock_down(path: Path) -> None:
    """Every file under `path` readable by its owner only (the store adds files lazily)."""
    for item in path.iterdir():
        if item.is_file() and (item.stat().st_mode & 0o077):
            os.chmod(item, 0o600)


def write_private(path: Path, data: dict[str, Any]) -> None:
    """Write JSON atomically, never world-readable, not even for a moment."""
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh)
    os.replace(tmp, path)


def read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def client_config(request_timeout: float) -> AsyncClientConfig:
    """nio hands every 429 and network error back to us: the gate and the supervisor retry."""
    return AsyncClientConfig(
        encryption_enabled=True,
        store_sync_tokens=False,
        max_limit_exceeded=0,
        max_timeouts=0,
        request_timeout=request_timeout,
    )


async def open_device(config: MatrixConfig, directory: Path, request_timeout: float) -> AsyncClient:
    """A logged-in client with its end-to-end store loaded.

    Order: a saved session (from an earlier password login); else the configured access
    token (its device asked with whoami when not configured); else a password login, whose
    session is saved. A rejected saved token falls back to the password.
    """
    saved = read_json(directory / "session.json")
    if saved and saved.get("user_id") == config.user_id and config.password is not None:
        client = _client(config, directory, request_timeout, saved.get("device_id"))
        client.restore_login(config.user_id, str(saved["device_id"]), str(saved["access_token"]))
        who = await client.whoami()
        if isinstance(who, WhoamiResponse):
            lock_down(directory)
            return client
        await client.close()
        if getattr(who, "status_code", None) != "M_UNKNOWN_TOKEN":
            raise ConnectionError(f"whoami failed: {who}")
    token = secret_value(config.access_token)
    if token:
        client = _client(config, directory, request_timeout, config.device_id)
        device_id = config.device_id
        if not device_id:
            client.access_token = token
            who = await client.whoami()
            if not isinstance(who, WhoamiResponse):
                await client.close()
                _refuse_or_retry(who, "access token")
            device_id = who.device_id
            if not device_id:
                await client.close()
                raise LoginRefused("the access token has no device: set deviceId")
        client.restore_login(config.user_id, device_id, token)
        lock_down(directory)
        return client
    client = _client(config, directory, request_timeout, None)
    resp = await client.login(secret_value(config.password) or "", device_name=config.device_name)
    if not isinstance(resp, LoginResponse):
        await client.close()
        _refuse_or_retry(resp, "password")
    write_private(
        directory / "session.json",
        {"user_id": resp.user_id, "device_id": resp.device_id, "access_token": resp.access_token},
    )
    lock_down(directory)
    return client


class Client(AsyncClient):  # type: ignore[misc]
    """nio's client, with relations left in the clear when a message is encrypted: the
    homeserver aggregates edits and threads by them, and clients expect them outside the
    ciphertext (client-server spec, "m.relates_to" of encrypted events)."""

    def encrypt(
        self, room_id: str, message_type: str, content: dict[Any, Any]
    ) -> tuple[str, dict[str, str]]:
        kind, encrypted = super().encrypt(room_id, message_type, content)
        if "m.relates_to" in content:
            encrypted = {**encrypted, "m.relates_to": content["m.relates_to"]}
        return kind, encrypted


def _client(
    config: MatrixConfig, directory: Path, request_timeout: float, device_id: str | None
) -> AsyncClient:
    return Client(
        config.homeserver,
        config.user_id,
        device_id=device_id,
        store_path=str(directory),
        config=client_config(request_timeout),
    )


def _refuse_or_retry(resp: object, what: str) -> None:
    code = getattr(resp, "status_code", None)
    if code in ("M_FORBIDDEN", "M_UNKNOWN_TOKEN", "M_USER_DEACTIVATED", "M_INVALID_USERNAME"):
        raise LoginRefused(f"{what} rejected by the homeserver ({code})")
    raise ConnectionError(f"login failed: {getattr(resp, 'message', resp)}")
