"""A sub-agent of a member cannot reach further than the member (D60, D63): the member's model,
obeying the chat, spawns a child to call an MCP tool the member may not use; the child carries
the member's role, so the tool is neither offered to it nor runs. The owner's child, spawned the
same way, is offered the tool and runs it. Sub-agents never get session tools or cron (R4.7),
whoever spawned them. Messages enter through the inbound pipeline (admission sets the role)."""

from __future__ import annotations

import json
import re
from typing import Any

from core.api.testing import RecordingAdapter
from core.runtime import Runtime
from tests.conftest import RuntimeFactory
from tests.fakes.mcp_server import REPO_ROOT, STDIO_COMMAND
from tests.fakes.model import FakeModelServer
from tests.fakes.model_script import (
    RequestJSON,
    content_text,
    last_message,
    last_user_text,
    text,
    tool_call,
    tool_names,
)
from tests.polling import eventually

CALC = {
    "command": STDIO_COMMAND[0],
    "args": STDIO_COMMAND[1:],
    "env": {"PYTHONPATH": REPO_ROOT},
    "timeoutSeconds": 15,
}
TG = {"botToken": "1:x", "owners": ["10"], "allowFrom": ["20"], "streaming": "off"}
CALL = re.compile(r"call (\w+) (\{.*\})", re.S)
ADD = 'call calc__add {"a": 2, "b": 3}'


def obedient(req: RequestJSON) -> Any:
    """Calls the tool the user's text names, then says what it got back."""
    last = last_message(req)
    if last.get("role") == "tool":
        return text("RESULT " + content_text(last.get("content")))
    found = CALL.search(last_user_text(req))
    if found is None:
        return text(f"echo: {last_user_text(req)}")
    return tool_call(found.group(1), json.loads(found.group(2)))


async def spawn_adder(
    rt: Runtime, tg: RecordingAdapter, fake_model: FakeModelServer, sender: str
) -> tuple[list[str], str, str]:
    """`sender` asks for a child that adds; the child's offered tools, its tool result, and
    the role its run carries."""
    mark = len(fake_model.requests)
    before = len(tg.sent)
    await tg.say(f"call sessions_spawn {json.dumps({'task': ADD})}", chat_id=sender, sender=sender)

    async def answered() -> Any:
        for where, said in tg.sent[before:]:  # (an earlier child's announce may come between)
            if where.to == sender and '"childSessionKey"' in said:
                return json.loads(said.removeprefix("RESULT "))
        return None

    spawned = await eventually(answered, 20, f"the spawn's answer to {sender}")
    assert spawned["status"] == "accepted", spawned

    async def child() -> tuple[RequestJSON, RequestJSON] | None:
        mine = [r for r in fake_model.requests[mark:] if last_user_text(r) == ADD]
        done = [r for r in mine if last_message(r).get("role") == "tool"]
        return (mine[0], done[0]) if done else None

    first, after = await eventually(child, 30, f"the child of {sender} calling calc__add")
    run = await rt.store.last_run(spawned["childSessionKey"])
    assert run is not None and run.meta is not None
    result = content_text(last_message(after).get("content"))
    return tool_names(first), result, str(run.meta["request"]["role"])


async def test_a_members_sub_agent_gets_no_tool_the_member_may_not_use(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    fake_model.set_responder(obedient)
    tg = RecordingAdapter("telegram")
    rt = await make_runtime(
        {
            "session": {"dmScope": "per-channel-peer"},
            "channels": {"telegram": TG},
            "mcp": {"servers": {"calc": CALC}},
        },
        adapters=[tg],
    )
    offered, result, role = await spawn_adder(rt, tg, fake_model, "10")
    assert role == "owner" and "calc__add" in offered and "sum=5" in result
    assert not {"sessions_list", "sessions_send", "cron"} & set(offered)  # R4.7, any role

    offered, result, role = await spawn_adder(rt, tg, fake_model, "20")
    assert role == "member"
    assert not [t for t in offered if t.startswith("calc__")]  # D63 carried to the child
    assert "sum=5" not in result and "calc__add" in result, result
    # the turns that asked for the spawns: the owner's is offered the MCP tools, the member's not
    asked = [
        {t for t in tool_names(r) if t.startswith("calc__")}
        for r in fake_model.requests
        if last_user_text(r).startswith("call sessions_spawn")
        and last_message(r).get("role") == "user"
    ]
    assert len(asked) == 2 and asked[0] and not asked[1], asked
