"""The openai SDK's `_build_request` for a plain JSON POST, handing httpx2 the URL and headers
it built instead of their text (D202).

For a chat request the SDK builds the URL and the headers, then passes httpx2 the URL as a
string and the headers as decoded (name, value) pairs, which httpx2 parses and encodes all over
again (~0.1 M instructions a turn). This version does the same steps as the SDK for the one
shape of request the gateway sends (a POST with a JSON object body: no files, raw content,
extra body, query parameters or multipart header, ASCII headers) and hands httpx2 the objects
themselves; every other request is the SDK's own. It is checked on the first request it
serves: that request is built both ways and compared (method, URL, header bytes, body,
extensions); on any difference the SDK's is used from then on.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

Build = Callable[..., Any]


def same_request(a: Any, b: Any) -> bool:
    """Two `httpx2.Request`s send the same bytes with the same settings."""
    return bool(
        type(a) is type(b)
        and a.method == b.method
        and str(a.url) == str(b.url)
        and a.url == b.url
        and a.headers.raw == b.headers.raw
        and a.content == b.content
        and a.extensions == b.extensions
    )


def request_builder(original: Build) -> Build:
    """The SDK's `_build_request`, taking the shortcut for plain JSON POSTs once checked."""
    from openai import _base_client as sdk
    from openai._httpx2 import (
        is_legacy_httpx_async_client,
        is_legacy_httpx_sync_client,
        normalize_httpx2_timeout,
    )
    from openai._types import NotGiven
    from openai._utils._logs import get_http_method_for_logging

    sdk_globals = vars(sdk)
    state = {"checked": False, "refused": False}

    def shortcut(self: Any, options: Any, retries_taken: int) -> Any:
        """The request the SDK builds, or None when `options` are not the plain shape."""
        json_data = options.json_data
        if (
            type(json_data) is not dict
            or options.method != "post"
            or options.extra_json is not None
            or options.files is not None
            or options.content is not None
            or options.params
            or self.default_query
            or self._auth_query(options.security)
            or is_legacy_httpx_sync_client(self._client)
            or is_legacy_httpx_async_client(self._client)
        ):
            return None
        headers = self._build_headers(options, retries_taken=retries_taken)
        content_type = headers.get("Content-Type")
        if content_type is not None and content_type.startswith("multipart/form-data"):
            return None
        if headers.encoding != "ascii":
            return None
        timeout = self.timeout if isinstance(options.timeout, NotGiven) else options.timeout
        return self._client.build_request(
            headers=[(key.lower(), value) for key, value in headers.raw],
            timeout=normalize_httpx2_timeout(timeout),
            method=options.method,
            url=self._prepare_url(options.url),
            params=None,
            content=sdk_globals["openapi_dumps"](json_data),  # D197's when installed
            files=None,
        )

    def _build_request(self: Any, options: Any, *, retries_taken: int = 0) -> Any:
        if state["refused"]:
            return original(self, options, retries_taken=retries_taken)
        built = shortcut(self, options, retries_taken)
        if built is None:
            return original(self, options, retries_taken=retries_taken)
        if not state["checked"]:
            theirs = original(self, options, retries_taken=retries_taken)
            if not same_request(built, theirs):
                state["refused"] = True
                log.debug("openai request building differs: SDK's kept")
                return theirs
            state["checked"] = True
            return built
        sdk.log.debug(
            "Building HTTP request: method=%s retries_taken=%i",
            get_http_method_for_logging(options.method),
            retries_taken,
        )
        return built

    return _build_request


def install() -> bool:
    """Serve the SDK's `_build_request` through :func:`request_builder` (checked at first use)."""
    from openai import _base_client as sdk

    original = vars(sdk.BaseClient).get("_build_request")
    if original is None or getattr(original, "__name__", "") != "_build_request":
        return False
    if original.__module__ != sdk.__name__:
        return getattr(original, "__module__", "") == __name__
    setattr(sdk.BaseClient, "_build_request", request_builder(original))  # noqa: B010
    return True
