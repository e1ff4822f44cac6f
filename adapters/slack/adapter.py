"""Slack through slack-bolt's AsyncApp: Socket Mode by default, the Events API optionally.

Bolt does transport, signature checks and acks; this adapter turns accepted events into
:class:`InboundMessage` (see :mod:`adapters.slack.normalize` and :mod:`adapters.slack.events`)
and sends with ``chat.postMessage`` (:mod:`adapters.slack.sending`). Events are queued and
handed to the router one at a time, so Bolt acks at once and messages of a chat keep their order.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.base import AdapterState, AdapterStatus, ChannelAdapter, InboundSink
from adapters.slack.events import SlackEvents
from adapters.slack.normalize import AUTH_ERRORS, CHANNEL, BotIdentity, SeenEvents
from adapters.slack.sending import SlackSending
from adapters.slack.spec import SlackAccountConfig, SlackConfig
from adapters.supervised import SupervisedAdapter
from core.api.channels import (
    ChannelEnv,
    ChannelUnavailable,
    ChatType,
    secret_value,
)

log = logging.getLogger(__name__)

TEXT_LIMIT = 40_000


class _AuthRejected(Exception):
    """The platform refused a token: a configuration error, not worth retrying."""


class SlackAdapter(SlackEvents, SlackSending, SupervisedAdapter):
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
        extra: dict[str, str | int] = {"mode": self.mode}
        if self._bot is not None:
            extra["botUserId"] = self._bot.user_id
        status = self._status(extra)
        if status.state == "connected" and self._handler is not None:
            session = self._handler.client.current_session
            if session is None or session.closed:
                status.state, status.detail = "retrying", "socket mode reconnecting"
        return status

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
        await self._supervise(leased=self.mode == "socket")

    async def stop(self) -> None:
        await self._unsupervise()
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


def build(section: SlackConfig, runtime: object = None) -> list[ChannelAdapter]:
    """One adapter per configured account (``default`` = the section's top-level fields)."""
    return [SlackAdapter(account, account_id) for account_id, account in section.iter_accounts()]
