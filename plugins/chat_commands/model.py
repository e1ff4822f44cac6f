"""`/model` (owners only, D67): the agent's models and this session's; `/model <id>` sets the
session's override, `/model default` clears it. The override is the session row's `model`, so
it survives restarts (and is what `session_status` shows and sets)."""

from __future__ import annotations

from core.api.plugins import OWNER, CommandInvocation, CommandSpec


def model_choices(inv: CommandInvocation) -> list[str]:
    """The agent's chain first, then every model a provider lists."""
    env = inv.env
    refs = list(env.models.refs_for(inv.entry.agent_id))
    for provider_id, provider in env.config.models.providers.items():
        refs += [f"{provider_id}/{m.id}" for m in provider.models]
    return list(dict.fromkeys(refs))


async def handle_model(inv: CommandInvocation) -> str:
    env, entry = inv.env, inv.entry
    arg = inv.command.args.strip()
    default = env.models.default_ref(entry.agent_id) or "none configured"
    if not arg:
        current = entry.model or default
        source = "session override" if entry.model else "agent default"
        choices = model_choices(inv)
        listed = ", ".join(choices) if choices else "none configured"
        return f"⚙️ Model: {current} ({source})\nAvailable: {listed}"
    if arg.lower() == "default":
        await env.store.update_session(entry.key, touch=False, model=None)
        return f"⚙️ Model override cleared; this session uses {default}."
    if not env.models.is_known(arg):
        return f"⚙️ Unknown model: {arg}. Send /model to list them."
    await env.store.update_session(entry.key, touch=False, model=arg)
    return f"⚙️ Model set to {arg} for this session."


SPEC = CommandSpec(
    name="model",
    description="Show or set this session's model (/model <id>, /model default)",
    handler=handle_model,
    permission=OWNER,
)
