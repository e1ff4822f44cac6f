"""Compaction (D71): a long conversation is summarised instead of silently forgotten.

A turn's context is the session's latest summary (a transcript entry of role `summary`, sent
as part of the instructions) plus the placed messages after the last one it summarises. When
those exceed `maxContextMessages`, all but the last `keepRecent` are summarised by the agent's
own model chain (fallbacks apply) before the turn's model request; the new summary is stored
with the turn's end (D41) and its request's cost and tokens count with the turn's. Nothing is
deleted. `/compact` does the same at once and stores the summary itself.

Reads stay on the warm tail (D43): the tail of `maxContextMessages + 2` placed messages holds
the latest summary whenever no compaction is due, so the store is asked for more only when one is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from core.model.records import TranscriptMessage

if TYPE_CHECKING:
    from core.config import CrosstalkConfig
    from core.features.models.resolver import ModelResolver
    from core.store import SessionEntry

MAX_SUMMARISED = 400
"""Messages one summary request reads at most (the oldest beyond it are left out)."""
MAX_LINE = 2000
"""Characters of one message in the summary request."""
SUMMARY_INSTRUCTIONS = (
    "You maintain the memory of a chat conversation. Write a concise summary of the "
    "conversation below for your own later use: facts, decisions, names, dates, numbers, open "
    "questions and tasks, and the user's preferences. Fold in the earlier summary if there is "
    "one. Plain text, at most 400 words, no preamble."
)
SUMMARY_PREFIX = "Summary of the earlier conversation (older messages are not shown):"


class CompactionStore(Protocol):
    async def context_tail(self, session_id: str, limit: int) -> list[TranscriptMessage]: ...
    async def latest_summary(self, session_id: str) -> TranscriptMessage | None: ...
    async def placed_after(
        self, session_id: str, after_seq: int, limit: int
    ) -> list[TranscriptMessage]: ...


class CompactionEnv(Protocol):
    @property
    def config(self) -> CrosstalkConfig: ...
    @property
    def models(self) -> ModelResolver: ...
    @property
    def store(self) -> Any: ...


@dataclass(slots=True)
class TurnContext:
    """What a turn sends before its prompt, and the summary a compaction made (to store)."""

    history: list[TranscriptMessage]
    summary: str | None = None
    made: TranscriptMessage | None = None
    compacted: int = 0
    cost_usd: float | None = None
    input_tokens: int = 0
    output_tokens: int = 0


def _through(summary: TranscriptMessage | None) -> int:
    return int((summary.meta or {}).get("through", 0)) if summary is not None else 0


def _line(m: TranscriptMessage) -> str:
    if m.role == "toolResult":
        text = f"[tool {m.tool_name or ''} result] {m.plain_text()}"
    else:
        calls = [b.get("name", "") for b in m.content if b.get("type") == "toolCall"]
        text = m.plain_text() + (f" [called {', '.join(calls)}]" if calls else "")
    text = " ".join(text.split())
    if len(text) > MAX_LINE:
        text = text[: MAX_LINE - 1] + "…"
    return f"{m.role}: {text}"


def summary_request(previous: str | None, messages: list[TranscriptMessage]) -> str:
    lead = f"Earlier summary:\n{previous}\n\n" if previous else ""
    return lead + "Conversation:\n" + "\n".join(_line(m) for m in messages)


async def summarise(
    env: CompactionEnv,
    model: Any,
    refs: list[str],
    previous: str | None,
    old: list[TranscriptMessage],
) -> tuple[str, float | None, int, int]:
    """One request through the agent's model chain: (summary, cost, input, output tokens)."""
    from pydantic_ai import Agent

    from core.features.models.costs import run_cost
    from core.features.models.providers import ANSWERED

    answered: list[str] = []
    token = ANSWERED.set(answered)
    try:
        result = await Agent(output_type=str).run(
            summary_request(previous, old), model=model, instructions=SUMMARY_INSTRUCTIONS
        )
    finally:
        ANSWERED.reset(token)
    ref = answered[-1] if answered else refs[0]
    cost = run_cost(env.config, result.new_messages(), answered, ref)
    usage = result.usage
    return result.output.strip(), cost, usage.input_tokens or 0, usage.output_tokens or 0


def _summary_entry(text: str, old: list[TranscriptMessage], now: int) -> TranscriptMessage:
    return TranscriptMessage(
        role="summary",
        content=[{"type": "text", "text": text}],
        timestamp=now,
        meta={"through": old[-1].seq, "compacted": len(old)},
    )


async def _since_summary(
    env: CompactionEnv, entry: SessionEntry, tail: list[TranscriptMessage]
) -> tuple[TranscriptMessage | None, list[TranscriptMessage], bool]:
    """(latest summary, the messages after it, whether the tail held all of them)."""
    latest = next((m for m in reversed(tail) if m.role == "summary"), None)
    if latest is not None:
        through = _through(latest)
        return latest, [m for m in tail if m.role != "summary" and (m.seq or 0) > through], True
    return None, [m for m in tail if m.role != "summary"], False


async def turn_context(
    env: CompactionEnv,
    entry: SessionEntry,
    placed: list[TranscriptMessage],
    *,
    model: Any,
    refs: list[str],
    now: int,
) -> TurnContext:
    """The context of a turn from the placed messages before its input (its tail, D13)."""
    cfg = env.config.agents.defaults.compaction
    limit = cfg.max_context_messages
    if cfg.mode == "off":
        return TurnContext([m for m in placed if m.role != "summary"][-limit:])
    latest, after, complete = await _since_summary(env, entry, placed)
    summary = latest.plain_text() if latest is not None else None
    if len(after) <= limit:
        return TurnContext(after, summary)
    if not complete:  # the tail is full and holds no summary: look further back
        latest = await env.store.latest_summary(entry.session_id)
        summary = latest.plain_text() if latest is not None else None
        own = placed[-1].seq if placed else None
        older = await env.store.placed_after(entry.session_id, _through(latest), MAX_SUMMARISED)
        after = [m for m in older if own is None or (m.seq or 0) <= own]
        if len(after) <= limit:
            return TurnContext(after, summary)
    return await _compact(env, after, summary, model=model, refs=refs, now=now)


async def _compact(
    env: CompactionEnv,
    after: list[TranscriptMessage],
    previous: str | None,
    *,
    model: Any,
    refs: list[str],
    now: int,
) -> TurnContext:
    keep = env.config.agents.defaults.compaction.keep_recent
    old, kept = after[:-keep], after[-keep:]
    while kept and kept[0].role == "toolResult":  # a result never opens a context
        old.append(kept.pop(0))
    text, cost, tin, tout = await summarise(env, model, refs, previous, old)
    made = _summary_entry(text, old, now)
    return TurnContext(kept, text, made, len(old), cost, tin, tout)


async def compact_now(env: CompactionEnv, entry: SessionEntry, now: int) -> int:
    """`/compact`: summarise all but the last `keepRecent` messages since the latest summary,
    store the summary (its cost counted on the session); returns how many were summarised."""
    refs = env.models.refs_for(entry.agent_id, entry.model)
    if not refs:
        return 0
    latest = await env.store.latest_summary(entry.session_id)
    after = await env.store.placed_after(entry.session_id, _through(latest), MAX_SUMMARISED)
    keep = env.config.agents.defaults.compaction.keep_recent
    if len(after) <= keep:
        return 0
    previous = latest.plain_text() if latest is not None else None
    ctx = await _compact(env, after, previous, model=env.models.chain(refs), refs=refs, now=now)
    assert ctx.made is not None
    cost = (entry.cost_usd or 0.0) + ctx.cost_usd if ctx.cost_usd is not None else entry.cost_usd
    await env.store.append_messages(
        entry,
        [ctx.made],
        cost_usd=cost,
        total_tokens=(entry.total_tokens or 0) + ctx.input_tokens + ctx.output_tokens,
    )
    return ctx.compacted


def summary_instructions(summary: str | None) -> str:
    return f"\n\n{SUMMARY_PREFIX}\n{summary}" if summary else ""
