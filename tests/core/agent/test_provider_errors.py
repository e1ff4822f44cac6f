"""D12: a provider failure reaches chats and HTTP clients only as a short public text."""

from __future__ import annotations

import logging

import pytest
from aiohttp.test_utils import TestClient, TestServer

from adapters.webchat.adapter import WebchatAdapter
from core.gateway.server import build_app
from core.runtime import Runtime
from tests.conftest import ConfigFactory, RuntimeFactory
from tests.fakes.model import FakeModelServer
from tests.fakes.model_script import error
from tests.fakes.recording_adapter import RecordingAdapter
from tests.gateway_process import free_port

SECRET_BODY = "invalid api key sk-live-SECRET123 (upstream llm-7.internal.corp)"
PUBLIC = "⚠️ The model provider failed (HTTP 401). Details are in the gateway log."


async def test_chat_gets_the_public_text_and_the_log_keeps_the_detail(
        make_runtime: RuntimeFactory, fake_model: FakeModelServer,
        caplog: pytest.LogCaptureFixture) -> None:
    adapter = RecordingAdapter()
    await make_runtime(adapters=[adapter])
    fake_model.script(error(401, SECRET_BODY))
    with caplog.at_level(logging.WARNING):
        await adapter.inject(adapter.message("hello"))
        assert await adapter.wait_sent(1) == [PUBLIC]
    assert "sk-live-SECRET123" in caplog.text  # the operator still learns why


async def test_http_client_and_web_chat_get_the_public_text(
        make_config: ConfigFactory, fake_model: FakeModelServer) -> None:
    rt = Runtime(make_config())
    webchat = WebchatAdapter(rt)
    await rt.start(adapters=[webchat], probe_models=False)
    try:
        async with TestClient(TestServer(build_app(rt, "test-token", [webchat]))) as c:
            fake_model.script(error(401, SECRET_BODY))
            resp = await c.post("/v1/chat/completions", headers={
                "Authorization": "Bearer test-token"},
                json={"messages": [{"role": "user", "content": "hi"}]})
            assert resp.status == 502
            assert (await resp.json())["error"]["message"] == PUBLIC
            fake_model.script(error(401, SECRET_BODY))
            async with c.ws_connect("/ws?token=test-token") as ws:
                assert (await ws.receive_json(timeout=10))["type"] == "history"
                await ws.send_str('{"type": "message", "text": "hi again"}')
                while (frame := await ws.receive_json(timeout=10))["type"] != "message":
                    pass
                assert frame == {"type": "message", "role": "assistant", "text": PUBLIC}
    finally:
        await rt.stop()


async def test_unreachable_provider_is_a_connection_error(make_runtime: RuntimeFactory) -> None:
    adapter = RecordingAdapter()
    await make_runtime({"models": {"providers": {"fake": {
        "baseUrl": f"http://127.0.0.1:{free_port()}/v1"}}}}, adapters=[adapter])
    await adapter.inject(adapter.message("hello"))
    assert await adapter.wait_sent(1, timeout=60) == [
        "⚠️ The model provider failed (connection error). Details are in the gateway log."]
