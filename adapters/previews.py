"""Streaming previews as one platform message that is edited in place.

The first partial text of a run is posted as a new message; later ones edit it; the final
reply's first chunk is the last edit (so the chat ends with exactly the reply, not a preview
plus a copy of it). Platforms differ only in how to post and edit, which each adapter supplies.
Pacing (at most about one edit a second) is decided by core.engine.outbound.live, not here.
"""

from __future__ import annotations

import abc
import logging
from collections import OrderedDict

from adapters.base import ChannelAdapter, SendReceipt
from core.api.channels import DeliveryContext, DeliveryError, RateLimited

log = logging.getLogger(__name__)

_KEEP = 256  # previews of runs that never delivered are forgotten oldest first


class EditablePreviews(ChannelAdapter, abc.ABC):
    """Mixin for adapters whose platform can edit a sent message."""

    _preview_ids: OrderedDict[str, str]

    def _previews(self) -> OrderedDict[str, str]:
        ids = self.__dict__.get("_preview_ids")
        if ids is None:
            ids = self.__dict__["_preview_ids"] = OrderedDict()
        return ids

    @abc.abstractmethod
    async def _post_preview(self, target: DeliveryContext, text: str) -> str:
        """Post a partial reply as a new message; returns its platform message id."""

    @abc.abstractmethod
    async def _edit(
        self, target: DeliveryContext, message_id: str, text: str, *, final: bool
    ) -> None:
        """Replace the text of a message this bot sent (formatted like `send_text`)."""

    async def send_preview(self, target: DeliveryContext, run_id: str, text: str) -> None:
        ids = self._previews()
        message_id = ids.get(run_id)
        if message_id is None:
            ids[run_id] = await self._post_preview(target, text)
            while len(ids) > _KEEP:
                ids.popitem(last=False)
        else:
            await self._edit(target, message_id, text, final=False)

    async def send_final(self, target: DeliveryContext, run_id: str, text: str) -> SendReceipt:
        message_id = self._previews().pop(run_id, None)
        if message_id is None:
            return await self.send_text(target, text)
        try:
            await self._edit(target, message_id, text, final=True)
        except RateLimited:
            self._previews()[run_id] = message_id  # the gate waits and tries again
            raise
        except DeliveryError as exc:  # e.g. the preview was deleted: post the reply instead
            log.info("%s: final edit failed (%s); sending as a new message", self.channel, exc)
            return await self.send_text(target, text)
        return SendReceipt(message_id=message_id)

    async def end_preview(self, target: DeliveryContext, run_id: str, status: str) -> None:
        self._previews().pop(run_id, None)
