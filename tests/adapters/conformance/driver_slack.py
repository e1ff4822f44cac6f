"""The Slack conformance driver: people on :class:`FakeSlack`, the real adapter (slack-bolt in
Socket Mode), built from config as the gateway builds it."""

from __future__ import annotations

import re
from typing import Any, ClassVar

from adapters.base import ChannelAdapter
from core.runtime import Runtime
from tests.adapters.conformance.drivers import (
    OWNER,
    STRANGER,
    FakeDriver,
    Feature,
    Reply,
    SendFailure,
    SentMedia,
    User,
    shown_by_name,
)
from tests.fakes.slack import FakeSlack


class SlackDriver(FakeDriver):
    """slack-bolt in Socket Mode against :class:`FakeSlack`."""

    platform = "slack"
    GROUP, THREAD_CHANNEL, THREAD_TS = "C0CHAN001", "C0CHAN002", "1700000000.000100"
    USERS: ClassVar[dict[User, tuple[str, str]]] = {
        OWNER: ("U0OWNER01", "D0DMOWNER"),
        STRANGER: ("U0USER001", "D0DMUSER"),
        "stranger2": ("U0USER002", "D0DMUSER2"),
        "stranger3": ("U0USER003", "D0DMUSER3"),
        "stranger4": ("U0USER004", "D0DMUSER4"),
    }

    def __init__(self, fake: FakeSlack) -> None:
        super().__init__()
        self.fake = self.sl = fake
        self.owner_id = self.USERS[OWNER][0]

    def config(self) -> dict[str, Any]:
        return {
            "channels": {
                "slack": {
                    "botToken": self.sl.bot_token,
                    "appToken": self.sl.app_token,
                    "apiBaseUrl": self.sl.base_url,
                    "owners": [self.owner_id],
                }
            }
        }

    def build(self, rt: Runtime) -> list[ChannelAdapter]:
        from adapters.slack.adapter import build

        section = rt.config.channels.slack
        assert section is not None
        return build(section, rt)

    def user_id(self, user: User) -> str:
        return self.USERS[user][0]

    @property
    def group_id(self) -> str:
        return self.GROUP

    async def _mention(
        self, channel: str, text: str, user: User, thread_ts: str | None = None
    ) -> str:
        """A channel mention arrives twice, as ``message`` and ``app_mention`` (same ts)."""
        said, ts = f"<@{self.sl.bot_user_id}> {text}", self.sl.next_ts()
        uid = self.USERS[user][0]
        await self.sl.push_event(
            self.sl.message_event(
                channel, said, channel_type="channel", user=uid, ts=ts, thread_ts=thread_ts
            )
        )
        await self.sl.push_event(
            self.sl.app_mention(channel, said, user=uid, ts=ts, thread_ts=thread_ts)
        )
        return said

    async def dm(self, text: str, *, user: User = OWNER) -> Reply:
        uid, dm = self.USERS[user]
        self.last = self.sl.event_callback(self.sl.message_event(dm, text, user=uid))
        await self.sl.push_event(self.last)
        return Reply(text, dm)

    async def redeliver_last(self) -> None:
        """The same envelope payload (same ``event_id``), as a retry (``retry_attempt`` 1)."""
        await self.sl.push_event(self.last, retry_attempt=1)

    async def edit_last(self, text: str) -> None:
        original = self.last["event"]
        changed = self.sl.message_event(
            original["channel"], "", user=original["user"], subtype="message_changed"
        )
        del changed["user"], changed["text"]
        changed["message"] = {
            **original,
            "text": text,
            "edited": {"user": original["user"], "ts": self.sl.next_ts()},
        }
        changed["previous_message"] = original
        await self.sl.push_event(changed)

    async def group(self, text: str, *, mentioned: bool, user: User = OWNER) -> Reply:
        if mentioned:
            return Reply(await self._mention(self.GROUP, text, user), self.GROUP)
        await self.sl.push_event(
            self.sl.message_event(
                self.GROUP, text, channel_type="channel", user=self.USERS[user][0]
            )
        )
        return Reply(text, self.GROUP)

    async def thread(self, text: str, *, user: User = OWNER) -> Reply:
        said = await self._mention(self.THREAD_CHANNEL, text, user, self.THREAD_TS)
        return Reply(said, self.THREAD_CHANNEL, self.THREAD_TS)

    async def own_message(self, text: str, *, other_bot: bool = False) -> None:
        user, bot = (
            ("U0OTHERBOT", "B0OTHER") if other_bot else (self.sl.bot_user_id, self.sl.bot_id)
        )
        await self.sl.push_event(
            self.sl.message_event(self.USERS[OWNER][1], text, user=user, bot_id=bot)
        )

    def fail_next_send(self, kind: SendFailure) -> None:
        if kind == "rate_limit":  # HTTP 429 with Retry-After: 0
            self.sl.fail_next("chat.postMessage", 429, retry_after=0.01)
        elif kind == "server_error":
            self.sl.fail_next("chat.postMessage", 503)
        else:  # Slack answers API errors with HTTP 200 and ok: false
            self.sl.fail_next("chat.postMessage", 200, {"error": "not_in_channel"})

    def replies(self) -> list[Reply]:
        # `posted` holds only accepted messages (an injected ok:false is HTTP 200 as well);
        # the text as people read it: Slack shows its three escapes as the characters
        return [
            Reply(slack_shown(str(m["text"])), str(m["channel"]), m.get("thread_ts"))
            for m in self.sl.posted
        ]

    media_out = True

    async def sent_media(self) -> list[SentMedia]:
        """Slack shows a shared file by its type (images inline, audio a player)."""
        return shown_by_name(self.sl.uploads)

    def address(self, reply: Reply) -> str:
        return f"channel:{reply.chat}"

    EDIT = "chat.update"
    unsupported: ClassVar[dict[str, str]] = {
        "typing": "Slack has no typing indicator for bots outside assistant threads"
    }

    def features(self, index: int) -> set[Feature]:
        raw = str(self.sl.posted[index]["text"])
        out: set[Feature] = set()
        for m in re.finditer(r"```\n(.*?)```", raw, re.S):
            out.add(("pre", slack_shown(m.group(1)).strip()))
        prose = re.sub(r"```\n.*?```", "", raw, flags=re.S)
        for m in re.finditer(r"`([^`\n]+)`", prose):
            out.add(("code", slack_shown(m.group(1))))
        prose = re.sub(r"`[^`\n]+`", "", prose)
        for m in re.finditer(r"<(https?://[^|>]+)\|([^>]+)>", prose):
            out.add(("link", slack_shown(m.group(2)), slack_shown(m.group(1))))
        for kind, mark in (("bold", "*"), ("italic", "_"), ("strikethrough", "~")):
            for m in re.finditer(
                rf"(?<!\w){re.escape(mark)}([^{mark}\n]+){re.escape(mark)}"
                rf"(?!\w)",
                prose,
            ):
                out.add((kind, slack_shown(m.group(1))))
        return out


def slack_shown(mrkdwn: str) -> str:
    return mrkdwn.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
