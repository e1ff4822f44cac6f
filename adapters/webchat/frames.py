"""What the page sends on its socket, read: a message frame's text and `clientId`, a button's
press (D12, D16, D121). Moved out of the adapter, which keeps the sockets."""

from __future__ import annotations

import json

MAX_TEXT = 32_000


def identities(peer: str, data: str) -> tuple[str, ...]:
    """The frame's `clientId` (the page sends one per message): a resend is dropped (D16)."""
    try:
        frame = json.loads(data)
    except (ValueError, RecursionError):
        return ()
    client_id = frame.get("clientId") if isinstance(frame, dict) else None
    if not isinstance(client_id, str) or not client_id.strip():
        return ()
    return (f"client:{peer}:{client_id.strip()[:200]}",)


def press_command(data: str) -> str | None:
    """The command of a `{"type":"press","command":"/approve ID","clientId":"..."}` frame."""
    try:
        frame = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if not isinstance(frame, dict) or frame.get("type") != "press":
        return None
    command = frame.get("command")
    if not isinstance(command, str) or not command.startswith("/"):
        return None
    return command.strip()[:200] or None


def frame_text(data: str, *, empty_ok: bool = False) -> str | None:
    """The text of a `{"type":"message","text":"..."}` frame, or None for anything else.

    `text` must be a JSON string (null, numbers, lists and objects are refused, D12) of
    1..MAX_TEXT characters after trimming (0 when the frame carries uploads, D154).
    """
    try:
        frame = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if not isinstance(frame, dict) or frame.get("type") != "message":
        return None
    text = frame.get("text")
    if not isinstance(text, str):
        return None
    text = text.strip()
    return text if (0 < len(text) or empty_ok) and len(text) <= MAX_TEXT else None
