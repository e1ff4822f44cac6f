"""`/api/cron` and `POST /hooks/<path>` on a real aiohttp server (D15)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from core.api.testing import RecordingAdapter
from core.edge.http.server import build_app
from core.runtime import Runtime
from tests.conftest import ConfigFactory
from tests.fakes.model import FakeModelServer
from tests.fakes.model_script import error
from tests.polling import eventually

AUTH = {"Authorization": "Bearer test-token"}
HOOK_TOKEN = "hook-secret-123"
CHAT = {"channel": "testchat", "to": "room-9"}

Client = tuple["TestClient[web.Request, web.Application]", Runtime, RecordingAdapter]
ClientFactory = Callable[..., Awaitable[Client]]


@pytest.fixture
async def make_client(make_config: ConfigFactory) -> AsyncIterator[ClientFactory]:
    opened: list[tuple[TestClient[web.Request, web.Application], Runtime]] = []

    async def factory(extra: dict[str, Any] | None = None) -> Client:
        rt = Runtime(make_config(extra))
        rt.cron.run_loop = False
        chat = RecordingAdapter()
        await rt.start(adapters=[chat], probe_models=False)
        client = TestClient(TestServer(build_app(rt, "test-token", [])))
        await client.start_server()
        opened.append((client, rt))
        return client, rt, chat

    yield factory
    for client, rt in reversed(opened):
        await client.close()
        await rt.stop()


async def _json(resp: Any) -> Any:
    return await resp.json(content_type=None)


async def test_cron_api_add_list_run_disable_delete(make_client: ClientFactory) -> None:
    c, rt, chat = await make_client()
    assert (await c.get("/api/cron")).status == 401
    resp = await c.post(
        "/api/cron",
        headers=AUTH,
        json={
            "id": "standup",
            "schedule": "0 9 * * 1-5",
            "tz": "Europe/Berlin",
            "message": "standup time",
            "deliver": CHAT,
        },
    )
    assert resp.status == 201, await resp.text()
    job = await _json(resp)
    assert job["id"] == "standup" and job["sessionKey"] == "agent:main:cron:standup"
    assert job["lastRunAt"] is None and job["lastStatus"] is None
    assert isinstance(job["nextRunAt"], int)
    listed = await _json(await c.get("/api/cron", headers=AUTH))
    assert [j["id"] for j in listed["jobs"]] == ["standup"]
    dup = await c.post(
        "/api/cron", headers=AUTH, json={"id": "standup", "every": "1h", "message": "x"}
    )
    assert dup.status == 409
    resp = await c.post("/api/cron/standup/run", headers=AUTH)
    assert resp.status == 202
    body = await _json(resp)
    assert body["ok"] is True and body["sessionKey"] == "agent:main:cron:standup"
    await chat.wait_for("echo: standup time")
    outcome = await rt.runs.wait(body["runId"], 10)
    assert outcome.status == "ok"

    async def finished() -> Any:  # the firing records its state right after delivering
        detail = await _json(await c.get("/api/cron/standup", headers=AUTH))
        return detail if detail["lastStatus"] else None

    detail = await eventually(finished, what="cron state recorded")
    assert detail["lastStatus"] == "ok" and detail["runs"][0]["runId"] == body["runId"]
    off = await _json(await c.post("/api/cron/standup/disable", headers=AUTH))
    assert off["enabled"] is False and off["nextRunAt"] is None
    on = await _json(await c.post("/api/cron/standup/enable", headers=AUTH))
    assert on["enabled"] is True and on["nextRunAt"]
    resp = await c.delete("/api/cron/standup", headers=AUTH)
    assert resp.status == 200 and (await _json(resp)) == {"ok": True, "id": "standup"}
    assert (await c.delete("/api/cron/standup", headers=AUTH)).status == 404
    assert (await c.post("/api/cron/standup/run", headers=AUTH)).status == 404


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({"id": "Bad_Id", "every": "1h", "message": "x"}, "invalid id"),
        ({"id": "-x", "every": "1h", "message": "x"}, "invalid id"),
        ({"id": "x", "message": "x"}, "exactly one of schedule, every or at"),
        ({"id": "x", "every": "1h", "schedule": "* * * * *", "message": "x"}, "exactly one"),
        ({"id": "x", "schedule": "61 * * * *", "message": "x"}, "invalid schedule"),
        ({"id": "x", "schedule": "* * * * * *", "message": "x"}, "expected 5 fields"),
        ({"id": "x", "schedule": "0 9 * * *", "tz": "Mars/Base", "message": "x"}, "time zone"),
        ({"id": "x", "every": "soon", "message": "x"}, "invalid every"),
        ({"id": "x", "at": "2001-01-01T00:00:00Z", "message": "x"}, "at is in the past"),
        ({"id": "x", "every": "1h", "message": "x", "deliver": {"channel": "telegram"}}, "to"),
        ({"id": "x", "every": "1h", "message": "x", "agentId": "ghost"}, "unknown agent"),
    ],
)
async def test_cron_api_rejects_bad_jobs_with_400(
    make_client: ClientFactory, body: dict[str, Any], needle: str
) -> None:
    c, _, _ = await make_client({"agents": {"list": [{"id": "main"}]}})
    resp = await c.post("/api/cron", headers=AUTH, json=body)
    assert resp.status == 400, await resp.text()
    assert needle in (await _json(resp))["error"]["message"]


async def test_cron_api_bad_id_in_path_and_config_jobs(make_client: ClientFactory) -> None:
    c, _, _ = await make_client({"cron": {"jobs": [{"id": "cfg", "every": "1h", "message": "x"}]}})
    assert (await c.delete("/api/cron/NOPE", headers=AUTH)).status == 400
    resp = await c.delete("/api/cron/cfg", headers=AUTH)
    assert resp.status == 409 and "config" in (await _json(resp))["error"]["message"]
    spec = await _json(await c.get("/openapi.json"))
    assert {"/api/cron", "/api/cron/{id}", "/api/cron/{id}/run", "/hooks/{path}"} <= set(
        spec["paths"]
    )


def _hooks(**mapping: Any) -> dict[str, Any]:
    return {
        "hooks": {
            "maxBodyBytes": 2048,
            "mappings": [
                {
                    "id": "ci",
                    "path": "ci/github",
                    "token": HOOK_TOKEN,
                    "messageTemplate": "CI {{ body.status }} on {{ body.repo }}",
                    "deliver": CHAT,
                    **mapping,
                }
            ],
        }
    }


async def test_hook_auth_404_401_400(make_client: ClientFactory) -> None:
    c, _, _ = await make_client(_hooks())
    # which paths exist is not told without a hook's token (nor with the gateway's)
    for headers in ({}, AUTH, {"x-crosstalk-hook-token": "wrong"}):
        assert (await c.post("/hooks/nope", json={}, headers=headers)).status == 401
    nope = await c.post("/hooks/nope", json={}, headers={"x-crosstalk-hook-token": HOOK_TOKEN})
    assert nope.status == 404
    assert (await c.post("/hooks/ci/github", json={})).status == 401
    assert (
        await c.post("/hooks/ci/github", json={}, headers={"Authorization": "Bearer wrong-token"})
    ).status == 401
    assert (await c.post("/hooks/ci/github", json={}, headers=AUTH)).status == 401  # gateway
    assert (
        await c.post("/hooks/ci/github", json={}, headers={"x-crosstalk-hook-token": "héllo-wrong"})
    ).status == 401
    big = await c.post(
        "/hooks/ci/github", json={"x": "y" * 4096}, headers={"x-crosstalk-hook-token": HOOK_TOKEN}
    )
    assert big.status == 400 and "too large" in (await _json(big))["error"]["message"]
    bad = await c.post(
        "/hooks/ci/github", data=b"{nope", headers={"x-crosstalk-hook-token": HOOK_TOKEN}
    )
    assert bad.status == 400


async def test_hook_body_that_breaks_the_template_is_a_400(make_client: ClientFactory) -> None:
    """The caller picks the values the operator's template computes with: `1 + "a"` or a
    `join` of a number was a 500; it is the caller's error, and no turn runs."""
    c, rt, chat = await make_client(
        _hooks(messageTemplate="{{ body.items | join(', ') }} +{{ body.n + 1 }}")
    )
    for body in ({"items": 5, "n": 1}, {"items": ["a"], "n": "x"}):
        resp = await c.post(
            "/hooks/ci/github", json=body, headers={"x-crosstalk-hook-token": HOOK_TOKEN}
        )
        assert resp.status == 400, await resp.text()
        assert (await _json(resp))["error"]["message"].startswith("messageTemplate failed: ")
    main = await rt.services.ensure_session("agent:main:main")
    listed = await rt.tools.invoke(
        rt.tool_env, "sessions_list", {"kinds": ["hook"]}, rt.services.context_for(main, via="http")
    )
    assert listed["count"] == 0 and chat.sent == []


async def test_hook_renders_the_template_runs_and_delivers(
    make_client: ClientFactory, fake_model: FakeModelServer
) -> None:
    c, rt, chat = await make_client(_hooks())
    resp = await c.post(
        "/hooks/ci/github",
        json={"status": "failed", "repo": "acme/app"},
        headers={"Authorization": f"Bearer {HOOK_TOKEN}"},
    )
    assert resp.status == 202
    body = await _json(resp)
    assert body["ok"] is True and body["sessionKey"].startswith("agent:main:hook:")
    sent = await chat.wait_for("echo: CI failed on acme/app")
    assert sent[0][0].to == "room-9"
    # a new hook session per request, listed as kind hook / channel internal
    resp2 = await c.post(
        "/hooks/ci/github?wait=true",
        json={"status": "ok", "repo": "r"},
        headers={"x-crosstalk-hook-token": HOOK_TOKEN},
    )
    assert resp2.status == 200
    waited = await _json(resp2)
    assert waited["status"] == "ok" and waited["reply"] == "echo: CI ok on r"
    assert waited["sessionKey"] != body["sessionKey"] and waited["runId"]
    main = await rt.services.ensure_session("agent:main:main")
    listed = await rt.tools.invoke(
        rt.tool_env, "sessions_list", {"kinds": ["hook"]}, rt.services.context_for(main, via="http")
    )
    rows = {r["key"]: (r["kind"], r["channel"]) for r in listed["sessions"]}
    assert rows == {
        body["sessionKey"]: ("hook", "internal"),
        waited["sessionKey"]: ("hook", "internal"),
    }
    deliveries = await eventually(
        lambda: rt.store.list_deliveries(session_key=waited["sessionKey"]), what="delivery"
    )
    assert [(d.kind, d.outcome) for d in deliveries] == [("hook", "delivered")]


async def test_hook_sandboxed_template_and_fixed_session(make_client: ClientFactory) -> None:
    c, _, chat = await make_client(
        _hooks(sessionKey="ci-feed", deliver="none", messageTemplate="{{ body.__class__.__mro__ }}")
    )
    resp = await c.post(
        "/hooks/ci/github?wait=true", json={"a": 1}, headers={"x-crosstalk-hook-token": HOOK_TOKEN}
    )
    # the sandbox refuses dunder access: the template renders nothing, so the hook is refused
    assert resp.status == 400
    assert chat.sent == []


async def test_hook_send_policy_suppresses_the_delivery(make_client: ClientFactory) -> None:
    c, rt, chat = await make_client(
        {
            **_hooks(sessionKey="ci-feed"),
            "session": {
                "sendPolicy": {
                    "rules": [{"action": "deny", "match": {"keyPrefix": "agent:main:ci"}}]
                }
            },
        }
    )
    resp = await c.post(
        "/hooks/ci/github?wait=true",
        json={"status": "x", "repo": "y"},
        headers={"x-crosstalk-hook-token": HOOK_TOKEN},
    )
    body = await _json(resp)
    assert resp.status == 200 and body["sessionKey"] == "agent:main:ci-feed"
    assert body["status"] == "ok"
    deliveries = await eventually(
        lambda: rt.store.list_deliveries(session_key="agent:main:ci-feed"), what="delivery"
    )
    assert [(d.kind, d.outcome) for d in deliveries] == [("hook", "suppressed_by_policy")]
    assert chat.sent == []


async def test_hook_wait_reports_a_failed_turn(
    make_client: ClientFactory, fake_model: FakeModelServer
) -> None:
    fake_model.script(error(500, "boom"))
    c, _, chat = await make_client(_hooks())
    resp = await c.post(
        "/hooks/ci/github?wait=true",
        json={"status": "s", "repo": "r"},
        headers={"x-crosstalk-hook-token": HOOK_TOKEN},
    )
    body = await _json(resp)
    assert resp.status == 200 and body["status"] == "error" and body["reply"] is None
    assert "error" not in body  # the provider's detail stays in the gateway log (D12)
    assert fake_model.pending_script == 0
    assert chat.sent == []
