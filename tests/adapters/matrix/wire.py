"""What the bot sent into a Matrix room, read from the recording proxy in front of Synapse."""

from __future__ import annotations

from tests.fakes.matrix_proxy import MatrixProxy


def sent_to(proxy: MatrixProxy, room: str) -> list[dict[str, object]]:
    """What the bot sent into `room`, as it went over the wire."""
    return [
        c.params
        for c in proxy.calls
        if c.method == "send" and c.status == 200 and f"/rooms/{room}/" in c.path
    ]
