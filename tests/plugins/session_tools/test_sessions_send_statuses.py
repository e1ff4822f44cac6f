"""`sessions_send` statuses (R3.1–R3.2): accepted, ok with the reply and the message context,
timeout, error; a session's send policy blocking the run (D5)."""

from __future__ import annotations

from core.store import TranscriptMessage
from plugins.session_tools.reply_text import reply_of
from tests.conftest import RuntimeFactory
from tests.fakes.model import FakeModelServer, delay, error, last_user_text, system_text, text
from tests.plugins.session_tools.send_helpers import (
    MAIN,
    NO_A2A,
    REQ,
    TARGET,
    a2a_done,
    assert_uuid,
    runs_in,
    send,
    session_of,
)

# ---- statuses --------------------------------------------------------------------------------


async def test_fire_and_forget_returns_accepted_with_the_run_id(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime(NO_A2A)
    for timeout in (0, -5, 0.9):
        out = await send(rt, {"sessionKey": "main", "message": "note", "timeoutSeconds": timeout})
        assert out == {
            "runId": out["runId"],
            "status": "accepted",
            "sessionKey": "main",
            "delivery": {"status": "pending", "mode": "announce"},
        }
        run = await rt.store.get_run(out["runId"])
        assert run is not None and run.session_key == MAIN and run.lane == "nested"
        assert not run.deliver
        assert (await rt.runs.wait(out["runId"], 10)).status == "ok"
    await a2a_done(rt)


async def test_ok_carries_the_reply_and_the_message_context(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime(NO_A2A)
    fake_model.set_responder(lambda req: text("done") if session_of(req) == MAIN else None)
    # A non-numeric timeout means the default wait (30 s), not an error.
    out = await send(rt, {"sessionKey": "main", "message": "do it", "timeoutSeconds": "soon"})
    assert out == {
        "runId": out["runId"],
        "status": "ok",
        "reply": "done",
        "sessionKey": "main",
        "delivery": {"status": "pending", "mode": "announce"},
    }
    prompt = system_text(fake_model.requests[0])
    assert (
        "Agent-to-agent message context:\n"
        f"Agent 1 (requester) session: {REQ}.\n"
        "Agent 1 (requester) channel: discord.\n"
        "Agent 2 (target) session: main."
    ) in prompt
    assert last_user_text(fake_model.requests[0]) == "do it"
    run = await rt.store.get_run(out["runId"])
    assert run is not None and run.meta is not None and run.meta["hops"] == 1
    await a2a_done(rt)


async def test_requester_without_channel_has_no_channel_line(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime(NO_A2A)
    out = await send(
        rt, {"sessionKey": TARGET, "message": "x", "timeoutSeconds": 5}, key=MAIN, via="http"
    )
    assert out["status"] == "ok"
    prompt = system_text(fake_model.requests[0])
    assert f"Agent 1 (requester) session: {MAIN}." in prompt
    assert "Agent 1 (requester) channel:" not in prompt
    await a2a_done(rt)


async def test_reply_strips_thinking(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime(NO_A2A)
    fake_model.script(text("Hi <think>secret</think>there"))
    out = await send(rt, {"sessionKey": TARGET, "message": "x", "timeoutSeconds": 5})
    assert out["reply"] == "Hi there"
    await a2a_done(rt)


def test_reply_extraction_rules() -> None:
    def assistant(*texts: str) -> TranscriptMessage:
        return TranscriptMessage("assistant", [{"type": "text", "text": t} for t in texts], 0)

    assert reply_of([assistant("Hi ", "<think>secret</think>there")]) == "Hi there"
    assert reply_of([assistant("a"), TranscriptMessage.text("user", "later", 0)]) is None
    assert reply_of([assistant("<thinking>only</thinking>", "  ")]) is None
    assert reply_of([assistant("[Tool Call: read (ID: c1)]done")]) == "done"
    assert reply_of([]) is None


async def test_slow_target_times_out_and_the_run_still_finishes(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime()
    fake_model.script(delay(1.5, text("late")))
    out = await send(rt, {"sessionKey": TARGET, "message": "x", "timeoutSeconds": 1.9})
    assert out == {"runId": out["runId"], "status": "timeout", "sessionKey": TARGET}
    # The wait is server-side and persisted: a later wait on the same id gets the end.
    assert (await rt.runs.wait(out["runId"], 10)).status == "ok"
    assert not rt.background.named("run_a2a_flow")
    assert len(fake_model.requests) == 1


async def test_failed_target_run_is_an_error(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime()
    fake_model.script(error(400, "boom"))
    out = await send(rt, {"sessionKey": TARGET, "message": "x", "timeoutSeconds": 5})
    # D12: the provider's body ("boom") stays in the log, callers get the public text
    assert out["status"] == "error" and out["error"] == (
        "⚠️ The model provider failed (HTTP 400). Details are in the gateway log."
    )
    assert out["sessionKey"] == TARGET and "reply" not in out
    await a2a_done(rt)
    assert len(fake_model.requests) == 1


async def test_send_policy_deny_blocks_the_run(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime()
    await rt.services.ensure_session(TARGET, send_policy="deny")
    out = await send(rt, {"sessionKey": TARGET, "message": "x", "timeoutSeconds": 5})
    assert out["status"] == "error" and out["error"] == "send blocked by session policy"
    assert out["sessionKey"] == TARGET
    assert_uuid(out["runId"])
    assert await rt.store.get_run(out["runId"]) is None
    assert await runs_in(rt, TARGET) == [] and fake_model.requests == []
