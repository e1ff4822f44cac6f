"""`GET /metrics` scraped from a live gateway app and parsed with prometheus_client's parser:
turns by status, latency histograms, deliveries by outcome, refusals by reason, channel state,
queue depth; the bearer token; the loopback port; one registry per runtime."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestClient, TestServer
from prometheus_client.parser import text_string_to_metric_families

from core.api.testing import RecordingAdapter
from core.edge.http.http_metrics import loopback_port
from core.edge.http.server import build_app
from core.engine.outbound.delivery import Outbound
from core.engine.runs import RunRequest
from core.runtime import Runtime
from tests.conftest import Client, RuntimeFactory
from tests.fakes.model import FakeModelServer
from tests.fakes.model_script import ErrorReply, Reply, RequestJSON
from tests.gateway_process import free_port
from tests.polling import eventually

AUTH = {"Authorization": "Bearer test-token"}
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def parse(text: str) -> Samples:
    out: Samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def value(samples: Samples, name: str, **labels: str) -> float:
    """The sum over the samples of `name` whose labels include `labels` (0 when none)."""
    want = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and want <= ls)


async def scrape(c: Client) -> Samples:
    resp = await c.get("/metrics", headers=AUTH)
    assert resp.status == 200
    assert resp.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    return parse(await resp.text())


@pytest.fixture
async def gateway(
    make_runtime: RuntimeFactory,
) -> AsyncIterator[tuple[Client, Runtime, dict[str, RecordingAdapter]]]:
    adapters = {name: RecordingAdapter(channel=name) for name in ("testchat", "telegram", "quiet")}
    rt = await make_runtime(
        {"session": {"sendPolicy": {"rules": [{"action": "deny", "match": {"channel": "quiet"}}]}}},
        adapters=list(adapters.values()),
    )
    async with TestClient(TestServer(build_app(rt, "test-token", []))) as c:
        yield c, rt, adapters


async def test_metrics_count_turns_deliveries_refusals_and_channel_state(
    gateway: tuple[Client, Runtime, dict[str, RecordingAdapter]], fake_model: FakeModelServer
) -> None:
    c, rt, ad = gateway
    assert (await c.get("/metrics")).status == 401
    assert (await c.get("/metrics", headers={"Authorization": "Bearer wrong"})).status == 401

    await ad["testchat"].say("hello")
    await ad["testchat"].wait_for("echo: hello")
    fake_model.script(ErrorReply(500, "model broke", "server_error"))
    await ad["testchat"].say("second", chat_id="chat-2", sender="owner-2")
    await ad["testchat"].wait_for("⚠️", timeout=10)
    await ad["telegram"].say("let me in", chat_id="42", sender="42")  # stranger: pairing
    await ad["telegram"].wait_for()

    s = await scrape(c)
    proc = rt.metrics.process
    assert all(dict(ls).get("process") == proc for (_, ls) in s), "every sample names its process"
    assert value(s, "crosstalk_turns_started_total", lane="main") == 2
    assert value(s, "crosstalk_turns_finished_total", status="ok") == 1
    assert value(s, "crosstalk_turns_finished_total", status="error") == 1
    assert value(s, "crosstalk_turn_duration_seconds_count") == 2
    assert value(s, "crosstalk_turn_duration_seconds_count", status="ok") == 1
    assert value(s, "crosstalk_turn_queue_wait_seconds_count") == 2
    assert (
        value(
            s,
            "crosstalk_model_request_duration_seconds_count",
            model="fake/fake-model",
            outcome="ok",
        )
        == 1
    )
    assert value(s, "crosstalk_model_request_duration_seconds_count", outcome="error") >= 1
    assert value(s, "crosstalk_model_request_duration_seconds_sum") > 0
    assert (
        value(
            s, "crosstalk_deliveries_total", channel="testchat", kind="reply", outcome="delivered"
        )
        == 1
    )
    assert (
        value(s, "crosstalk_deliveries_total", channel="testchat", outcome="delivered") == 2
    )  # the reply and the error notice
    assert (
        value(
            s, "crosstalk_deliveries_total", channel="telegram", kind="notice", outcome="delivered"
        )
        == 1
    )
    assert (
        value(
            s,
            "crosstalk_inbound_refusals_total",
            channel="telegram",
            account="default",
            reason="not paired: pairing code sent",
        )
        == 1
    )
    assert value(s, "crosstalk_channel_state", channel="testchat", state="connected") == 1
    assert value(s, "crosstalk_channel_state", channel="testchat", state="failed") == 0
    assert value(s, "crosstalk_turn_queue_depth") == 0
    assert value(s, "crosstalk_turns_running") == 0
    assert value(s, "crosstalk_process_start_time_seconds") > 0


async def test_suppressed_deliveries_are_counted_by_outcome(
    gateway: tuple[Client, Runtime, dict[str, RecordingAdapter]],
) -> None:
    c, rt, ad = gateway
    before = await scrape(c)
    key = "agent:main:quiet:direct:q1"
    await rt.services.ensure_session(key, channel="quiet", last_channel="quiet", last_to="q1")
    result = await rt.gate.deliver(Outbound("psst", "announce", key))
    assert result.outcome == "suppressed_by_policy"
    s = await scrape(c)
    assert value(before, "crosstalk_deliveries_total", outcome="suppressed_by_policy") == 0
    assert (
        value(
            s,
            "crosstalk_deliveries_total",
            channel="quiet",
            kind="announce",
            outcome="suppressed_by_policy",
        )
        == 1
    )
    assert value(s, "crosstalk_deliveries_total", channel="quiet", outcome="delivered") == 0
    assert ad["quiet"].sent == []


async def test_queue_depth_and_running_turns_while_a_turn_blocks(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    release = asyncio.Event()

    async def slow(_body: RequestJSON) -> Reply | None:
        await release.wait()
        return None  # then the echo

    fake_model.set_responder(slow)
    rt = await make_runtime()
    entry = await rt.services.ensure_session("agent:main:main")
    runs = [
        await rt.runs.submit(RunRequest(entry.key, f"m{i}", rt.services.context_for(entry)))
        for i in range(3)
    ]
    async with TestClient(TestServer(build_app(rt, "test-token", []))) as c:

        async def first_started() -> bool:
            return rt.metrics.sample("crosstalk_turns_started_total", lane="main") == 1

        await eventually(first_started, what="the first turn started")
        s = await scrape(c)
        assert value(s, "crosstalk_turn_queue_depth") == 2
        assert value(s, "crosstalk_turns_running") == 1
        release.set()
        for run in runs:
            assert (await rt.runs.wait(run.id, 10)).status == "ok"
        s = await scrape(c)
        assert value(s, "crosstalk_turn_queue_depth") == 0
        assert value(s, "crosstalk_turns_finished_total", status="ok") == 3


async def test_loopback_port_serves_without_the_token(make_runtime: RuntimeFactory) -> None:
    rt = await make_runtime({"gateway": {"metrics": {"port": 0}}})
    app = build_app(rt, "test-token", [])
    async with TestClient(TestServer(app)) as c:
        port = loopback_port(app)
        assert port is not None and port != c.port
        async with (
            aiohttp.ClientSession() as http,
            http.get(f"http://127.0.0.1:{port}/metrics") as resp,
        ):
            assert resp.status == 200
            s = parse(await resp.text())
        assert value(s, "crosstalk_turn_queue_depth") == 0
        assert (await c.get("/metrics")).status == 401  # the main port still wants the token


async def test_loopback_port_is_off_by_default(make_runtime: RuntimeFactory) -> None:
    rt = await make_runtime()
    app = build_app(rt, "test-token", [])
    async with TestClient(TestServer(app)):
        assert loopback_port(app) is None


async def test_each_runtime_has_its_own_registry(make_runtime: RuntimeFactory) -> None:
    a, b = await make_runtime(), await make_runtime()
    entry = await a.services.ensure_session("agent:main:main")
    run = await a.runs.submit(RunRequest(entry.key, "hi", a.services.context_for(entry)))
    assert (await a.runs.wait(run.id, 10)).status == "ok"
    assert a.metrics.registry is not b.metrics.registry
    assert a.metrics.sample("crosstalk_turns_finished_total", lane="main", status="ok") == 1
    assert b.metrics.sample("crosstalk_turns_finished_total", lane="main", status="ok") == 0


async def test_openapi_declares_metrics(
    gateway: tuple[Client, Runtime, dict[str, RecordingAdapter]],
) -> None:
    c, _, _ = gateway
    spec: dict[str, Any] = await (await c.get("/openapi.json")).json()
    op = spec["paths"]["/metrics"]["get"]
    assert op["security"] == [{"bearer": []}]
    assert set(op["responses"]) == {"200", "401"}


async def test_model_latency_is_labelled_by_the_model_that_answered(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime(
        {
            "models": {
                "providers": {
                    "down": {"baseUrl": f"http://127.0.0.1:{free_port()}/v1", "apiKey": "x"}
                }
            },
            "agents": {
                "defaults": {"model": {"primary": "down/m", "fallbacks": ["fake/fake-model"]}}
            },
        }
    )
    entry = await rt.services.ensure_session("agent:main:main")
    run = await rt.runs.submit(RunRequest(entry.key, "hi", rt.services.context_for(entry)))
    assert (await rt.runs.wait(run.id, 20)).status == "ok"
    assert (
        rt.metrics.sample(
            "crosstalk_model_request_duration_seconds_count", model="fake/fake-model", outcome="ok"
        )
        == 1
    )
    assert (
        rt.metrics.sample(
            "crosstalk_model_request_duration_seconds_count", model="down/m", outcome="ok"
        )
        == 0
    )
