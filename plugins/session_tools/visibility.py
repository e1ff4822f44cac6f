"""Who may see which session: the one visibility function every session tool uses.

Three rules, the narrowest wins:

- the requester's role scope (D61, `tools.sessions.visibility`): `self`, `tree` (the
  requester's session and every session spawned from it, transitively), `agent` or `all`;
- the sandbox's `spawned` visibility (reference R2.0);
- `tools.agentToAgent` for other agents' sessions.

A session outside the role scope is answered exactly as one that does not exist (D61): callers
refuse with :func:`out_of_scope`, whatever the session's existence, so scope never tells.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from core.api.plugins import ToolContext, ToolRefused
from core.api.sessions import is_subagent_key, no_session_found

if TYPE_CHECKING:
    from core.api.plugins import ToolEnv
    from core.api.sessions import SessionQuery

Scope = Literal["self", "tree", "agent", "all"]


@dataclass(slots=True)
class Visibility:
    requester_key: str
    requester_agent: str
    restricted: bool
    """True when only sessions spawned by the requester are visible (reference R2.0)."""
    scope: Scope = "all"
    """The requester's role scope (D61)."""
    _keys: frozenset[str] | None = field(default=None, repr=False)

    async def scope_keys(self, env: ToolEnv) -> frozenset[str] | None:
        """The keys the role scope allows (`self`, `tree`); None when it is not key-bound."""
        if self.scope == "self":
            return frozenset({self.requester_key})
        if self.scope != "tree":
            return None
        if self._keys is None:
            self._keys = frozenset(await env.store.session_tree(self.requester_key))
        return self._keys

    async def in_scope(self, env: ToolEnv, key: str) -> bool:
        """Whether the role scope reaches `key` (existing or not: the answer is the same)."""
        if self.scope == "all":
            return True
        if self.scope == "agent":
            return env.keys.agent_of(key) == self.requester_agent
        keys = await self.scope_keys(env)
        return keys is not None and key in keys

    async def check(self, env: ToolEnv, key: str, raw: str) -> None:
        """Refuse `key` (given as `raw`) outside the scope, as a session that does not exist."""
        if not await self.in_scope(env, key):
            raise out_of_scope(raw)

    async def narrow(self, env: ToolEnv, query: SessionQuery) -> SessionQuery:
        """Put the role scope into a listing's SQL, so it applies before `limit` (D61)."""
        if self.scope == "agent":
            query.agent_ids, query.agent_patterns = (self.requester_agent,), ()
        keys = await self.scope_keys(env)
        if keys is not None:
            query.keys = tuple(sorted(keys if query.keys is None else keys & set(query.keys)))
        return query


def out_of_scope(raw: str) -> ToolRefused:
    """The refusal for a session outside the scope: the text of a session that is not there."""
    return ToolRefused(no_session_found(raw), status="error")


def scope_for(env: ToolEnv, ctx: ToolContext) -> Scope:
    """The role's scope; the gateway token's callers (HTTP, MCP) act as the owner (D60)."""
    role = "owner" if ctx.via == "http" else ctx.role
    scope: Scope = getattr(env.config.tools.sessions.visibility, role)
    return scope


def visibility_for(env: ToolEnv, ctx: ToolContext) -> Visibility:
    restricted = (
        ctx.sandboxed
        and env.config.agents.defaults.sandbox.session_tools_visibility == "spawned"
        and bool(ctx.session_key.strip())
        and not is_subagent_key(ctx.session_key)
    )
    return Visibility(ctx.session_key, ctx.agent_id, restricted, scope_for(env, ctx))


async def scope_sessions(env: ToolEnv, vis: Visibility, query: SessionQuery) -> SessionQuery:
    """Narrow a session query to the sessions `vis` may see (sandbox, agent-to-agent, the role
    scope), in SQL and so before `limit`: what sessions_list lists is what sessions_search
    searches (D61, D66)."""
    if vis.restricted:
        query.spawned_by = vis.requester_key
    else:
        query.agent_ids, query.agent_patterns = a2a_policy(env).visible_agents(vis.requester_agent)
    return await vis.narrow(env, query)


def _pattern_matches(pattern: str, agent_id: str) -> bool:
    p = pattern.strip()
    if not p:
        return False
    if p == "*":
        return True
    if "*" in p:
        return fnmatch.fnmatchcase(agent_id.lower(), p.lower())
    return p == agent_id


class AgentToAgentPolicy:
    """`tools.agentToAgent`: disabled by default; `allow` lists agent-id patterns."""

    def __init__(self, enabled: bool, allow: list[str]) -> None:
        self.enabled = enabled
        self.allow = [p for p in allow]

    def matches(self, agent_id: str) -> bool:
        return not self.allow or any(_pattern_matches(p, agent_id) for p in self.allow)

    def is_allowed(self, requester: str, target: str) -> bool:
        if requester == target:
            return True
        return self.enabled and self.matches(requester) and self.matches(target)

    def visible_agents(self, requester: str) -> tuple[tuple[str, ...] | None, tuple[str, ...]]:
        """(exact ids, glob patterns) of agents whose sessions `requester` may list.

        `None` as exact ids means every agent.
        """
        if not self.enabled or not self.matches(requester):
            return (requester,), ()
        if not self.allow or any(p.strip() == "*" for p in self.allow):
            return None, ()
        exact = tuple({requester, *(p.strip() for p in self.allow if p.strip() and "*" not in p)})
        globs = tuple(p.strip() for p in self.allow if "*" in p and p.strip() != "*")
        return exact, globs


def a2a_policy(env: ToolEnv) -> AgentToAgentPolicy:
    cfg = env.config.tools.agent_to_agent
    return AgentToAgentPolicy(cfg.enabled, list(cfg.allow))
