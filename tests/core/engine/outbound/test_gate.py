"""The outbound gate: every path is policy-checked, retried on rate limits, and logged."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from core.api.testing import RecordingAdapter
from core.engine.outbound.delivery import Outbound
from core.model.delivery_context import DeliveryContext
from core.model.errors import RateLimited, TargetForbidden
from core.runtime import Runtime
from tests.conftest import RuntimeFactory

ROOT = Path(__file__).resolve().parents[4]
KINDS = ("reply", "announce", "tool_send", "command_reply", "notice")


async def _runtime(
    make_runtime: RuntimeFactory, extra: dict[str, Any] | None = None
) -> tuple[Runtime, RecordingAdapter]:
    adapter = RecordingAdapter(text_limit=20)
    rt = await make_runtime(extra, adapters=[adapter])
    await rt.services.ensure_session(
        "agent:main:testchat:group:g1", channel="testchat", chat_type="group"
    )
    await rt.store.update_session(
        "agent:main:testchat:group:g1",
        last_channel="testchat",
        last_to="g1",
        last_account_id="default",
    )
    return rt, adapter


async def test_every_kind_is_suppressed_by_deny_and_logged(make_runtime: RuntimeFactory) -> None:
    rt, adapter = await _runtime(
        make_runtime,
        {
            "session": {
                "sendPolicy": {
                    "rules": [
                        {"action": "deny", "match": {"channel": "testchat", "chatType": "group"}}
                    ]
                }
            }
        },
    )
    for kind in KINDS:
        result = await rt.gate.deliver(
            Outbound(
                f"{kind} text",
                kind,  # type: ignore[arg-type]
                "agent:main:testchat:group:g1",
            )
        )
        assert result.outcome == "suppressed_by_policy"
        assert result.reason == "rule 1: channel=testchat, chatType=group"
    assert adapter.sent == []
    log = await rt.store.list_deliveries(outcome="suppressed_by_policy")
    assert sorted(d.kind for d in log) == sorted(KINDS)
    assert all(d.to == "g1" and d.channel == "testchat" for d in log)


async def test_every_kind_is_delivered_when_allowed(make_runtime: RuntimeFactory) -> None:
    rt, adapter = await _runtime(make_runtime)
    for kind in KINDS:
        result = await rt.gate.deliver(
            Outbound(
                kind,
                kind,  # type: ignore[arg-type]
                "agent:main:testchat:group:g1",
            )
        )
        assert result.delivered
    assert [t for _, t in adapter.sent] == list(KINDS)
    assert len(await rt.store.list_deliveries(outcome="delivered")) == len(KINDS)


async def test_owner_command_reply_passes_a_deny_and_says_so(make_runtime: RuntimeFactory) -> None:
    rt, adapter = await _runtime(make_runtime)
    await rt.store.update_session("agent:main:testchat:group:g1", send_policy="deny")
    ok = await rt.gate.deliver(
        Outbound("⚙️ done", "command_reply", "agent:main:testchat:group:g1", owner_command=True)
    )
    blocked = await rt.gate.deliver(
        Outbound("⚙️ done", "command_reply", "agent:main:testchat:group:g1")
    )
    assert ok.delivered and blocked.outcome == "suppressed_by_policy"
    assert ok.reason is not None and "owner command reply despite deny" in ok.reason
    assert [t for _, t in adapter.sent] == ["⚙️ done"]


async def test_long_text_is_split_at_the_adapter_limit(make_runtime: RuntimeFactory) -> None:
    rt, adapter = await _runtime(make_runtime)
    result = await rt.gate.deliver(
        Outbound("one two three four five six seven", "reply", "agent:main:testchat:group:g1")
    )
    assert result.delivered and len(result.receipts) == 2
    assert [t for _, t in adapter.sent] == ["one two three four", "five six seven"]


async def test_rate_limit_on_a_later_chunk_resumes_there(make_runtime: RuntimeFactory) -> None:
    """A 429 on chunk 2 retries chunk 2 only: chunk 1 (which has a receipt) is not re-sent."""
    rt, adapter = await _runtime(make_runtime)
    adapter.fail_text["five six seven"] = [RateLimited("slow down", 0.01)]
    result = await rt.gate.deliver(
        Outbound("one two three four five six seven", "reply", "agent:main:testchat:group:g1")
    )
    assert [t for _, t in adapter.sent] == ["one two three four", "five six seven"]
    assert result.delivered and result.attempts == 2
    assert [r.message_id for r in result.receipts] == ["1", "2"]
    [row] = await rt.store.list_deliveries(outcome="delivered")
    chunks = (await rt.store.chunks_of([row.id or 0]))[row.id or 0]
    assert [(c.state, c.platform_message_id) for c in chunks] == [("sent", "1"), ("sent", "2")]


async def test_a_failed_chunk_keeps_the_receipts_of_the_ones_before(
    make_runtime: RuntimeFactory,
) -> None:
    rt, adapter = await _runtime(make_runtime)
    adapter.fail_text["five six seven"] = [TargetForbidden("bot was kicked")]
    result = await rt.gate.deliver(
        Outbound("one two three four five six seven", "reply", "agent:main:testchat:group:g1")
    )
    assert result.outcome == "failed" and [r.message_id for r in result.receipts] == ["1"]
    [row] = await rt.store.list_deliveries(outcome="failed")
    chunks = (await rt.store.chunks_of([row.id or 0]))[row.id or 0]
    assert [(c.state, c.platform_message_id, c.reason) for c in chunks] == [
        ("sent", "1", None),
        ("failed", None, "TargetForbidden: bot was kicked"),
    ]


async def test_rate_limit_is_retried_then_failure_is_recorded(make_runtime: RuntimeFactory) -> None:
    rt, adapter = await _runtime(make_runtime)
    adapter.failures = [RateLimited("slow down", 0.01)]
    result = await rt.gate.deliver(Outbound("hi", "reply", "agent:main:testchat:group:g1"))
    assert result.delivered and result.attempts == 2
    adapter.failures = [TargetForbidden("bot was kicked")]
    result = await rt.gate.deliver(Outbound("hi", "reply", "agent:main:testchat:group:g1"))
    assert result.outcome == "failed"
    assert result.reason == "TargetForbidden: bot was kicked"
    adapter.failures = [RateLimited("slow down", 0.0) for _ in range(10)]
    result = await rt.gate.deliver(Outbound("hi", "reply", "agent:main:testchat:group:g1"))
    assert result.outcome == "failed" and "rate limited after" in (result.reason or "")
    failed = await rt.store.list_deliveries(outcome="failed")
    assert len(failed) == 2


async def test_missing_target_or_channel_is_a_logged_failure(make_runtime: RuntimeFactory) -> None:
    rt, _ = await _runtime(make_runtime)
    no_route = await rt.gate.deliver(Outbound("hi", "notice", "agent:main:nowhere"))
    assert no_route.outcome == "failed" and no_route.reason == "no delivery target for this session"
    unknown = await rt.gate.deliver(
        Outbound("hi", "notice", None, target=DeliveryContext(channel="irc", to="#x"))
    )
    assert unknown.outcome == "failed" and unknown.reason == "channel not connected: irc"
    assert len(await rt.store.list_deliveries(outcome="failed")) == 2


def test_no_module_but_the_gate_calls_send_text() -> None:
    """The single choke point: `send_text` is called only from core/engine/outbound/gate.py.

    (An adapter may call its own methods on `self`: it is only ever entered through the gate.)
    """
    offenders = []
    for folder in ("core", "adapters", "plugins"):
        for path in (ROOT / folder).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr
                    in (
                        "send_text",
                        "send_media",
                        "send_preview",
                        "send_final",
                        "send_typing",
                    )
                ):
                    rel = path.relative_to(ROOT).as_posix()
                    own = isinstance(node.func.value, ast.Name) and node.func.value.id == "self"
                    adapter = folder == "adapters" or rel == "core/model/channel.py"  # D37
                    if rel != "core/engine/outbound/gate.py" and not (own and adapter):
                        offenders.append(f"{rel}:{node.lineno}")
    assert offenders == []


async def test_the_retry_step_is_the_one_recovery_resends_through(
    make_runtime: RuntimeFactory,
) -> None:
    """`OutboundGate.retrying` (D99): a rate limit is waited out `max_retries` times, then it
    is raised; recovery's in-doubt resends use it instead of a loop of their own."""
    rt = await make_runtime()
    calls: list[int] = []

    async def send(limit: int) -> str:
        calls.append(len(calls))
        if len(calls) <= limit:
            raise RateLimited("slow down", 0.0)
        return "sent"

    assert await rt.gate.retrying(lambda: send(rt.gate.max_retries)) == "sent"
    assert len(calls) == rt.gate.max_retries + 1
    calls.clear()
    try:
        await rt.gate.retrying(lambda: send(99))
    except RateLimited:
        pass
    else:
        raise AssertionError("the last rate limit is raised")
    assert len(calls) == rt.gate.max_retries + 1
