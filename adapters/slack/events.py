"""Slack events in: the Bolt app's listeners, then filtering, de-duplication and the queue that
hands accepted messages to the router one at a time (the ack waits until each is stored)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from typing import TYPE_CHECKING, Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.base import InboundSink
from adapters.slack.controls import press_inbound, slash_inbound
from adapters.slack.normalize import (
    NETWORK_ERRORS,
    BotIdentity,
    SeenEvents,
    chat_type_of,
    ignore_reason,
    sender_name_of,
    to_inbound,
)
from adapters.slack.spec import SlackAccountConfig
from core.api.channels import ChatType, secret_value

log = logging.getLogger("adapters.slack.adapter")  # the adapter's logger, as before the split

#: The ack waits until the event is stored. Past Slack's 3 s Slack retries, and the retry is
#: recognised as a redelivery; acking *before* storing would let a crash lose the message.
ACK_WITHIN = 30.0


class SlackEvents:
    """Inbound half of :class:`adapters.slack.adapter.SlackAdapter` (a mixin: its state is set
    in the adapter's ``__init__``)."""

    account_id: str
    config: SlackAccountConfig
    mode: str
    _sink: InboundSink | None
    _client: AsyncWebClient | None
    _bot: BotIdentity | None
    _seen: SeenEvents
    _queue: asyncio.Queue[tuple[dict[str, Any], asyncio.Future[None]]]
    _names: dict[str, str | None]
    _titles: dict[str, str]
    _kinds: dict[str, ChatType]
    _info_tried: set[str]

    if TYPE_CHECKING:

        @property
        def name(self) -> str: ...

    def _make_app(self, client: AsyncWebClient) -> AsyncApp:
        http = self.mode == "http"
        app = AsyncApp(
            client=client,
            logger=log.getChild("bolt"),
            signing_secret=secret_value(self.config.signing_secret) if http else "",
            request_verification_enabled=http,
            attaching_conversation_kwargs_enabled=False,
            process_before_response=True,
        )  # ack once stored (D16)

        async def on_event(event: dict[str, Any], body: dict[str, Any]) -> None:
            """Slack forgets an event once it is acked, so the ack waits until the router has
            stored it (or found it a redelivery)."""
            stored = self._accept(event, body.get("event_id"))
            if stored is not None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(stored), ACK_WITHIN)

        async def on_action(ack: Any, body: dict[str, Any]) -> None:
            """A Block Kit press (D121): acknowledged, then routed as its button's command."""
            await ack()
            channel_id = str((body.get("channel") or {}).get("id") or "")
            kind = chat_type_of({"channel": channel_id}, self._kinds.get(channel_id))
            inbound = press_inbound(body, account_id=self.account_id, chat_type=kind)
            if inbound is not None and self._sink is not None:
                await self._sink(inbound)

        app.event("message")(on_event)
        app.event("app_mention")(on_event)

        async def on_command(ack: Any, body: dict[str, Any]) -> None:
            """A slash command from the manifest (D74): acknowledged (nothing shown), then
            routed as the command typed; the answer comes through the gate."""
            await ack()
            inbound = slash_inbound(body, account_id=self.account_id)
            if inbound is not None and self._sink is not None:
                await self._sink(inbound)

        app.action(re.compile(r"^crosstalk_"))(on_action)
        app.command(re.compile(r"^/"))(on_command)
        return app

    def _accept(
        self, event: dict[str, Any], event_id: str | None = None
    ) -> asyncio.Future[None] | None:
        """Filter and de-duplicate synchronously (no await), so a mention pair cannot race.

        Returns a future that is done once the message has been handed to the router."""
        if (
            event.get("subtype") == "message_changed"
            and self.config.edits_start_turn
            and isinstance(event.get("message"), dict)
        ):  # edits are no turn unless configured
            inner = event["message"]
            edit_ts = (inner.get("edited") or {}).get("ts") or event.get("event_ts")
            event = {
                **inner,
                "channel": event.get("channel"),
                "channel_type": event.get("channel_type"),
                "_edit": str(edit_ts),
            }
            event.pop("subtype", None)
        reason = ignore_reason(event, self._bot)
        if reason is not None:
            log.debug("%s: ignoring event (%s)", self.name, reason)
            return None
        if event.get("channel_type"):  # app_mention lacks it: remember it for the channel
            self._kinds[str(event["channel"])] = chat_type_of(event)
        if not event.get("_edit") and not self._seen.first_time(
            str(event["channel"]), str(event["ts"]), event_id
        ):
            return None
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait(({**event, "_event_id": event_id} if event_id else event, done))
        return done

    async def _drain(self) -> None:
        while True:
            event, done = await self._queue.get()
            try:
                await self._deliver(event)
            except Exception as exc:
                log.exception("%s: inbound message failed", self.name)
                if not done.done():
                    done.set_exception(exc)  # no ack: Slack retries
                    done.exception()  # retrieved here too, in case no listener waits
            if not done.done():
                done.set_result(None)

    async def _deliver(self, event: dict[str, Any]) -> None:
        channel_id = str(event["channel"])
        title, known = await self._chat_info(channel_id, event)
        chat_type = chat_type_of(event, known)
        sender = sender_name_of(event) or await self._user_name(str(event["user"]))
        msg = to_inbound(
            event,
            account_id=self.account_id,
            bot=self._bot,
            chat_type=chat_type,
            sender_name=sender,
            chat_title=None if chat_type == "direct" else title,
            event_id=event.get("_event_id"),
        )
        if event.get("_edit"):  # each edit is its own message
            msg = msg.model_copy(
                update={
                    "identities": (
                        *(f"event:{e}" for e in [event.get("_event_id")] if e),
                        f"edit:{channel_id}:{event['ts']}:{event['_edit']}",
                    )
                }
            )
        if self._sink is not None:
            await self._sink(msg)

    async def _user_name(self, user_id: str) -> str | None:
        """Best-effort display name (needs ``users:read``); remembered, failures included."""
        if user_id not in self._names and self._client is not None:
            name: str | None = None
            try:
                user = (await self._client.users_info(user=user_id)).get("user") or {}
                profile = user.get("profile") or {}
                name = (
                    profile.get("display_name")
                    or profile.get("real_name")
                    or user.get("real_name")
                    or user.get("name")
                    or None
                )
            except (SlackApiError, *NETWORK_ERRORS) as exc:
                log.debug("%s: users.info %s failed: %s", self.name, user_id, exc)
            self._names[user_id] = name
        return self._names.get(user_id)

    async def _chat_info(
        self, channel_id: str, event: dict[str, Any]
    ) -> tuple[str | None, ChatType | None]:
        """Channel name and kind, asked once per channel (best effort, ``channels:read``)."""
        if event.get("channel_type") == "im":
            return None, "direct"
        if channel_id not in self._info_tried and self._client is not None:
            self._info_tried.add(channel_id)
            try:
                info = (await self._client.conversations_info(channel=channel_id)).get(
                    "channel"
                ) or {}
            except (SlackApiError, *NETWORK_ERRORS) as exc:
                log.debug("%s: conversations.info %s failed: %s", self.name, channel_id, exc)
                info = {}
            if info.get("name"):
                self._titles[channel_id] = str(info["name"])
            if info and channel_id not in self._kinds:
                self._kinds[channel_id] = (
                    "direct"
                    if info.get("is_im")
                    else "group"
                    if info.get("is_mpim") or info.get("is_private")
                    else "channel"
                )
        return self._titles.get(channel_id), self._kinds.get(channel_id)
