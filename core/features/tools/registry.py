"""One registry of tools, served both to agents (pydantic-ai) and to `POST /tools/invoke`.

A tool is a pydantic argument model plus an async handler returning the JSON payload (the
reference's `details`). Handlers raise :class:`core.model.errors.ToolError` for thrown errors; the
agent path turns those into `{status:"error", tool, error}`, the HTTP path into a 400. A tool
refuses one way, ``raise ToolRefused(text)``, which :meth:`ToolRegistry.invoke` returns as the
documented ``{status:"forbidden", error}`` payload; it also checks the spec's permission first.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Awaitable, Callable, Collection, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from core.features.tools.results import ToolResult
from core.model.by_sender import SenderRule, compile_rules, sender_permission
from core.model.errors import ToolInputError, ToolRefused
from core.model.media import WithMedia, collect
from core.model.permission import EVERYONE, Caller, Permission
from core.model.text import clean_json
from core.model.tool_context import ToolContext
from core.model.validation import validation_message

if TYPE_CHECKING:
    from core.features.tools.env import ToolEnv

Payload = dict[str, Any]
Handler = Callable[["ToolEnv", ToolContext, Any], Awaitable["Payload | ToolResult | WithMedia"]]
"""``handler(env, ctx, args)``: the tool environment (D30), who calls, the parsed arguments;
it returns the payload, or a typed result the registry dumps to camelCase JSON (D33), or either
wrapped in :class:`WithMedia` to send images and files with the reply (D78)."""

ALL_TOOLS_PROFILES = frozenset({"coding", "full"})
"""`tools.profile` values that allow every tool; `minimal` and `messaging` allow the tools that
declare them in :attr:`ToolSpec.profiles` (D94)."""


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    args_model: type[BaseModel]
    handler: Handler
    permission: Permission = EVERYONE
    """Checked by the registry before `handler` runs (a refusal is a `forbidden` payload)."""
    profiles: frozenset[str] = frozenset()
    """The narrow `tools.profile`s that include this tool (`minimal`, `messaging`); the wide
    ones (`coding`, `full`) include every tool."""
    subagents: bool = True
    """False: a sub-agent session never gets it (the reference's sub-agent deny list)."""
    mcp: bool = False
    """Served to MCP clients at `/mcp` and by `crosstalk mcp` (D19)."""
    defers: bool = False
    """An agent's call pauses its run until a person answers (`ask_user`, D73); the handler
    serves only the other callers (HTTP)."""
    ends_turn: bool = False
    """An agent's call that answers `{status: "yielded"}` ends its turn at once, with no reply
    (`sessions_yield`, D69); other callers (HTTP, MCP) just get the answer."""

    def json_schema(self) -> dict[str, Any]:
        schema = self.args_model.model_json_schema(by_alias=True)
        schema.pop("title", None)
        return schema


def tool_result(payload: Payload) -> dict[str, Any]:
    """The reference's tool-result envelope: pretty JSON text plus the raw details."""
    clean = {k: v for k, v in payload.items() if v is not None}
    return {
        "content": [{"type": "text", "text": json.dumps(clean, indent=2, ensure_ascii=False)}],
        "details": clean,
    }


def _matches(name: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, p.strip().lower()) for p in patterns if p.strip())


def filter_tools(
    names: Iterable[str],
    *,
    profile: Collection[str] | None,
    allow: list[str] | None,
    deny: Iterable[str],
) -> list[str]:
    """Apply a profile's members (None: every tool), then an allow list (if any), then a deny
    list (deny always wins)."""
    out = []
    deny = list(deny)
    profile_set = profile
    for name in names:
        if profile_set is not None and name not in profile_set:
            continue
        if allow is not None and not _matches(name, allow):
            continue
        if _matches(name, deny):
            continue
        out.append(name)
    return out


class ToolRegistry:
    def __init__(self) -> None:
        self._tools: dict[str, ToolSpec] = {}
        self.sender_rules: tuple[SenderRule, ...] = compile_rules(None)
        """`tools.bySender` (D63), set by the runtime from the config."""

    def register(self, spec: ToolSpec) -> None:
        if spec.name in self._tools:
            raise ValueError(f"tool already registered: {spec.name}")
        self._tools[spec.name] = spec

    def get(self, name: str) -> ToolSpec | None:
        return self._tools.get(name)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def profile_members(self, profile: str | None) -> frozenset[str] | None:
        """The tools `tools.profile` allows; None when it allows every tool."""
        if profile is None or profile in ALL_TOOLS_PROFILES:
            return None
        return frozenset(name for name, spec in self._tools.items() if profile in spec.profiles)

    def subagent_denied(self) -> frozenset[str]:
        """The tools no sub-agent session gets, as their specs declare."""
        return frozenset(name for name, spec in self._tools.items() if not spec.subagents)

    def served_over_mcp(self) -> list[str]:
        """The tools MCP clients see, in registration order."""
        return [name for name, spec in self._tools.items() if spec.mcp]

    def parse_args(self, spec: ToolSpec, args: dict[str, Any]) -> BaseModel:
        try:
            return spec.args_model.model_validate(args)
        except ValidationError as exc:
            raise ToolInputError(validation_message(exc)) from exc

    async def invoke(
        self, env: ToolEnv, name: str, args: dict[str, Any], ctx: ToolContext
    ) -> Payload:
        spec = self._tools.get(name)
        if spec is None:
            raise ToolInputError(f"Tool not available: {name}")
        try:
            caller = tool_caller(ctx)
            if not spec.permission.allows(caller):
                raise ToolRefused(
                    f"{name} is not allowed for this caller (needs {spec.permission.name})"
                )
            refusal = sender_permission(self.sender_rules, name).refusal(caller, name)
            if refusal is not None:  # tools.bySender (D63); such a tool is never offered
                raise ToolRefused(refusal)
            # D12: tool arguments (from models and HTTP callers alike) are cleaned as they enter
            result = await spec.handler(env, ctx, self.parse_args(spec, clean_json(args)))
            if isinstance(result, WithMedia):
                return with_media(result)
            return result.payload() if isinstance(result, ToolResult) else result
        except ToolRefused as refusal:
            return refusal.payload()


def with_media(result: WithMedia) -> Payload:
    """The payload of a result with media: the media go with the running turn's reply (D78),
    and the payload names them (`attached: false` where no turn sends them, e.g. over HTTP)."""
    inner = result.result
    payload = dict(inner.payload() if isinstance(inner, ToolResult) else inner)
    sent = collect(list(result.media))
    payload["media"] = [{**m.describe(), "attached": sent} for m in result.media]
    return payload


def tool_caller(ctx: ToolContext) -> Caller:
    """The caller of a tool as permissions see it; the token-authenticated HTTP API (and MCP)
    acts for the gateway's owner, as the cron tool already assumed. The sender, person and
    group are those of the chain's starter, so `tools.bySender` rules of every form hold in
    every run it starts (D63, D101)."""
    role = "owner" if ctx.via == "http" else ctx.role
    channel, _, sender_id = (ctx.sender or "").partition(":")
    return Caller(
        is_owner=role == "owner",
        session_key=ctx.session_key,
        channel=channel or ctx.channel,
        sender_id=sender_id or None,
        role=role,
        person_id=ctx.person_id,
        group=ctx.group_id,
    )
