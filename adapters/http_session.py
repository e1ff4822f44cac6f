"""An HTTP client's session for a platform's REST API, opened on first use."""

from __future__ import annotations

import aiohttp


class LazySession:
    """One aiohttp session, opened on first use and again after a close (so a stopped
    adapter's client can be used again); `close` is idempotent."""

    def __init__(self, timeout: float) -> None:
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        self._http: aiohttp.ClientSession | None = None

    @property
    def http(self) -> aiohttp.ClientSession:
        if self._http is None or self._http.closed:
            self._http = aiohttp.ClientSession(timeout=self._timeout)
        return self._http

    async def close(self) -> None:
        http, self._http = self._http, None
        if http is not None:
            await http.close()
