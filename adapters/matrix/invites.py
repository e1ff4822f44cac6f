"""Matrix invites (D174): whether to join is D11's verdict on the inviter, and a joined DM is
recorded in the account's ``m.direct``."""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING

import aiohttp
from nio import AsyncClient

from adapters.matrix.normalize import CHANNEL
from adapters.matrix.spec import MatrixConfig
from core.api.channels import ChannelAdapter, DeliveryContext, InboundMessage

log = logging.getLogger("adapters.matrix.adapter")  # the adapter's logger, as before the split


class MatrixInvites(ChannelAdapter):
    """Invite handling of :class:`adapters.matrix.adapter.MatrixAdapter` (a mixin: its state is
    set in the adapter's ``__init__``)."""

    config: MatrixConfig
    _client: AsyncClient | None
    _direct: dict[str, str]

    if TYPE_CHECKING:

        @property
        def name(self) -> str: ...

    async def _accept_invite(self, room_id: str, inviter: str, direct: bool) -> bool:
        """D11 for an invite (D174). Where people are let in and judged message by message
        (DMs under ``pairing``/``open``, groups unless ``allowlist``/``disabled``), the bot
        joins. Otherwise the invite is put to the gateway's admission as the inviter's first
        message would be: an owner, an allow-listed or approved person, an allowed group is
        joined; anyone else is declined, and the refusal is counted and logged like any."""
        cfg = self.config
        policy = cfg.dm_policy if direct else cfg.group_policy
        if policy not in ("allowlist", "disabled"):
            return True
        probe = InboundMessage(
            channel=CHANNEL,
            account_id=self.account_id,
            chat_type="direct" if direct else "group",
            chat_id=inviter if direct else room_id,
            sender_id=inviter,
            text="(an invitation to a room)",
            mentioned=True,
            reply_to=DeliveryContext(channel=CHANNEL, to=room_id, account_id=self.account_id),
        )
        if self.admission is not None:
            return await self.admission(probe)
        if policy == "disabled":  # no gateway to ask (a bare adapter): the static rules
            return False
        if direct:
            known = {*cfg.owners, *cfg.allow_from}
            return "*" in known or inviter in known
        return "*" in cfg.groups.allow or room_id in cfg.groups.allow

    async def _mark_direct(self, room_id: str, peer: str) -> None:
        """Remember a DM in the account's ``m.direct`` (server side: it outlives restarts)."""
        self._direct[room_id] = peer
        client = self._client
        if client is None:
            return
        mapping: dict[str, list[str]] = {}
        for room, user in self._direct.items():
            mapping.setdefault(user, []).append(room)
        path = f"/_matrix/client/v3/user/{client.user_id}/account_data/m.direct"
        try:
            resp = await client.send(
                "PUT",
                path,
                json.dumps(mapping),
                headers={
                    "Authorization": f"Bearer {client.access_token}",
                    "Content-Type": "application/json",
                },
            )
            resp.release()
        except (aiohttp.ClientError, TimeoutError) as exc:
            log.warning("%s: could not record %s as direct (%s)", self.name, room_id, exc)
