"""An HTTPX request for getUpdates that reports whether polling currently works.

PTB's updater retries failing getUpdates calls forever with its own backoff and offers no hook
for "it works again"; watching the transport of that one request is the least intrusive way to
keep ``status()`` honest (``retrying`` while the API is unreachable, ``connected`` once a poll
succeeds, ``failed`` when the token is revoked).
"""

from __future__ import annotations

from collections.abc import Callable
from http import HTTPStatus

from telegram._utils.defaultvalue import DEFAULT_NONE
from telegram._utils.types import ODVInput
from telegram.request import HTTPXRequest, RequestData

PollObserver = Callable[[int | None, str | None], None]
"""Called after each getUpdates with (HTTP status or None on transport error, error detail)."""


class ObservedRequest(HTTPXRequest):
    """HTTPXRequest that tells ``observer`` how each call went."""

    __slots__ = ("_observer",)

    def __init__(
        self, observer: PollObserver, *, connect_timeout: float, read_timeout: float
    ) -> None:
        super().__init__(
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
            write_timeout=connect_timeout,
            pool_timeout=connect_timeout,
        )
        self._observer = observer

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: ODVInput[float] = DEFAULT_NONE,
        write_timeout: ODVInput[float] = DEFAULT_NONE,
        connect_timeout: ODVInput[float] = DEFAULT_NONE,
        pool_timeout: ODVInput[float] = DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        try:
            code, payload = await super().do_request(
                url,
                method,
                request_data,
                read_timeout,
                write_timeout,
                connect_timeout,
                pool_timeout,
            )
        except Exception as exc:
            self._observer(None, str(exc) or type(exc).__name__)
            raise
        ok = HTTPStatus.OK <= code <= 299
        self._observer(code, None if ok else f"HTTP {code}")
        return code, payload
