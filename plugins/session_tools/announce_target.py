"""Where an agent-to-agent announce is posted (reference R3.6).

A group/channel key names its chat, so the target is parsed from the key without a lookup. Keys
are lowercased (D1) while platform ids such as Slack's `C0123` are not, so when the session's
stored route names the same chat, that route supplies the original-case `to` and the account.
Other sessions (DMs, main) use their stored route. Unlike the reference, the thread id is kept,
so the announce lands in the originating thread (issue #47971).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.api.sessions import DeliveryContext, session_target

if TYPE_CHECKING:
    from core.api.plugins import ToolEnv

_TARGET_KINDS = ("channel", "group", "user", "dm")


def _bare(to: str) -> str:
    kind, sep, rest = to.partition(":")
    return (rest if sep and kind.lower() in _TARGET_KINDS else to).strip().lower()


async def resolve_announce_target(env: ToolEnv, session_key: str) -> DeliveryContext | None:
    """The announce route of `session_key`, or None when it has no chat to post to."""
    parsed = env.keys.announce_target(session_key)
    entry = await env.store.get_session(session_key)
    stored = session_target(entry)
    traits = env.keys.channels.get(parsed.channel) if parsed is not None else None
    if parsed is not None and not (traits is not None and traits.prefer_session_lookup):
        if (
            stored is not None
            and stored.channel == parsed.channel
            and stored.to
            and _bare(stored.to) == _bare(parsed.to)
        ):
            return DeliveryContext(
                channel=parsed.channel,
                to=stored.to,
                account_id=stored.account_id,
                thread_id=parsed.thread_id,
            )
        return parsed.as_delivery_context()
    if stored is not None and stored.channel and stored.to:
        return stored
    return parsed.as_delivery_context() if parsed is not None else None
