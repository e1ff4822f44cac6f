"""The inbound pipeline (D98): named steps in order, and steps a plugin adds around them."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.features.extension.context import PluginContext
from core.features.inbound.pipeline import (
    Inbound,
    InboundStep,
    InboundStepError,
    InboundSteps,
    Proceed,
)
from core.features.inbound.router import BUILT_IN_STEPS
from core.model.delivery_context import DeliveryContext
from core.model.inbound import InboundMessage
from tests.narrow import narrow_parts


def _msg(text: str = "hi") -> InboundMessage:
    return InboundMessage(
        channel="testchat",
        chat_type="direct",
        chat_id="u1",
        sender_id="u1",
        text=text,
        reply_to=DeliveryContext(channel="testchat", to="u1"),
    )


def _step(name: str, seen: list[str], *, stop: bool = False) -> InboundStep:
    async def run(inbound: Inbound, proceed: Proceed) -> None:
        seen.append(name)
        if not stop:
            await proceed()

    return InboundStep(name, run)


async def test_steps_run_in_order_and_a_step_may_stop_the_rest() -> None:
    seen: list[str] = []
    steps = InboundSteps()
    for name in ("a", "c"):
        steps.append(_step(name, seen))
    steps.insert(_step("b", seen, stop=True), after="a")
    steps.insert(_step("first", seen), before="a")
    assert steps.names == ["first", "a", "b", "c"]
    await steps.handle(Inbound(_msg()))
    assert seen == ["first", "a", "b"]  # b stopped: c never ran


def test_placing_relative_to_nothing_or_twice_is_refused() -> None:
    steps = InboundSteps()
    steps.append(_step("a", []))
    with pytest.raises(InboundStepError, match="no inbound step named 'zz'"):
        steps.insert(_step("b", []), before="zz")
    with pytest.raises(InboundStepError, match="already registered: a"):
        steps.append(_step("a", []))
    with pytest.raises(InboundStepError, match="exactly one"):
        steps.insert(_step("c", []), before="a", after="a")


async def test_the_router_holds_the_built_in_steps_in_their_order(tmp_path: Path) -> None:
    async with narrow_parts(tmp_path) as p:
        assert p.router.steps.names == list(BUILT_IN_STEPS)
        assert BUILT_IN_STEPS == (
            "dedup",
            "admission",
            "route",
            "answer",
            "command",
            "mention",
            "policy",
            "limits",
            "run",
        )


async def test_a_plugin_step_sees_the_routed_message_and_the_run_still_happens(
    tmp_path: Path,
) -> None:
    seen: list[tuple[str | None, bool]] = []

    async def spy(inbound: Inbound, proceed: Proceed) -> None:
        seen.append((inbound.session_key, inbound.entry is not None))
        await proceed()

    async with narrow_parts(tmp_path) as p:
        ctx = PluginContext("spy", tools=p.tools, commands=p.commands, inbound=p.router.steps)
        ctx.add_inbound_step(InboundStep("spy", spy), before="run")
        await p.adapter.inject(p.adapter.message("hello"))
        assert await p.adapter.wait_sent(1) == ["echo: hello"]
        assert seen == [("agent:main:main", True)]


async def test_a_plugin_step_that_stops_keeps_the_turn_from_running(tmp_path: Path) -> None:
    async def quiet_hours(inbound: Inbound, proceed: Proceed) -> None:
        if "tonight" in inbound.message.text:
            return  # the plugin answers nothing and starts no run
        await proceed()

    async with narrow_parts(tmp_path) as p:
        p.router.steps.insert(InboundStep("quiet", quiet_hours), after="policy")
        await p.adapter.inject(p.adapter.message("see you tonight"))
        await p.adapter.inject(p.adapter.message("hello"))
        assert await p.adapter.wait_sent(1) == ["echo: hello"]
        assert p.executor.turns == ["hello"]
