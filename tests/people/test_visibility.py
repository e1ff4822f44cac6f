"""D61: session tools scoped by role, before `limit`, "not visible" answered as "not found";
on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from core.config import CrosstalkConfig
from core.model.records import TranscriptMessage
from core.model.roles import Role
from core.model.tool_context import ToolContext
from core.runtime import Runtime
from core.store import Store, now_ms
from plugins.session_tools.sessions_spawn import OWNER_ONLY_MODEL
from tests.conftest import ConfigFactory
from tests.pg import fresh_pg_database

OWNER_MAIN = "agent:main:main"
MEMBER = "agent:main:telegram:dm:7"
CHILD = "agent:main:subagent:child-1"
GRANDCHILD = "agent:main:subagent:child-2"
GUEST = "agent:main:telegram:dm:9"
OTHER = "agent:main:telegram:group:-100"
NON_OWNERS: tuple[tuple[str, Role], ...] = ((MEMBER, "member"), (GUEST, "guest"))


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def rt(
    request: pytest.FixtureRequest, tmp_path: Path, make_config: ConfigFactory
) -> AsyncIterator[Runtime]:
    config: CrosstalkConfig = make_config({"session": {"dmScope": "per-channel-peer"}})
    if request.param == "sqlite":
        runtime = Runtime(config)
        await runtime.start(adapters=[], probe_models=False)
        yield runtime
        await runtime.stop()
        return
    async with fresh_pg_database() as url:
        runtime = Runtime(config, store=Store(url, tmp_path / "pg-state"))
        await runtime.start(adapters=[], probe_models=False)
        yield runtime
        await runtime.stop()


async def _seed(rt: Runtime) -> None:
    s = rt.services
    main = await s.ensure_session(OWNER_MAIN)
    await rt.store.append_messages(
        main, [TranscriptMessage.text("user", "my bank PIN is 9999", now_ms())]
    )
    await s.ensure_session(MEMBER)
    await s.ensure_session(CHILD, spawned_by=MEMBER)
    await s.ensure_session(GRANDCHILD, spawned_by=CHILD)
    await s.ensure_session(GUEST)
    await s.ensure_session(OTHER)
    for i in range(5):  # newer than everything of the member's: scope must come before limit
        await s.ensure_session(f"agent:main:telegram:dm:owner-{i}")


async def _ctx(rt: Runtime, key: str, role: Role) -> ToolContext:
    entry = await rt.services.ensure_session(key)
    return rt.services.context_for(entry, role=role)


async def call(rt: Runtime, key: str, role: Role, tool: str, **args: Any) -> dict[str, Any]:
    return await rt.tools.invoke(rt.tool_env, tool, args, await _ctx(rt, key, role))


async def _listed(rt: Runtime, key: str, role: Role, **args: Any) -> set[str]:
    out = await call(rt, key, role, "sessions_list", **args)
    return {r["key"] for r in out["sessions"]}


async def test_each_role_lists_its_scope_before_limit(rt: Runtime) -> None:
    await _seed(rt)
    assert await _listed(rt, MEMBER, "member") == {MEMBER, CHILD, GRANDCHILD}
    assert await _listed(rt, MEMBER, "member", limit=3) == {MEMBER, CHILD, GRANDCHILD}
    assert await _listed(rt, GUEST, "guest") == {GUEST}
    owner = await _listed(rt, OWNER_MAIN, "owner")
    assert {"main", MEMBER, GUEST, OTHER, CHILD} <= owner  # its own main shows as "main"
    # a member's sub-agent reaches no further than its own tree
    assert await _listed(rt, CHILD, "member") == {CHILD, GRANDCHILD}


async def test_a_member_cannot_read_or_send_to_the_owners_session(rt: Runtime) -> None:
    await _seed(rt)
    main = await rt.store.get_session(OWNER_MAIN)
    assert main is not None
    for raw in ("main", OWNER_MAIN, main.session_id, GUEST, "agent:main:nothing-here"):
        out = await call(rt, MEMBER, "member", "sessions_history", sessionKey=raw)
        assert out == {"status": "error", "error": f"No session found: {raw}"}, out
    ok = await call(rt, MEMBER, "member", "sessions_history", sessionKey=GRANDCHILD)
    assert "error" not in ok and ok["sessionKey"] == GRANDCHILD
    for raw in ("main", "agent:main:nothing-here"):
        sent = await call(rt, MEMBER, "member", "sessions_send", sessionKey=raw, message="hi")
        assert {k: v for k, v in sent.items() if k != "runId"} == {
            "status": "error",
            "error": f"No session found: {raw}",
        }, sent
    assert await rt.store.last_run(OWNER_MAIN) is None  # nothing ran in the owner's session
    assert await rt.store.get_session("agent:main:nothing-here") is None  # nothing created


async def test_not_visible_equals_not_found_byte_for_byte(rt: Runtime) -> None:
    await _seed(rt)
    seen = await call(rt, GUEST, "guest", "sessions_history", sessionKey=OWNER_MAIN)
    unseen = await call(rt, GUEST, "guest", "sessions_history", sessionKey="agent:main:zzzz")
    assert repr(seen).replace(OWNER_MAIN, "K") == repr(unseen).replace("agent:main:zzzz", "K")


async def test_a_label_outside_the_scope_is_not_found(rt: Runtime) -> None:
    await _seed(rt)
    await rt.store.set_label(OWNER_MAIN, "bank")
    out = await call(rt, MEMBER, "member", "sessions_send", label="bank", message="x")
    assert out["status"] == "error" and out["error"] == "No session found with label: bank"


async def test_the_gateway_token_keeps_owner_scope(rt: Runtime) -> None:
    await _seed(rt)
    ctx = replace(await _ctx(rt, MEMBER, "guest"), via="http")
    out = await rt.tools.invoke(rt.tool_env, "sessions_list", {}, ctx)
    assert "main" in {r["key"] for r in out["sessions"]}


async def test_scopes_are_configurable(make_config: ConfigFactory, tmp_path: Path) -> None:
    config = make_config(
        {"tools": {"sessions": {"visibility": {"member": "agent", "owner": "self"}}}}
    )
    runtime = Runtime(config)
    await runtime.start(adapters=[], probe_models=False)
    try:
        await _seed(runtime)
        assert "main" in await _listed(runtime, MEMBER, "member")
        assert await _listed(runtime, OWNER_MAIN, "owner") == {"main"}
    finally:
        await runtime.stop()


def _same_but_the_key(seen: dict[str, Any], key: str, unseen: dict[str, Any], absent: str) -> None:
    """Byte for byte apart from the key (and a run id, which every call gets anew)."""

    def shown(out: dict[str, Any], raw: str) -> str:
        out = {k: ("R" if k == "runId" else v) for k, v in out.items()}
        return json.dumps(out, ensure_ascii=False, sort_keys=False).replace(raw, "K")

    assert shown(seen, key) == shown(unseen, absent), (seen, unseen)


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("sessions_history", {}),
        ("sessions_send", {"message": "x"}),
        ("sessions_search", {"query": "PIN"}),
        ("session_status", {}),
    ],
)
async def test_every_session_tool_answers_not_visible_as_not_found(
    rt: Runtime, tool: str, args: dict[str, Any]
) -> None:
    """D61 for each tool that takes a session: the owner's session, however named, reads as a
    session that does not exist, for a member and a guest alike."""
    await _seed(rt)
    main = await rt.store.get_session(OWNER_MAIN)
    assert main is not None
    for key, role in NON_OWNERS:
        if tool == "sessions_send" and role == "guest":
            continue  # not offered to guests at all (D63), let alone scoped
        for raw in ("main", OWNER_MAIN, main.session_id, OTHER):
            seen = await call(rt, key, role, tool, sessionKey=raw, **args)
            absent = raw[:-3] + "zzz"
            unseen = await call(rt, key, role, tool, sessionKey=absent, **args)
            assert seen["status"] == "error", seen
            _same_but_the_key(seen, raw, unseen, absent)
    assert await rt.store.last_run(OWNER_MAIN) is None


async def test_a_label_and_a_run_outside_the_scope_read_as_absent_ones(rt: Runtime) -> None:
    """sessions_send by label and subagents' cancel by run id: the same answer as for a label or
    run that does not exist."""
    await _seed(rt)
    await rt.store.set_label(OWNER_MAIN, "bank")
    seen = await call(rt, MEMBER, "member", "sessions_send", label="bank", message="x")
    unseen = await call(rt, MEMBER, "member", "sessions_send", label="bonk", message="x")
    _same_but_the_key(seen, "bank", unseen, "bonk")
    owner = await _ctx(rt, OWNER_MAIN, "owner")
    spawned = await rt.tools.invoke(rt.tool_env, "sessions_spawn", {"task": "count"}, owner)
    assert spawned["status"] == "accepted", spawned
    run_id = spawned["runId"]
    absent = run_id[:-4] + "ffff" if not run_id.endswith("ffff") else run_id[:-4] + "eeee"
    for key, role in NON_OWNERS:
        seen = await call(rt, key, role, "subagents", action="cancel", runId=run_id)
        unseen = await call(rt, key, role, "subagents", action="cancel", runId=absent)
        assert seen["status"] == "error", seen
        _same_but_the_key(seen, run_id, unseen, absent)
        listed = await call(rt, key, role, "subagents", action="list")
        assert listed["count"] == 0


async def test_only_an_owner_picks_a_sub_agents_model(rt: Runtime) -> None:
    """A spawn's `model` is the child session's model override, which only an owner sets (D67):
    a member's agent (a prompt injection in its chat) cannot put its sub-agents on the most
    expensive model configured. Without `model` it spawns as before."""
    await _seed(rt)
    out = await call(rt, MEMBER, "member", "sessions_spawn", task="count", model="fake/fake-model")
    assert out["status"] == "forbidden" and out["error"] == OWNER_ONLY_MODEL, out
    assert [
        k for k in await rt.store.session_tree(MEMBER) if k not in (MEMBER, CHILD, GRANDCHILD)
    ] == []
    plain = await call(rt, MEMBER, "member", "sessions_spawn", task="count")
    assert plain["status"] == "accepted", plain
    owner = await call(rt, OWNER_MAIN, "owner", "sessions_spawn", task="c", model="fake/fake-model")
    assert owner["status"] == "accepted", owner
