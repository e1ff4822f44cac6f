"""The gateway's connections (D141): slow or silent clients are closed after the header
timeout while normal requests are served; at the connection cap the oldest idle connection
makes room; a flood of one log line is cut to a few lines."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from core.config import config_secrets, validate_config
from core.edge.http.connections import GatewayRunner
from core.edge.http.server import build_app
from core.engine.observability.logs import RepeatLimitFilter, configure_logging, redact_also
from tests.conftest import RuntimeFactory

ROOT = Path(__file__).resolve().parents[4]


@pytest.fixture
async def gateway(make_runtime: RuntimeFactory) -> AsyncIterator[tuple[GatewayRunner, int]]:
    rt = await make_runtime()
    runner = GatewayRunner(
        build_app(rt, "test-token", []), max_connections=4, header_timeout=0.5, access_log=None
    )
    await runner.setup()
    site = aiohttp.web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    yield runner, site.port
    await runner.cleanup()


async def _slow_client(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")  # and never the rest
    await writer.drain()
    return reader, writer


async def _healthz(port: int) -> int:
    async with (
        aiohttp.ClientSession() as http,
        http.get(f"http://127.0.0.1:{port}/healthz") as resp,
    ):
        return resp.status


async def test_slow_headers_are_closed_while_a_normal_request_is_served(
    gateway: tuple[GatewayRunner, int],
) -> None:
    runner, port = gateway
    slow = [await _slow_client(port) for _ in range(3)]
    assert await _healthz(port) == 200
    for reader, writer in slow:  # the server closes them: EOF, no answer
        assert await asyncio.wait_for(reader.read(), 10) == b""
        writer.close()
    assert runner.refused == 0


async def test_at_the_cap_the_oldest_idle_connection_makes_room(
    gateway: tuple[GatewayRunner, int],
) -> None:
    runner, port = gateway
    slow = [await _slow_client(port) for _ in range(4)]  # the cap: 4
    assert await _healthz(port) == 200  # a real request still gets in
    assert await asyncio.wait_for(slow[0][0].read(), 5) == b""  # the oldest idle one went
    assert runner.refused >= 1
    assert runner.server is not None and len(runner.server.connections) <= 4
    for _, writer in slow:
        writer.close()


def test_a_flood_of_one_log_line_is_cut_and_counted() -> None:
    stream = io.StringIO()
    root = logging.getLogger()
    kept, level = list(root.handlers), root.level
    configure_logging(stream=stream)
    try:
        noisy = logging.getLogger("asyncio")
        for _ in range(5000):
            noisy.error("socket.accept() out of system resource")
        logging.getLogger("other").error("a different line")
        lines = stream.getvalue().splitlines()
        assert len(lines) == 21 and lines[-1].endswith("a different line")
        flt = RepeatLimitFilter(burst=2, window=10.0)
        rec = logging.LogRecord("x", logging.ERROR, "f", 1, "boom", None, None)
        assert [flt.filter(rec) for _ in range(4)] == [True, True, False, False]
        rec.created += 11
        assert flt.filter(rec) and rec.getMessage() == "boom [2 more like this dropped]"
    finally:
        root.handlers[:] = kept
        root.setLevel(level)


def test_secrets_are_redacted_from_every_line_at_every_level() -> None:
    """D143: at DEBUG a platform library logs request URLs, with the bot token in them."""
    stream = io.StringIO()
    root = logging.getLogger()
    kept, level = list(root.handlers), root.level
    config = validate_config({"channels": {"telegram": {"botToken": "123456:SECRET-bot-token"}}})
    configure_logging(level=logging.DEBUG, stream=stream, secrets=config_secrets(config))
    try:
        logging.getLogger("httpx").warning(
            "POST %s", "https://api.telegram.org/bot123456:SECRET-bot-token/getUpdates"
        )
        logging.getLogger("telegram.ext").debug("token 123456:SECRET-bot-token in use")
        redact_also("generated-gateway-token")  # the state directory's, in no config
        logging.getLogger("aiohttp.access").info("GET /?token=generated-gateway-token")
        out = stream.getvalue()
        assert "SECRET-bot-token" not in out and "generated-gateway-token" not in out
        assert out.count("***") == 3
    finally:
        root.handlers[:] = kept
        root.setLevel(level)


def test_the_systemd_unit_raises_the_file_limit() -> None:
    unit = (ROOT / "deploy" / "crosstalk.service").read_text(encoding="utf-8")
    assert "\nLimitNOFILE=65536\n" in unit


async def test_aiohttps_own_errors_are_in_our_json_shape(
    gateway: tuple[GatewayRunner, int],
) -> None:
    """A request line over 8 KB and a malformed header: 4xx with `{error: {message, type}}`."""
    _, port = gateway
    for raw in (
        b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n",
    ):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(raw)
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), 10)
        writer.close()
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.split(b" ", 2)[1].startswith(b"4"), head
        assert b"application/json" in head
        error = json.loads(body)["error"]
        assert error["type"] == "invalid_request_error" and error["message"]
