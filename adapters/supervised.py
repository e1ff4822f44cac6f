"""The lifecycle the connected adapters share (D35, D36): one supervisor keeps the platform
connection up (the adapter is its :class:`Connection`), a lease says which process of a cluster
receives, and `status()` shows the supervisor's state, or why the adapter stopped. Reconnecting
on the watchdog's word stays each adapter's choice (`restart_connection`, D16)."""

from __future__ import annotations

from typing import cast

from core.api.channels import (
    AdapterState,
    AdapterStatus,
    Backoff,
    ChannelAdapter,
    ChannelUnavailable,
    Connection,
    ConnectionSupervisor,
    InboundSink,
)


class SupervisedAdapter(ChannelAdapter):
    """An adapter whose connection a :class:`ConnectionSupervisor` drives."""

    retry_initial: float = 1.0
    retry_max: float = 60.0
    _sink: InboundSink | None = None
    _sup: ConnectionSupervisor | None = None
    _failed: str | None = None
    """Why the adapter is not running (a refused start, a fatal error), shown while stopped."""

    @property
    def name(self) -> str:
        return f"{self.channel} account {self.account_id}"

    async def start(self, sink: InboundSink) -> None:
        """Connect; an adapter with nothing to check or build first needs no start of its own."""
        if self._sup is not None:
            return
        self._sink, self._failed = sink, None
        await self._supervise()

    async def _supervise(self, *, leased: bool = True) -> None:
        """Connect (the first attempt inline), then keep the connection up in the background;
        `leased`: only the process holding the channel's lease receives (D36). A fatal first
        attempt stops the adapter and raises ChannelUnavailable."""
        self._sup = ConnectionSupervisor(
            self.name,
            cast(Connection, self),
            backoff=Backoff(self.retry_initial, self.retry_max),
            lease=self.connection_lease if leased else None,
            lease_name=f"channel:{self.channel}:{self.account_id}",
        )
        try:
            await self._sup.start()
        except ChannelUnavailable:
            await self.stop()
            raise

    async def _unsupervise(self) -> None:
        """Stop the supervisor; the failure it ended in (if any) stays the adapter's reason."""
        sup, self._sup = self._sup, None
        if sup is not None:
            await sup.stop()
            if sup.state == "failed":
                self._failed = sup.detail

    def _status(self, extra: dict[str, str | int]) -> AdapterStatus:
        """The supervisor's state and detail with `extra` (and the lease holder), or stopped /
        failed with the reason when there is no supervisor."""
        sup = self._sup
        if sup is None:
            state: AdapterState = "failed" if self._failed else "stopped"
            return AdapterStatus(self.channel, self.account_id, state, self._failed, extra)
        if sup.holder:
            extra["holder"] = sup.holder
        return AdapterStatus(self.channel, self.account_id, sup.state, sup.detail, extra)
