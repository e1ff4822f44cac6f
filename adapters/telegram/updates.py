"""Telegram updates in: webhook and long-poll updates, edits and button presses handed to the
router, and the owners' command menu registered once their chat exists (D74)."""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING

from telegram import Update
from telegram.error import TelegramError
from telegram.ext import ContextTypes

from adapters.base import ChannelAdapter, InboundSink
from adapters.telegram.controls import normalize_press, register_owner
from adapters.telegram.normalize import normalize_message
from adapters.telegram.sending import TgApp
from adapters.telegram.spec import TelegramAccountConfig

log = logging.getLogger("adapters.telegram.adapter")  # the adapter's logger, as before the split


class TelegramUpdates(ChannelAdapter):
    """Inbound half of :class:`adapters.telegram.adapter.TelegramAdapter` (a mixin: its state
    is set in the adapter's ``__init__``)."""

    config: TelegramAccountConfig
    _app: TgApp | None
    _sink: InboundSink | None
    _bot_id: int | None
    _bot_username: str | None
    _menu_owners: set[str]

    if TYPE_CHECKING:

        @property
        def name(self) -> str: ...

    async def _on_update(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """Webhook mode (PTB's updater); long polling calls :meth:`_route` itself."""
        try:
            await self._route(update)
        except Exception:
            log.exception("%s: routing update %s failed", self.name, update.update_id)

    async def _route(self, update: Update) -> None:
        """Hand one update to the router; raises when it could not be stored."""
        if update.callback_query is not None:
            await self._press(update)
            return
        message, edited = update.message, False
        if (
            message is None and update.edited_message is not None and self.config.edits_start_turn
        ):  # edits are no turn unless configured (D16)
            message, edited = update.edited_message, True
        if message is None or self._sink is None:
            return
        inbound = normalize_message(
            message,
            account_id=self.account_id,
            bot_id=self._bot_id,
            bot_username=self._bot_username,
        )
        if inbound is None:
            return
        menu = self.command_menu
        if menu is not None and inbound.sender_id in menu.owner_ids and self._app is not None:
            if inbound.sender_id not in self._menu_owners:  # D74: their chat exists now
                if await register_owner(self._app.bot, menu, inbound.sender_id):
                    self._menu_owners.add(inbound.sender_id)
        # D16: either identity seen before means Telegram is redelivering (unconfirmed offset)
        key = f"msg:{message.chat_id}:{message.message_id}"
        if edited:  # each edit is its own message
            stamp = int(message.edit_date.timestamp()) if message.edit_date else update.update_id
            key = f"edit:{message.chat_id}:{message.message_id}:{stamp}"
        inbound = inbound.model_copy(update={"identities": (f"update:{update.update_id}", key)})
        await self._sink(inbound)

    async def _press(self, update: Update) -> None:
        """A button press (D121): acknowledged on Telegram (not a message), then routed."""
        query = update.callback_query
        assert query is not None
        with contextlib.suppress(TelegramError):  # the spinner stops; the press still counts
            await query.answer()
        inbound = normalize_press(query, account_id=self.account_id)
        if inbound is not None and self._sink is not None:
            await self._sink(inbound)
