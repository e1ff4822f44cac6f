"""Slack through slack-bolt's AsyncApp: Socket Mode by default, the Events API optionally.

Bolt does transport, signature checks and acks; this adapter turns accepted events into
:class:`InboundMessage` (see :mod:`adapters.slack.normalize`) and sends with
``chat.postMessage``. Events are queued and handed to the router one at a time, so Bolt acks at
once and messages of a chat keep their order.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.base import (
    AdapterState,
    AdapterStatus,
    ChannelAdapter,
    ChunkRef,
    InboundSink,
    MediaItem,
    SendReceipt,
)
from adapters.previews import EditablePreviews
from adapters.slack.controls import button_blocks, press_inbound, slash_inbound
from adapters.slack.normalize import (
    AUTH_ERRORS,
    CHANNEL,
    BotIdentity,
    SeenEvents,
    channel_of_target,
    chat_type_of,
    ignore_reason,
    map_api_error,
    sender_name_of,
    to_inbound,
)
from adapters.slack.render import TEXT_LIMIT as CHUNK_LIMIT
from adapters.slack.render import render_chunks
from adapters.slack.spec import SlackAccountConfig, SlackConfig
from core.api.channels import (
    Attachment,
    Backoff,
    Button,
    ChannelEnv,
    ChannelUnavailable,
    ChatType,
    ConnectionSupervisor,
    DeliveryContext,
    secret_value,
)

log = logging.getLogger(__name__)

TEXT_LIMIT = 40_000
#: The ack waits until the event is stored. Past Slack's 3 s Slack retries, and the retry is
#: recognised as a redelivery; acking *before* storing would let a crash lose the message.
ACK_WITHIN = 30.0
_NETWORK_ERRORS = (aiohttp.ClientError, SlackClientError, OSError, TimeoutError)


class _AuthRejected(Exception):
    """The platform refused a token: a configuration error, not worth retrying."""


_SEEN = "👀"
_EMOJI = {"👀": "eyes", "✅": "white_check_mark", "❌": "x"}


class SlackAdapter(EditablePreviews):
    """One Slack app (bot token + app token or signing secret) as a channel account."""

    channel = CHANNEL
    text_limit = TEXT_LIMIT
    reconcile = "lookup"  # D16: chunks carry their delivery id in message metadata
    chunk_refs = True
    media_limit = 1024 * 1024 * 1024  # Slack takes files up to 1 GB (D150)
    media_reconcile = "resend"  # an upload has no metadata to be found by (D78)

    def __init__(
        self,
        config: SlackAccountConfig,
        account_id: str = "default",
        env: ChannelEnv | None = None,
        *,
        timeout: float = 10.0,
        connect_timeout: float = 15.0,
        retry_initial: float = 1.0,
        retry_max: float = 60.0,
        ping_interval: float = 10.0,
    ) -> None:
        self.config = config
        self.account_id = account_id
        self.mode = config.mode
        self._timeout = timeout
        self._connect_timeout = connect_timeout
        self.retry_initial, self.retry_max = retry_initial, retry_max  # D35's knob names
        self._ping_interval = ping_interval
        self._sup: ConnectionSupervisor | None = None
        self._failed: str | None = None  # why start refused, shown while stopped
        self._sink: InboundSink | None = None
        self._client: AsyncWebClient | None = None
        self._app: AsyncApp | None = None
        self._handler: AsyncSocketModeHandler | None = None
        self._bot: BotIdentity | None = None
        self._seen = SeenEvents()
        self._queue: asyncio.Queue[tuple[dict[str, Any], asyncio.Future[None]]] = asyncio.Queue()
        self._tasks: set[asyncio.Task[None]] = set()
        self._names: dict[str, str | None] = {}
        self._titles: dict[str, str] = {}
        self._kinds: dict[str, ChatType] = {}
        self._info_tried: set[str] = set()
        self._frame_ms: int | None = None

    # ---- identity -------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return f"{CHANNEL} account {self.account_id}"

    @property
    def mention_patterns(self) -> tuple[str, ...]:
        return (f"<@{self._bot.user_id}>",) if self._bot else ()

    @property
    def bot_username(self) -> str | None:
        return self._bot.user_name if self._bot else None

    @property
    def _state(self) -> AdapterState:
        sup = self._sup
        return sup.state if sup is not None else "failed" if self._failed else "stopped"

    def status(self) -> AdapterStatus:
        state = self._state
        detail = self._sup.detail if self._sup is not None else self._failed
        if state == "connected" and self._handler is not None:
            session = self._handler.client.current_session
            if session is None or session.closed:
                state, detail = "retrying", "socket mode reconnecting"
        extra: dict[str, str | int] = {"mode": self.mode}
        if self._bot is not None:
            extra["botUserId"] = self._bot.user_id
        if self._sup is not None and self._sup.holder:
            extra["holder"] = self._sup.holder
        return AdapterStatus(CHANNEL, self.account_id, state, detail, extra)

    # ---- lifecycle ------------------------------------------------------------------------

    def _token(self, field: str, label: str) -> str:
        value = secret_value(getattr(self.config, field))
        if not value:
            raise ChannelUnavailable(f"{self.name}: {label} is not configured")
        return value

    async def start(self, sink: InboundSink) -> None:
        """Check the tokens, then connect; transient failures retry in the background (D35).
        Socket Mode receives only while this process holds the connection's lease (D36)."""
        self._sink = sink
        self._failed = None
        try:
            bot_token = self._token("bot_token", "botToken")
            if self.mode == "socket":
                self._token("app_token", "appToken")
            else:
                self._token("signing_secret", "signingSecret")
        except ChannelUnavailable as exc:
            self._failed = str(exc)
            raise
        self._client = self._make_client(bot_token)
        self._app = self._make_app(self._client)
        self._spawn(self._drain())
        self._sup = ConnectionSupervisor(
            self.name,
            self,
            backoff=Backoff(self.retry_initial, self.retry_max),
            lease=self.connection_lease if self.mode == "socket" else None,
            lease_name=f"channel:{CHANNEL}:{self.account_id}",
        )
        try:
            await self._sup.start()
        except ChannelUnavailable:
            await self.stop()
            raise

    async def stop(self) -> None:
        sup, self._sup = self._sup, None
        if sup is not None:
            await sup.stop()
            if sup.state == "failed":
                self._failed = sup.detail
        await self._shutdown()

    async def _shutdown(self) -> None:
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._close_handler()

    async def _close_handler(self) -> None:
        handler, self._handler = self._handler, None
        if handler is not None:
            with contextlib.suppress(Exception):
                await handler.close_async()  # type: ignore[no-untyped-call]

    def _make_client(self, token: str) -> AsyncWebClient:
        base = self.config.api_base_url
        if base:  # a fake or proxy: no hidden SDK retries, they would mask its failures
            return AsyncWebClient(
                token=token, base_url=f"{base}/api/", timeout=int(self._timeout), retry_handlers=[]
            )
        return AsyncWebClient(token=token, timeout=int(self._timeout))

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

    # The Connection the supervisor drives (core.engine.channels.supervisor).

    async def prepare(self) -> None:
        """auth.test once (raises _AuthRejected on a bad bot token): what sending needs."""
        assert self._client is not None
        if self._bot is not None:
            return
        try:
            auth = await self._client.auth_test()
        except SlackApiError as exc:
            self._raise_if_auth(exc, "botToken")
            raise
        self._bot = BotIdentity(
            user_id=str(auth["user_id"]),
            bot_id=auth.get("bot_id"),
            user_name=auth.get("user"),
            team_id=auth.get("team_id"),
        )

    async def open(self) -> None:
        """Socket Mode: open the websocket. HTTP mode receives on the gateway's server."""
        if self.mode == "socket":
            await self._connect_socket()
        assert self._bot is not None
        log.info("%s connected as %s (%s mode)", self.name, self._bot.user_id, self.mode)

    async def wait_closed(self) -> None:
        await asyncio.Event().wait()  # the SDK reconnects its socket by itself

    async def close(self) -> None:
        await self._close_handler()

    def fatal_reason(self, exc: BaseException) -> str | None:
        return str(exc) if isinstance(exc, _AuthRejected) else None

    async def _connect_socket(self) -> None:
        assert self._client is not None and self._app is not None
        app_token = self._token("app_token", "appToken")
        try:  # checked here: the SDK's own connect loop retries bad tokens forever
            opened = await self._client.apps_connections_open(app_token=app_token)
        except SlackApiError as exc:
            self._raise_if_auth(exc, "appToken")
            raise
        await self._close_handler()
        handler = AsyncSocketModeHandler(
            self._app, app_token=app_token, ping_interval=self._ping_interval
        )
        handler.client.wss_uri = str(opened["url"])
        handler.client.on_message_listeners.append(self._on_frame)
        self._frame_ms = int(time.time() * 1000)
        self._handler = handler
        try:
            await asyncio.wait_for(
                handler.connect_async(),  # type: ignore[no-untyped-call]
                self._connect_timeout,
            )
        except BaseException:
            await self._close_handler()
            raise

    async def _on_frame(self, message: Any) -> None:
        self._frame_ms = int(time.time() * 1000)

    @property
    def last_receive_ms(self) -> int | None:
        """Socket frames or the SDK's ping-pong, whichever came last."""
        pong = self._handler.client.last_ping_pong_time if self._handler is not None else None
        pong_ms = int(pong * 1000) if pong else None
        return max(filter(None, (self._frame_ms, pong_ms)), default=None)

    @last_receive_ms.setter
    def last_receive_ms(self, value: int | None) -> None:
        self._frame_ms = value

    async def restart_connection(self, reason: str) -> None:
        """Watchdog (D16): the socket is open but silent; open a new one."""
        if self.mode != "socket" or self._sup is None or self._state != "connected":
            return
        await self._sup.restart(reason)

    def _raise_if_auth(self, exc: SlackApiError, token_name: str) -> None:
        code = exc.response.get("error") if isinstance(exc.response.data, dict) else None
        if code in AUTH_ERRORS or exc.response.status_code == 401:
            raise _AuthRejected(f"Slack rejected the {token_name} ({code})") from exc

    def _spawn(self, coro: Any) -> None:
        task: asyncio.Task[None] = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ---- HTTP Events API ------------------------------------------------------------------

    def mount(self, app: web.Application) -> None:
        """Serve the Events API on the gateway's own server (HTTP mode only)."""
        if self.mode == "http":
            app.router.add_post(self.config.events_path, self._http_event)

    async def _http_event(self, request: web.Request) -> web.Response:
        if self._app is None:
            return web.Response(status=503, text="slack adapter not started")
        bolt_response = await self._app.async_dispatch(await to_bolt_request(request))
        return await to_aiohttp_response(bolt_response)

    # ---- inbound --------------------------------------------------------------------------

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
            except (SlackApiError, *_NETWORK_ERRORS) as exc:
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
            except (SlackApiError, *_NETWORK_ERRORS) as exc:
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

    # ---- outbound -------------------------------------------------------------------------

    def chunks(self, text: str) -> list[str]:
        return render_chunks(text, CHUNK_LIMIT)  # mrkdwn already: send_text sends as is

    async def fetch_attachment(self, attachment: Attachment) -> bytes | None:
        """A shared file's bytes from its ``url_private``, with the bot token.

        The token goes only to Slack's file host (or the configured API host, for a fake):
        never to a URL merely because an event named it.
        """
        url, client = attachment.file_id or "", self._client
        allowed = {"files.slack.com"}
        if self.config.api_base_url:
            allowed.add(urlsplit(self.config.api_base_url).netloc)
        if (
            client is None
            or not client.token
            or urlsplit(url).scheme not in ("https", "http")
            or urlsplit(url).netloc not in allowed
        ):
            return None
        headers = {"Authorization": f"Bearer {client.token}"}
        async with (
            aiohttp.ClientSession() as http,
            http.get(
                url, headers=headers, timeout=aiohttp.ClientTimeout(total=self._timeout)
            ) as resp,
        ):
            if resp.status != 200:
                raise ChannelUnavailable(f"{self.name}: file download failed ({resp.status})")
            return await resp.read()

    def _where(self, target: DeliveryContext) -> tuple[AsyncWebClient, str]:
        client = self._client
        if client is None or self._state not in ("connected", "retrying", "standby"):
            raise ChannelUnavailable(f"{self.name} is not connected")
        channel = channel_of_target(target.to or "")
        if not channel:
            raise ChannelUnavailable(f"{self.name}: no target chat")
        return client, channel

    async def send_text(
        self, target: DeliveryContext, text: str, *, ref: ChunkRef | None = None
    ) -> SendReceipt:
        """Send one chunk; with `ref`, its delivery id rides along as message metadata (D16)
        so that :meth:`find_chunk` can tell after a crash whether it was posted."""
        client, channel = self._where(target)
        thread_ts = str(target.thread_id) if target.thread_id is not None else None
        try:
            resp = await client.chat_postMessage(
                channel=channel,
                text=text,
                thread_ts=thread_ts,
                metadata=_metadata(ref) if ref is not None else None,
            )
        except SlackApiError as exc:
            raise map_api_error(exc, where=f"{self.name} chat.postMessage {channel}") from exc
        except _NETWORK_ERRORS as exc:
            raise ChannelUnavailable(f"{self.name}: network error: {exc}") from exc
        return SendReceipt(message_id=str(resp.get("ts")) if resp.get("ts") else None)

    async def send_media(
        self, target: DeliveryContext, media: MediaItem, ref: ChunkRef
    ) -> SendReceipt:
        """An uploaded file shared in the chat with its caption (files_upload_v2, D78): Slack
        shows images inline and plays audio. An upload carries no metadata to look it up by,
        so an in-doubt item is resent once after a crash and marked (`media_reconcile`)."""
        client, channel = self._where(target)
        thread_ts = str(target.thread_id) if target.thread_id is not None else None
        try:
            resp = await client.files_upload_v2(
                content=media.data,
                filename=media.name,
                title=media.name,
                channel=channel,
                initial_comment=media.caption or None,
                thread_ts=thread_ts,
            )
        except SlackApiError as exc:
            raise map_api_error(exc, where=f"{self.name} files_upload_v2 {channel}") from exc
        except _NETWORK_ERRORS as exc:
            raise ChannelUnavailable(f"{self.name}: network error: {exc}") from exc
        uploaded = resp.get("file")
        file_id = uploaded.get("id") if isinstance(uploaded, dict) else None
        return SendReceipt(message_id=str(file_id) if file_id else None)

    async def react(self, target: DeliveryContext, message_id: str, emoji: str | None) -> None:
        """D74: 👀 while the turn runs, replaced by ✅ or ❌ (Slack names its emoji)."""
        client, channel = self._where(target)
        try:
            if emoji != _SEEN:  # the end of the turn: the 👀 goes
                with contextlib.suppress(SlackApiError):
                    await client.reactions_remove(
                        channel=channel, timestamp=message_id, name=_EMOJI[_SEEN]
                    )
            if emoji:
                await client.reactions_add(
                    channel=channel, timestamp=message_id, name=_EMOJI.get(emoji, emoji)
                )
        except SlackApiError as exc:
            raise map_api_error(exc, where=f"{self.name} reactions {channel}") from exc
        except _NETWORK_ERRORS as exc:
            raise ChannelUnavailable(f"{self.name}: network error: {exc}") from exc

    def dm_target(self, user_id: str) -> str:
        return f"user:{user_id}"  # a DM with the user (opened by the platform on first send)

    async def send_buttons(
        self, target: DeliveryContext, text: str, buttons: tuple[Button, ...]
    ) -> SendReceipt:
        """The text as Block Kit with a row of buttons (D72); `text` stays the fallback."""
        client, channel = self._where(target)
        thread_ts = str(target.thread_id) if target.thread_id is not None else None
        try:
            resp = await client.chat_postMessage(
                channel=channel, text=text, thread_ts=thread_ts, blocks=button_blocks(text, buttons)
            )
        except SlackApiError as exc:
            raise map_api_error(exc, where=f"{self.name} chat.postMessage {channel}") from exc
        except _NETWORK_ERRORS as exc:
            raise ChannelUnavailable(f"{self.name}: network error: {exc}") from exc
        return SendReceipt(message_id=str(resp.get("ts")) if resp.get("ts") else None)

    async def edit_text(self, target: DeliveryContext, message_id: str, text: str) -> None:
        """A decided question: new text, its blocks (and so its buttons) gone."""
        client, channel = self._where(target)
        try:
            await client.chat_update(channel=channel, ts=message_id, text=text, blocks=[])
        except SlackApiError as exc:
            raise map_api_error(exc, where=f"{self.name} chat.update {channel}") from exc
        except _NETWORK_ERRORS as exc:
            raise ChannelUnavailable(f"{self.name}: network error: {exc}") from exc

    async def _post_preview(self, target: DeliveryContext, text: str) -> str:
        receipt = await self.send_text(target, _preview(text))
        return str(receipt.message_id)

    async def _edit(
        self, target: DeliveryContext, message_id: str, text: str, *, final: bool
    ) -> None:
        client, channel = self._where(target)
        try:
            await client.chat_update(
                channel=channel, ts=message_id, text=text if final else _preview(text)
            )
        except SlackApiError as exc:
            raise map_api_error(exc, where=f"{self.name} chat.update {channel}") from exc
        except _NETWORK_ERRORS as exc:
            raise ChannelUnavailable(f"{self.name}: network error: {exc}") from exc

    async def find_chunk(self, target: DeliveryContext, ref: ChunkRef) -> SendReceipt | None:
        """Look for the chunk's message (its metadata) among the chat's recent messages."""
        client = self._client
        channel = channel_of_target(target.to or "")
        if client is None or not channel:
            return None
        try:
            if target.thread_id is not None:
                resp = await client.conversations_replies(
                    channel=channel, ts=str(target.thread_id), include_all_metadata=True, limit=200
                )
            else:
                resp = await client.conversations_history(
                    channel=channel, include_all_metadata=True, limit=200
                )
        except (SlackApiError, *_NETWORK_ERRORS) as exc:
            log.warning("%s: looking up delivery %s failed: %s", self.name, ref.delivery_id, exc)
            return None
        want = _metadata(ref)
        for message in resp.get("messages") or []:
            meta = message.get("metadata") or {}
            if (
                meta.get("event_type") == want["event_type"]
                and meta.get("event_payload") == want["event_payload"]
            ):
                return SendReceipt(message_id=str(message.get("ts")))
        return None


def _preview(md: str) -> str:
    chunks = render_chunks(md, CHUNK_LIMIT)
    return chunks[0] if chunks else "…"


def _metadata(ref: ChunkRef) -> dict[str, Any]:
    return {
        "event_type": "crosstalk_delivery",
        "event_payload": {"delivery": str(ref.delivery_id), "chunk": ref.index},
    }


def build(section: SlackConfig, runtime: object = None) -> list[ChannelAdapter]:
    """One adapter per configured account (``default`` = the section's top-level fields)."""
    return [SlackAdapter(account, account_id) for account_id, account in section.iter_accounts()]
