"""Process logging: text by default, JSON lines with `logging.format: json`.

The run manager binds the run id and session key of the turn it is executing to context
variables; a filter copies them onto every record, so each line emitted during a turn (by our
code or by a library: the model client, the platform SDKs) names its run and session. asyncio
tasks copy the context when created, so tasks a turn starts inherit its ids.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from contextvars import ContextVar
from typing import Literal, TextIO

LogFormat = Literal["text", "json"]
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
JSON_FIELDS = ("asctime", "levelname", "name", "message", "runId", "sessionKey")

_run_id: ContextVar[str | None] = ContextVar("crosstalk_run_id", default=None)
_session_key: ContextVar[str | None] = ContextVar("crosstalk_session_key", default=None)


def bind_turn(run_id: str, session_key: str) -> None:
    """Mark the current task (and the tasks it starts from now on) as working on this turn."""
    _run_id.set(run_id)
    _session_key.set(session_key)


class TurnContextFilter(logging.Filter):
    """Puts `runId` and `sessionKey` (None outside a turn) on every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.runId = _run_id.get()
        record.sessionKey = _session_key.get()
        return True


class RepeatLimitFilter(logging.Filter):
    """At most `burst` lines of one kind (logger, level, message template) per `window`
    seconds; the next line after a quiet spell says how many were dropped (D141). A flood of
    one error (a socket accept failing thousands of times a second) cannot fill the disk."""

    def __init__(self, burst: int = 20, window: float = 10.0) -> None:
        super().__init__()
        self.burst = burst
        self.window = window
        self._seen: dict[tuple[str, int, object], list[float]] = {}  # start, count, dropped

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, record.levelno, record.msg)
        now = record.created
        slot = self._seen.get(key)
        if slot is None or now - slot[0] >= self.window:
            if len(self._seen) > 10_000:
                self._seen.clear()
            dropped = int(slot[2]) if slot else 0
            self._seen[key] = [now, 1, 0]
            if dropped:
                record.msg = f"{record.msg} [{dropped} more like this dropped]"
            return True
        slot[1] += 1
        if slot[1] <= self.burst:
            return True
        slot[2] += 1
        return False


class RedactFilter(logging.Filter):
    """Secrets never reach a log line, whatever the level or the library (D143): a platform
    SDK at DEBUG logs request URLs, and Telegram's carry the bot token."""

    def __init__(self, secrets: Sequence[str]) -> None:
        super().__init__()
        self.secrets = [s for s in secrets if s]

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.secrets:
            return True
        text = record.getMessage()
        if any(s in text for s in self.secrets):
            for s in self.secrets:
                text = text.replace(s, "***")
            record.msg, record.args = text, None
        return True


def redact_also(secret: str) -> None:
    """Add a secret that is not in the config (the token generated into the state directory)
    to every redacting handler of the process (D143)."""
    for handler in logging.getLogger().handlers:
        for flt in handler.filters:
            if isinstance(flt, RedactFilter) and len(secret) >= 6 and secret not in flt.secrets:
                flt.secrets.append(secret)


def formatter(fmt: LogFormat) -> logging.Formatter:
    if fmt == "json":
        from pythonjsonlogger.json import JsonFormatter  # only for JSON logs (D56)

        return JsonFormatter(
            list(JSON_FIELDS),
            rename_fields={"asctime": "time", "levelname": "level", "name": "logger"},
            json_ensure_ascii=False,
        )
    return logging.Formatter(TEXT_FORMAT)


def configure_logging(
    fmt: LogFormat = "text",
    *,
    level: int = logging.INFO,
    stream: TextIO | None = None,
    secrets: Sequence[str] = (),
) -> logging.Handler:
    """Replace the root handlers with one stream handler in `fmt`; returns it."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(formatter(fmt))
    handler.addFilter(RedactFilter(secrets))
    handler.addFilter(RepeatLimitFilter())
    handler.addFilter(TurnContextFilter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    logging.getLogger("alembic").setLevel(logging.WARNING)
    for noisy in ("httpx", "httpx2", "httpcore", "httpcore2"):
        # request lines carry the Telegram bot token in the URL path: keep them out of logs
        logging.getLogger(noisy).setLevel(logging.WARNING)
    return handler
