"""A chat's frames wait behind the typed messages being stored before them (D191), in order, and
another chat's frames do not."""

from __future__ import annotations

from typing import Any

from adapters.webchat.outbox import Outbox
from adapters.webchat.tabs import Tab


class Sockets:
    """What the outbox hands over, in order: (chat, text, whether a tab was left out)."""

    def __init__(self) -> None:
        self.got: list[tuple[str, str, bool]] = []

    async def __call__(self, peer: str, frame: dict[str, Any], skip: Tab | None) -> None:
        self.got.append((peer, frame["text"], skip is not None))


def said(text: str) -> dict[str, Any]:
    return {"type": "message", "text": text}


async def test_frames_wait_behind_the_messages_being_stored_before_them() -> None:
    sockets = Sockets()
    box = Outbox(sockets)
    await box.send("owner", said("before"))
    first, second = box.hold("owner"), box.hold("owner")
    await box.send("owner", said("reply"))
    await box.send("other", said("elsewhere"))  # another chat: at once
    await box.release("owner", second, said("second"), skip=None)
    assert sockets.got == [("owner", "before", False), ("other", "elsewhere", False)]
    await box.release("owner", first, said("first"), skip=None)
    await box.send("owner", said("after"))
    assert [text for _, text, _ in sockets.got[2:]] == ["first", "second", "reply", "after"]


async def test_a_message_kept_nowhere_releases_what_waited_behind_it() -> None:
    sockets = Sockets()
    box = Outbox(sockets)
    slot = box.hold("owner")
    await box.send("owner", said("reply"))
    await box.release("owner", slot, None, skip=None)
    assert sockets.got == [("owner", "reply", False)]
