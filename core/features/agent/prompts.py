"""System prompts: the agent's base prompt (the per-run extras are added by the caller)."""

from __future__ import annotations

from core.config import CrosstalkConfig
from core.store import SessionEntry

DEFAULT_SYSTEM_PROMPT = (
    "You are a helpful assistant talking to people in a chat through the Crosstalk gateway. "
    "Answer concisely. You can list other chat sessions, read their history, message them and "
    "spawn sub-agents with the sessions_* tools when that helps."
)


def base_system_prompt(config: CrosstalkConfig, entry: SessionEntry) -> str:
    agent = config.agent(entry.agent_id)
    prompt = (
        (agent.system_prompt if agent and agent.system_prompt else None)
        or config.agents.defaults.system_prompt
        or DEFAULT_SYSTEM_PROMPT
    )
    where = entry.display_name or entry.key
    return f"{prompt}\n\nSession: {entry.key} ({where})."
