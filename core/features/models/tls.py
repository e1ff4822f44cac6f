"""The TLS context of the OpenAI-compatible model clients, built once and beside the import (D193).

The SDK's aiohttp transport builds a context for each client it makes, and loading the CA bundle
into it takes 25–50 ms, on the first turn's path. OpenSSL parses the bundle without holding
Python's lock, so the model-stack warm-up (D54) builds it in a second thread while its own
thread imports pydantic-ai and the SDK: on a second core it costs the first reply nothing. It is
the context the transport would have built (`httpx2.create_ssl_context()`, the same call with
the same defaults and `SSL_CERT_FILE`/`SSL_CERT_DIR`), shared by the clients the way aiohttp
shares its own default contexts among all its sessions.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ssl

log = logging.getLogger(__name__)

_lock = threading.Lock()
_context: ssl.SSLContext | None = None


def client_context() -> ssl.SSLContext:
    """The context, built by the first caller; a caller meanwhile waits for that one."""
    global _context
    with _lock:
        if _context is None:
            import httpx2

            _context = httpx2.create_ssl_context()
        return _context


def built() -> bool:
    return _context is not None


def build_beside() -> threading.Thread:
    """Start building the context in a thread of its own; the caller joins it.

    httpx2 is imported here, before the thread starts, so that thread imports nothing: two
    threads importing one package can see each other's half-initialised modules (D54)."""
    import httpx2  # noqa: F401

    thread = threading.Thread(target=_build, name="crosstalk-model-tls", daemon=True)
    thread.start()
    return thread


def _build() -> None:
    try:
        client_context()
    except Exception as exc:  # the first model built asks again, and its turn reports it
        log.debug("the model clients' TLS context could not be built: %s", exc)


__all__ = ["build_beside", "built", "client_context"]
