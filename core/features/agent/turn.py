"""One agent turn with pydantic-ai: history in, new messages and usage out.

The tool context (requester session, agent, channel, sandboxed) travels as pydantic-ai `deps`,
so identity always comes from the runtime and never from model-chosen arguments.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.engine.runs.contract import DeltaSink, RunRequest, Steer, TurnResult
from core.features.access.limits import person_key
from core.features.agent.compaction import TurnContext, summary_instructions, turn_context
from core.features.agent.hooks import (
    YIELDED_MARK,
    mcp_toolset,
    stream_handler,
    with_steer,
    without_yield_mark,
)
from core.features.agent.pause import (
    deferred_results,
    mcp_server_of,
    pause_of,
    paused_messages,
    requires_approval,
)
from core.features.agent.prompts import base_system_prompt
from core.features.models.cost_gate import COST_GATE, CostGate
from core.features.models.costs import request_cost, run_cost
from core.features.models.provider_errors import provider_failure
from core.features.models.providers import ANSWERED
from core.features.models.resolver import NO_MODEL_TEXT, ModelNotAvailable
from core.features.models.turn_stop import TURN_STOP, TurnStop
from core.features.tools.availability import offered_to
from core.model.errors import ToolError
from core.model.media import MEDIA_OUT, MediaItem
from core.model.records import NOTICE, TurnWrite
from core.model.tool_context import ToolContext
from core.store import RunRecord, SessionEntry, TranscriptMessage, now_ms

if TYPE_CHECKING:
    from core.features.agent.env import TurnEnv

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Deps:
    env: TurnEnv
    context: ToolContext
    steer: Steer | None = None
    """What arrived meanwhile (`steer` mode, D75; `sessions_send` steers, D114), taken with each
    tool result into the next model request (D147)."""
    stop: TurnStop = field(default_factory=TurnStop)
    """Set by a tool call that yields the turn (`sessions_yield`, D69): the turn's model
    wrapper answers any further request itself (D147)."""

    @property
    def yielded(self) -> bool:
        return self.stop.answer is not None


MAX_AGENTS = 64
"""pydantic-ai Agents kept, one per distinct tool-name list (a handful in any configuration)."""


class PydanticAITurnExecutor:
    """Runs turns for every agent. A pydantic-ai Agent is built once per distinct list of tool
    names, with those tools in it, and reused (D40): building the toolset per turn, and passing
    it per run, cost a toolset walk at every request."""

    def __init__(self, env: TurnEnv) -> None:
        self.rt = env  # D30: typed against a narrow protocol, not the Runtime class
        self._agents: dict[tuple[str, ...], Any] = {}
        self._tools: dict[str, Any] = {}
        self._tts: Any = None  # the TextToSpeech of `voice.tts`, built on first use

    def _pai_agent(self, names: tuple[str, ...]) -> Any:
        """No capabilities (D147): pydantic-ai copies the run context for each one at every hook,
        about a tenth of a plain turn's CPU; steers join tool results and a yielded turn's model
        wrapper answers for the model instead."""
        agent = self._agents.pop(names, None)  # re-inserted last: the dict is an LRU
        if agent is None:
            from pydantic_ai import Agent, DeferredToolRequests

            from core.features.agent.listed_tools import ListedOnce

            agent = Agent(
                deps_type=Deps,
                output_type=[str, DeferredToolRequests],  # a paused turn ends with requests
                toolsets=[ListedOnce([self._tool(n) for n in names])],  # D148
            )
            if len(self._agents) >= MAX_AGENTS:
                self._agents.pop(next(iter(self._agents)))
        self._agents[names] = agent
        return agent

    def _tool(self, name: str) -> Any:
        cached = self._tools.get(name)
        if cached is not None:
            return cached
        from pydantic_ai import ApprovalRequired, CallDeferred, RunContext, Tool

        spec = self.rt.tools.get(name)
        assert spec is not None
        config = self.rt.config

        async def call(ctx: RunContext[Deps], **kwargs: Any) -> Any:
            if not ctx.tool_call_approved and requires_approval(config, name):
                raise ApprovalRequired()  # the run pauses for an owner's yes (D72)
            if spec.defers:
                raise CallDeferred()  # the run pauses for a person's answer (D73)
            try:
                out = await ctx.deps.env.tools.invoke(
                    ctx.deps.env.tool_env, name, kwargs, ctx.deps.context
                )
            except ToolError as exc:
                out = {"status": "error", "tool": name, "error": str(exc)}
            if spec.ends_turn and out.get("status") == "yielded":
                ctx.deps.stop.answer = YIELDED_MARK  # no further model request (D69, D147)
            return await with_steer(ctx.deps, out)  # D75, D114

        tool = Tool.from_schema(
            call,
            name=name,
            description=spec.description,
            json_schema=spec.json_schema(),
            takes_ctx=True,
        )
        # `from_schema` leaves an empty return schema, which pydantic-ai copies each tool's
        # definition to clear at every request (D147); no return schema is what it means.
        tool.function_schema.return_schema = None  # type: ignore[assignment]
        self._tools[name] = tool
        return tool

    async def _speak(
        self, request: RunRequest, new: list[TranscriptMessage], media: list[MediaItem]
    ) -> None:
        """A delivered reply spoken as a voice note, as `voice.tts.replyWithVoice` says (D78):
        it rides with the reply's text, after it, like a tool's media (D153)."""
        from core.features.agent.transcript import final_text
        from core.features.voice.tts import TextToSpeech, wants_voice

        chain = self.rt.config.voice.tts_chain()  # fallbacks after the first (D155)
        first = chain[0] if chain else None
        if not request.deliver or not wants_voice(first, request.meta.get("attachments") or []):
            return
        reply = final_text(new)
        if not reply:
            return
        if self._tts is None or self._tts.chain != chain:
            self._tts = TextToSpeech(chain)
        note = await self._tts.voice_note(reply)
        if note is not None:
            media.append(note)

    async def aclose(self) -> None:
        """After the last turn: the model clients' connections are closed (D51)."""
        await self.rt.models.aclose()

    async def run_turn(
        self, run: RunRecord, request: RunRequest, entry: SessionEntry, on_delta: DeltaSink | None
    ) -> TurnResult:
        rt = self.rt
        warm = rt.warmup
        if warm is not None and not warm.done():  # never import beside the warm-up thread
            await asyncio.wait({warm})
        refs = rt.models.refs_for(entry.agent_id, request.model or entry.model)
        if not refs:
            return self._store_reply(entry, run, NO_MODEL_TEXT)
        from core.features.models.timed_model import TimedModel  # the model stack, lazily

        try:
            model = TimedModel.around(
                rt.models.chain(refs),
                ",".join(refs),
                rt.metrics,
                lambda ref, tin, tout: request_cost(rt.config, ref, tin, tout),
            )
        except ModelNotAvailable as exc:
            return self._store_reply(entry, run, f"⚠️ {exc}")
        from pydantic_ai import FunctionToolset

        from core.features.agent.transcript import (
            final_text,
            from_model_messages,
            to_model_messages,
        )

        limit = rt.config.agents.defaults.compaction.max_context_messages
        placed = context_messages(
            await rt.store.context_tail(entry.session_id, limit + 2), request.input_message_id
        )
        context = await context_of(rt, entry, placed, model, refs)  # D71
        history = context.history
        from core.features.agent.media import user_prompt

        prompt = await user_prompt(rt, request, refs[0])  # the primary model decides
        offered = offered_to(rt.tools, request.context)  # tools.bySender (D63)
        names = tuple(n for n in rt.tool_names_for(entry.key, entry.agent_id) if offered(n, None))
        mcp_tools = [
            t
            for t in await rt.mcp.tools_for(entry.agent_id, entry.key)
            if offered(t.name, mcp_server_of(t.name))
        ]
        toolsets = [mcp_toolset(FunctionToolset(mcp_tools), rt)] if mcp_tools else None
        paused = paused_messages(run)  # a resumed turn goes on from where it stopped (D72)
        resume: dict[str, Any] = {}
        if paused is not None:
            resume = {
                "deferred_tool_results": deferred_results(
                    await rt.store.questions(status=None, run_id=run.id)
                )
            }
            prompt = None  # type: ignore[assignment]
        instructions = base_system_prompt(rt.config, entry) + summary_instructions(context.summary)
        if request.extra_system_prompt:
            instructions = f"{instructions}\n\n{request.extra_system_prompt}"
        handler = stream_handler(on_delta) if on_delta is not None else None
        answered: list[str] = []
        token = ANSWERED.set(answered)
        gate_token = COST_GATE.set(cost_gate(rt, request, entry))  # D64
        media: list[MediaItem] = []  # what the turn's tools attach to the reply (D78)
        media_token = MEDIA_OUT.set(media)
        from pydantic_ai.exceptions import ModelAPIError

        deps = Deps(rt, request.context.for_run(run.id), request.steer)
        stop_token = TURN_STOP.set(deps.stop)
        try:
            result = await self._pai_agent(names).run(
                prompt,
                message_history=to_model_messages(history) + (paused or []),
                model=model,
                instructions=instructions,
                deps=deps,
                toolsets=toolsets,
                event_stream_handler=handler,
                **resume,
            )
        except ModelAPIError as exc:  # the provider's body stays in the log (D12)
            raise provider_failure(exc, answered[-1] if answered else refs[0]) from None
        except ExceptionGroup as group:  # every model of a fallback chain failed
            failures = [
                provider_failure(e, r)
                for e, r in zip(group.exceptions, refs, strict=False)
                if isinstance(e, ModelAPIError)
            ]
            if not failures:
                raise
            raise failures[-1] from None
        finally:
            ANSWERED.reset(token)
            TURN_STOP.reset(stop_token)
            COST_GATE.reset(gate_token)
            MEDIA_OUT.reset(media_token)
        from pydantic_ai import DeferredToolRequests

        if isinstance(result.output, DeferredToolRequests):
            made = (paused or []) + result.new_messages()
            pause = pause_of(rt.config, run, request, result.output, made, now=now_ms())
            # kept with the run: its end, after the pause, sends them (D78)
            await rt.store.save_media(media, run_id=run.id, session_key=entry.key)
            return TurnResult(None, pause=pause)
        made = (paused or []) + result.new_messages()
        if deps.yielded:  # nothing is said for a yielded turn (D69)
            made = without_yield_mark(made)
        if paused is not None:
            run.meta = {k: v for k, v in (run.meta or {}).items() if k != "paused"}
        new = from_model_messages(made, now_ms=now_ms(), run_id=run.id)
        if not deps.yielded:
            await self._speak(request, new, media)
            await attach_media(rt, run, entry, new, media)
        usage = result.usage
        tin, tout = usage.input_tokens or None, usage.output_tokens or None
        ref = answered[-1] if answered else refs[0]
        cost = run_cost(rt.config, made, answered, ref)
        if context.made is not None:  # the compaction's request counts like any other (D71)
            new.insert(0, context.made)
            tin = (tin or 0) + context.input_tokens or None
            tout = (tout or 0) + context.output_tokens or None
            if context.cost_usd is not None:
                cost = (cost or 0.0) + context.cost_usd
        run.meta = {
            **(run.meta or {}),
            "model": ref,
            **({"costUsd": cost} if cost is not None else {}),
            **({"yielded": True} if deps.yielded else {}),
        }
        session_cost = (entry.cost_usd or 0.0) + cost if cost is not None else entry.cost_usd
        write = TurnWrite(
            entry,
            new,
            {
                "input_tokens": tin,
                "output_tokens": tout,
                "context_tokens": tin,
                "total_tokens": (entry.total_tokens or 0) + (tin or 0) + (tout or 0),
                "cost_usd": session_cost,
            },
            run_meta=run.meta,
        )
        reply = None if deps.yielded else final_text(new)
        return TurnResult(
            reply, input_tokens=tin, output_tokens=tout, context_tokens=tin, write=write
        )  # stored with the run's end (D41)

    @staticmethod
    def _store_reply(entry: SessionEntry, run: RunRecord, text: str) -> TurnResult:
        """A reply of the gateway, not of a model: shown and kept in the transcript, never in a
        model's context (D132)."""
        msg = TranscriptMessage.text(
            "assistant", text, now_ms(), run_id=run.id, meta={NOTICE: "gateway"}
        )
        return TurnResult(text, write=TurnWrite(entry, [msg]))


async def attach_media(
    rt: TurnEnv,
    run: RunRecord,
    entry: SessionEntry,
    new: list[TranscriptMessage],
    media: list[MediaItem],
) -> None:
    """Store the turn's media with its run (the reply's delivery sends them, D78) and name
    them in the reply's transcript message as attachment parts (D3)."""
    if not media:
        return
    stored = await rt.store.save_media(media, run_id=run.id, session_key=entry.key)
    reply = next((m for m in reversed(new) if m.role == "assistant"), None)
    if reply is None:
        reply = TranscriptMessage.text("assistant", "", now_ms(), run_id=run.id)
        new.append(reply)
    reply.content = [*reply.content, *(m.part() for m in stored)]


async def context_of(
    rt: TurnEnv,
    entry: SessionEntry,
    placed: list[TranscriptMessage],
    model: Any,
    refs: list[str],
) -> TurnContext:
    """The turn's context (D71); a failed summary request costs the turn nothing but the
    summary: the context is then the newest messages, as before compaction existed."""
    try:
        return await turn_context(rt, entry, placed, model=model, refs=refs, now=now_ms())
    except Exception:
        log.warning("compaction of %s failed; using the newest messages", entry.key, exc_info=True)
        limit = rt.config.agents.defaults.compaction.max_context_messages
        return TurnContext([m for m in placed if m.role != "summary"][-limit:])


def context_messages(
    history: list[TranscriptMessage], input_id: int | None
) -> list[TranscriptMessage]:
    """What a turn sees: the placed transcript before its own input (D13).

    A turn's input is placed when the turn starts, after the earlier turns' replies; messages
    queued behind it are not placed yet. The input itself is sent as the prompt, last. The
    gateway's own notices (no model configured, D132) are the user's to read, not the model's.
    """
    placed = [m for m in history if m.seq is not None and not (m.meta and m.meta.get(NOTICE))]
    own = next((m for m in placed if m.id == input_id), None) if input_id is not None else None
    if own is None:
        return [m for m in placed if m.id != input_id]
    return [m for m in placed if m.id != input_id and (m.seq or 0) <= (own.seq or 0)]


def cost_gate(rt: TurnEnv, request: RunRequest, entry: SessionEntry) -> CostGate | None:
    """The run's cost limits (D64): its requester's person, its agent, its session."""
    ctx = request.context
    who = person_key(ctx.sender, ctx.person_id)
    subjects = rt.limits.subjects(ctx.role, who, entry.agent_id, entry.key)
    return CostGate(rt.config, rt.limits, subjects, who) if subjects else None
