"""Telegram channel adapter on python-telegram-bot 22.8 (long polling, optional webhook).

PTB's ``Application`` is driven by hand (initialize → start → our confirming long poll /
start_webhook) instead of ``run_polling``, which would own the event loop and install signal
handlers inside the gateway. Every update goes through one ``TypeHandler`` that normalises it
and hands it to the router (:mod:`adapters.telegram.updates`); sending happens only in
:meth:`TelegramAdapter.send_text` and its kin (:mod:`adapters.telegram.sending`).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from urllib.parse import urlsplit

from telegram import Update
from telegram.error import InvalidToken, TelegramError
from telegram.ext import ApplicationBuilder, TypeHandler

from adapters.base import AdapterState, AdapterStatus, ChannelAdapter, InboundSink
from adapters.supervised import SupervisedAdapter
from adapters.telegram import media as tg_media
from adapters.telegram.controls import register_menu
from adapters.telegram.normalize import CHANNEL
from adapters.telegram.polling import ConfirmingPoller
from adapters.telegram.request import ObservedRequest
from adapters.telegram.sending import TEXT_LIMIT, TelegramSending, TgApp
from adapters.telegram.spec import TelegramAccountConfig, TelegramConfig
from adapters.telegram.updates import TelegramUpdates
from core.api.channels import (
    ChannelEnv,
    ChannelUnavailable,
    secret_value,
)

log = logging.getLogger(__name__)

DEFAULT_WEBHOOK_PORT = 8443
_ALLOWED_UPDATES = ["message", "callback_query"]  # button presses are commands (D121)


class TelegramAdapter(TelegramUpdates, TelegramSending, SupervisedAdapter):
    """One Telegram bot account."""

    channel = CHANNEL
    text_limit = TEXT_LIMIT
    media_limit = tg_media.FILE_LIMIT

    def __init__(
        self,
        config: TelegramAccountConfig,
        account_id: str = "default",
        env: ChannelEnv | None = None,
        *,
        poll_timeout: float = 10.0,
        request_timeout: float = 10.0,
        retry_initial: float = 1.0,
        retry_max: float = 60.0,
    ) -> None:
        self.account_id = account_id
        self.config = config
        self.poll_timeout = poll_timeout
        self.request_timeout = request_timeout
        self.retry_initial = retry_initial
        self.retry_max = retry_max
        self._app: TgApp | None = None
        self._sink: InboundSink | None = None
        self._token = ""
        self._bot_id: int | None = None
        self._bot_username: str | None = None
        self._menu_owners: set[str] = set()  # owners whose private menu is registered (D74)
        self._poller: ConfirmingPoller | None = None

    # ---- identity -------------------------------------------------------------------------

    @property
    def bot_username(self) -> str | None:
        return self._bot_username

    @property
    def mention_patterns(self) -> tuple[str, ...]:
        return (f"@{self._bot_username}",) if self._bot_username else ()

    # ---- lifecycle (D35: one supervisor; D36: polling only while holding the lease) -------

    async def start(self, sink: InboundSink) -> None:
        """Check the token with getMe, then poll; network trouble retries in the background."""
        if self._sup is not None:
            return
        token = secret_value(self.config.bot_token) if self.config.bot_token else ""
        if not token:
            self._failed = "no botToken configured"
            raise ChannelUnavailable(f"{self.name}: no botToken configured")
        if self.config.mode == "webhook" and not self.config.webhook_url:
            self._failed = "mode webhook needs webhookUrl"
            raise ChannelUnavailable(f"{self.name}: mode webhook needs webhookUrl")
        self._failed = None
        self._sink = sink
        self._token = token
        await self._supervise(leased=self.config.mode == "polling")  # a webhook: every process

    async def stop(self) -> None:
        await self._unsupervise()
        await self._teardown()

    def status(self) -> AdapterStatus:
        extra: dict[str, str | int] = {"mode": self.config.mode}
        if self._bot_username:
            extra["botUsername"] = self._bot_username
        return self._status(extra)

    @property
    def _state(self) -> AdapterState:
        return self.status().state

    def _build_app(self, token: str) -> TgApp:
        timeout = self.request_timeout
        builder = (
            ApplicationBuilder()
            .token(token)
            .connect_timeout(timeout)
            .read_timeout(timeout)
            .write_timeout(timeout)
            .pool_timeout(timeout)
            .get_updates_request(
                ObservedRequest(self._on_poll, connect_timeout=timeout, read_timeout=timeout)
            )
        )
        api = self.config.api_base_url
        if api:
            builder = builder.base_url(f"{api}/bot").base_file_url(f"{api}/file/bot")
        app = builder.build()
        app.add_handler(TypeHandler(Update, self._on_update))
        return app

    # The Connection the supervisor drives (core.engine.channels.supervisor).

    async def prepare(self) -> None:
        """getMe and PTB's start: what sending needs. Idempotent, so a retry resumes."""
        if self._app is None:
            self._app = self._build_app(self._token)
        app = self._app
        await app.initialize()  # getMe; a no-op once it succeeded
        self._bot_id = app.bot.id
        self._bot_username = app.bot.username
        if not app.running:
            await app.start()

    async def open(self) -> None:
        app = self._app
        assert app is not None and app.updater is not None
        if self.config.mode == "webhook":
            if not app.updater.running:
                await self._start_webhook(app)
        elif self._poller is None or not self._poller.running:
            await self._start_polling(app)
        log.info("%s connected as @%s (%s)", self.name, self._bot_username, self.config.mode)
        if self.command_menu is not None:  # D74: the connection holder registers the menu
            try:
                self._menu_owners = await register_menu(app.bot, self.command_menu)
            except TelegramError as exc:
                log.warning("%s: command menu not registered: %s", self.name, exc)

    async def wait_closed(self) -> None:
        poller = self._poller
        if self.config.mode == "webhook" or poller is None or poller.task is None:
            await asyncio.Event().wait()  # PTB's webhook server runs until closed
            return
        await poller.task

    async def close(self) -> None:
        app, poller = self._app, self._poller
        if poller is not None:
            await poller.stop()
        if (
            self.config.mode == "webhook"
            and app is not None
            and app.updater is not None
            and app.updater.running
        ):
            await app.updater.stop()

    def fatal_reason(self, exc: BaseException) -> str | None:
        return "bot token rejected by Telegram" if isinstance(exc, InvalidToken) else None

    async def _start_polling(self, app: TgApp) -> None:
        """Our own long poll (not PTB's updater): an update is confirmed once stored (D16)."""
        await app.bot.delete_webhook()  # getUpdates answers 409 while a webhook is set
        self.last_receive_ms = int(time.time() * 1000)
        if self._poller is None:
            self._poller = ConfirmingPoller(
                app.bot,
                self._route,
                timeout=self.poll_timeout,
                read_timeout=self.poll_timeout + self.request_timeout,
                allowed_updates=self._allowed_updates(),
                retry_initial=self.retry_initial,
                retry_max=self.retry_max,
                on_error=self._on_poll_error,
                on_fatal=lambda: None,
                name=f"telegram-{self.account_id}",
            )
        self._poller.start()

    def _allowed_updates(self) -> list[str]:
        return (
            [*_ALLOWED_UPDATES, "edited_message"]
            if self.config.edits_start_turn
            else _ALLOWED_UPDATES
        )

    async def restart_connection(self, reason: str) -> None:
        """Watchdog (D16): a long poll hangs without an error; stop polling and poll anew.

        Stopping cancels the held request; unconfirmed updates come again with the next poll
        and the router drops any that were already handled.
        """
        if self._sup is None or self.config.mode == "webhook":
            return
        await self._sup.restart(reason)

    async def _start_webhook(self, app: TgApp) -> None:
        cfg = self.config
        assert cfg.webhook_url is not None and app.updater is not None
        secret = secret_value(cfg.webhook_secret) if cfg.webhook_secret else ""
        # Without a configured secret, anyone who finds the URL could inject updates.
        secret = secret or secrets.token_urlsafe(32)
        path = urlsplit(cfg.webhook_url).path.strip("/") or "telegram"
        await app.updater.start_webhook(
            listen=cfg.webhook_listen,
            port=cfg.webhook_port or DEFAULT_WEBHOOK_PORT,
            url_path=path,
            webhook_url=cfg.webhook_url,
            secret_token=secret,
            allowed_updates=self._allowed_updates(),
        )

    async def _teardown(self) -> None:
        app, self._app = self._app, None
        poller, self._poller = self._poller, None
        if poller is not None:
            await poller.stop()
        if app is None:
            return
        try:
            if app.updater is not None and app.updater.running:
                await app.updater.stop()
            if app.running:
                await app.stop()
            await app.shutdown()
        except Exception:
            log.exception("%s: error while stopping", self.name)
        finally:
            await app.bot.shutdown()  # closes HTTP clients even when initialize() failed

    # ---- polling health -------------------------------------------------------------------

    def _on_poll(self, status: int | None, detail: str | None) -> None:
        if status is not None and 200 <= status <= 299:
            self.last_receive_ms = int(time.time() * 1000)
        sup = self._sup
        if sup is None:
            return
        if status is not None and 200 <= status <= 299:
            sup.note("connected")
        elif status in (401, 404):
            sup.note("failed", "bot token rejected by Telegram")
        elif status == 409:
            sup.note("retrying", "conflict: another getUpdates consumer or a webhook is set")
        else:
            sup.note("retrying", f"getUpdates failed: {detail}")

    def _on_poll_error(self, exc: BaseException) -> None:
        log.warning("%s: polling error: %s", self.name, _describe(exc))


def _describe(exc: BaseException) -> str:
    """Short error text without the token (PTB's InvalidToken message includes it)."""
    if isinstance(exc, InvalidToken):
        return "bot token rejected by Telegram"
    text = exc.message if isinstance(exc, TelegramError) else str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def build(section: TelegramConfig, runtime: object = None) -> list[ChannelAdapter]:
    """One adapter per configured account (``default`` = the section's top-level fields)."""
    return [TelegramAdapter(account, account_id) for account_id, account in section.iter_accounts()]
