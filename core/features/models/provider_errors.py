"""What a model provider's failure may show outside the gateway (decision D12).

A provider's error body can carry API-key fragments and internal host names. Chats, HTTP
clients and calling agents get only the short public text; the gateway log keeps the detail.
"""

from __future__ import annotations

import logging
from typing import Any

from core.model.errors import RunError

log = logging.getLogger(__name__)

PUBLIC_TEXT = "⚠️ The model provider failed ({what}). Details are in the gateway log."


class ProviderFailed(RunError):
    """A model request failed; `str()` is the public text, the cause stays in the log."""


def provider_failure(exc: Any, model_ref: str) -> ProviderFailed:
    """Log the provider's error in full and return the error the rest of Crosstalk sees."""
    from pydantic_ai.exceptions import ModelRequestTimeout, ModelTimeoutError

    status = getattr(exc, "status_code", None)
    transport = _transport_error(exc)
    if isinstance(status, int):
        what = f"HTTP {status}"
    elif transport is not None:
        what = "timeout" if isinstance(transport, TimeoutError) else "connection error"
    elif isinstance(exc, ModelTimeoutError | ModelRequestTimeout):
        what = "timeout"
    else:  # ModelConnectionError, or a failure inside a stream that named no status
        what = "connection error"
    cause = transport if transport is not None else _root_cause(exc)
    detail = f"{exc} ({cause!r})" if cause is not None else exc
    log.warning("model provider %s failed (%s): %s", model_ref, what, detail)
    return ProviderFailed(PUBLIC_TEXT.format(what=what))


def _root_cause(exc: BaseException) -> BaseException | None:
    """The first error under `exc`, when there is one: the SDKs report a body cut by D142's
    bound (`provider answer over N bytes`) as a bare "Connection error."."""
    seen = {id(exc)}
    cause, root = exc.__cause__ or exc.__context__, None
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        root = cause
        cause = cause.__cause__ or cause.__context__
    return root


def _transport_error(exc: BaseException) -> BaseException | None:
    """The aiohttp error under a provider failure, if any: the OpenAI SDK's aiohttp transport
    (D51) reports every failed connection, refused or dropped, as a connect timeout, so the
    cause says which it was (aiohttp's timeouts are `TimeoutError`s)."""
    import aiohttp

    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, aiohttp.ClientError):
            return cause
        cause = cause.__cause__ or cause.__context__
    return None
