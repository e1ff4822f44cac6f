"""D12: a provider failure reaches chats and HTTP clients only as a short public text."""

from __future__ import annotations

import asyncio
import logging

import pytest
from aiohttp.test_utils import TestClient, TestServer

from adapters.webchat.adapter import WebchatAdapter
from core.api.testing import RecordingAdapter
from core.edge.http.server import build_app
from core.runtime import Runtime
from tests.conftest import ConfigFactory, RuntimeFactory
from tests.fakes.model import FakeModelServer
from tests.fakes.model_script import delay, error, text
from tests.gateway_process import free_port

SECRET_BODY = "invalid api key sk-live-SECRET123 (upstream llm-7.internal.corp)"
PUBLIC = "⚠️ The model provider failed (HTTP 401). Details are in the gateway log."


async def test_chat_gets_the_public_text_and_the_log_keeps_the_detail(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer, caplog: pytest.LogCaptureFixture
) -> None:
    adapter = RecordingAdapter()
    await make_runtime(adapters=[adapter])
    fake_model.script(error(401, SECRET_BODY))
    with caplog.at_level(logging.WARNING):
        await adapter.inject(adapter.message("hello"))
        assert await adapter.wait_sent(1, timeout=30) == [PUBLIC]
    assert "sk-live-SECRET123" in caplog.text  # the operator still learns why


async def test_http_client_and_web_chat_get_the_public_text(
    make_config: ConfigFactory, fake_model: FakeModelServer
) -> None:
    rt = Runtime(make_config())
    webchat = WebchatAdapter.for_gateway(rt.pages)
    await rt.start(adapters=[webchat], probe_models=False)
    try:
        async with TestClient(TestServer(build_app(rt, "test-token", [webchat]))) as c:
            fake_model.script(error(401, SECRET_BODY))
            resp = await c.post(
                "/v1/chat/completions",
                headers={"Authorization": "Bearer test-token"},
                json={"messages": [{"role": "user", "content": "hi"}]},
            )
            assert resp.status == 502
            assert (await resp.json())["error"]["message"] == PUBLIC
            fake_model.script(error(401, SECRET_BODY))
            async with c.ws_connect("/ws?token=test-token") as ws:
                assert (await ws.receive_json(timeout=10))["type"] == "history"
                await ws.send_str('{"type": "message", "text": "hi again"}')
                while (frame := await ws.receive_json(timeout=10))["type"] != "message":
                    pass
                assert frame == {"type": "message", "role": "assistant", "text": PUBLIC} | {
                    "endOf": frame.get("endOf")  # the failed turn's, for a page opening (D190)
                }
                assert frame["endOf"]
    finally:
        await rt.stop()


async def test_unreachable_provider_is_a_connection_error(make_runtime: RuntimeFactory) -> None:
    adapter = RecordingAdapter()
    await make_runtime(
        {"models": {"providers": {"fake": {"baseUrl": f"http://127.0.0.1:{free_port()}/v1"}}}},
        adapters=[adapter],
    )
    await adapter.inject(adapter.message("hello"))
    assert await adapter.wait_sent(1, timeout=60) == [
        "⚠️ The model provider failed (connection error). Details are in the gateway log."
    ]


async def test_slow_provider_is_a_timeout(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    """Over the SDK's aiohttp transport (D51) a read timeout stays a timeout."""
    adapter = RecordingAdapter()
    await make_runtime(
        {"models": {"providers": {"fake": {"timeoutSeconds": 0.5}}}}, adapters=[adapter]
    )
    fake_model.set_responder(lambda _request: delay(30, text("too late")))
    await adapter.inject(adapter.message("hello"))
    assert await adapter.wait_sent(1, timeout=60) == [
        "⚠️ The model provider failed (timeout). Details are in the gateway log."
    ]


async def test_dropped_connection_is_a_connection_error(make_runtime: RuntimeFactory) -> None:
    """A server that closes the connection without answering: not a timeout (D51)."""

    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(1)
        writer.close()

    server = await asyncio.start_server(hang_up, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        adapter = RecordingAdapter()
        await make_runtime(
            {"models": {"providers": {"fake": {"baseUrl": f"http://127.0.0.1:{port}/v1"}}}},
            adapters=[adapter],
        )
        await adapter.inject(adapter.message("hello"))
        assert await adapter.wait_sent(1, timeout=60) == [
            "⚠️ The model provider failed (connection error). Details are in the gateway log."
        ]
    finally:
        server.close()
        await server.wait_closed()


def test_every_kind_of_provider_failure_maps_to_the_public_text(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from pydantic_ai.exceptions import ModelConnectionError, ModelHTTPError, ModelTimeoutError

    from core.features.models.provider_errors import provider_failure

    cases = [
        (ModelHTTPError(503, "m", {"error": "down at 10.0.0.7 key sk-x"}), "HTTP 503"),
        (ModelConnectionError("m", "connect to llm.internal refused"), "connection error"),
        (ModelTimeoutError("m", "read timed out from llm.internal"), "timeout"),
    ]
    with caplog.at_level(logging.WARNING):
        for exc, what in cases:
            assert str(provider_failure(exc, "fake/m")) == (
                f"⚠️ The model provider failed ({what}). Details are in the gateway log."
            )
    assert "10.0.0.7" in caplog.text and "llm.internal" in caplog.text


def test_platform_message_text_is_cleaned_where_it_enters() -> None:
    from core.model.delivery_context import DeliveryContext
    from core.model.inbound import InboundMessage

    msg = InboundMessage(
        channel="telegram",
        chat_type="group",
        chat_id="-100\x00",
        sender_id="7",
        sender_name="Eve\ud800",
        chat_title="t\x00",
        text="hi\x00 \udc00",
        reply_to=DeliveryContext(channel="telegram", to="-100\x00"),
    )
    assert (msg.text, msg.sender_name, msg.chat_title, msg.chat_id, msg.reply_to.to) == (
        "hi\ufffd \ufffd",
        "Eve\ufffd",
        "t\ufffd",
        "-100\ufffd",
        "-100\ufffd",
    )
