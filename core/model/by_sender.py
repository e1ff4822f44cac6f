"""Tools by sender (D63): `tools.bySender` rules, pure functions of the rules and the caller.

A rule `{match, allow?, deny?}` matches `role:<role>`, `<channel>:<userId>`,
`person:<personId>`, `group:<channel>:<groupId>` or `*`. Rules apply in order after the agent's
own tool policy: every matching rule's `allow` (when given) must name the tool, and a `deny`
anywhere wins. The registries enforce them as a :class:`Permission` and the turn does not offer
a denied tool to the model at all.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from core.model.approvals import matches_tool
from core.model.permission import Caller, Permission

DEFAULT_RULES: tuple[dict[str, object], ...] = (
    {"match": "role:member", "deny": ["cron", "mcp:*"]},
    {"match": "role:guest", "deny": ["cron", "mcp:*", "sessions_spawn", "sessions_send"]},
)
"""The rules when `tools.bySender` is not set; a list you set (even `[]`) replaces them."""


@dataclass(frozen=True, slots=True)
class SenderRule:
    match: str
    allow: tuple[str, ...] | None = None
    deny: tuple[str, ...] = ()

    def matches(self, caller: Caller) -> bool:
        m = self.match.strip()
        if m == "*":
            return True
        kind, _, rest = m.partition(":")
        if kind == "role":
            return rest == caller.effective_role
        if kind == "person":
            return caller.person_id is not None and rest == caller.person_id
        if kind == "group":
            return caller.group is not None and rest == caller.group
        return caller.channel is not None and m == f"{caller.channel}:{caller.sender_id}"


def compile_rules(raw: Iterable[object] | None) -> tuple[SenderRule, ...]:
    """Rules from config (None: the defaults); entries are dicts or objects with the fields."""
    rules = DEFAULT_RULES if raw is None else raw
    out = []
    for r in rules:
        get = r.get if isinstance(r, dict) else lambda k, r=r: getattr(r, k, None)
        allow = get("allow")
        out.append(
            SenderRule(
                str(get("match") or ""),
                None if allow is None else tuple(allow),
                tuple(get("deny") or ()),
            )
        )
    return tuple(out)


def denied(
    rules: Sequence[SenderRule], caller: Caller, tool: str, *, mcp_server: str | None = None
) -> bool:
    """Whether the rules take `tool` away from `caller`."""
    for rule in rules:
        if not rule.matches(caller):
            continue
        if matches_tool(tool, rule.deny, mcp_server=mcp_server):
            return True
        if rule.allow is not None and not matches_tool(tool, rule.allow, mcp_server=mcp_server):
            return True
    return False


def sender_permission(rules: Sequence[SenderRule], tool: str) -> Permission:
    """The rules for one tool as a permission the registry checks before the handler."""
    return Permission.predicate(
        "bySender",
        lambda caller: not denied(rules, caller, tool),
        "{name} is not allowed for this sender (tools.bySender)",
    )


__all__ = ["DEFAULT_RULES", "SenderRule", "compile_rules", "denied", "sender_permission"]
