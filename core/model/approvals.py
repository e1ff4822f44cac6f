"""Paused runs' questions to people: tool approvals (D72) and ask_user (D73), as values.

A run that calls a tool under `tools.approvals.require` pauses durably: its pending call is an
:class:`Approval` row (kind ``approval``), the run's status is ``awaiting_approval``, and the
model's partial turn waits in the run's meta until every question of the run is decided. The
texts below are the contract's, compared exactly by the tests.
"""

from __future__ import annotations

import fnmatch
import json
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from core.model.delivery_context import DeliveryContext

ID_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
"""D11's pairing-code alphabet (no 0/O, 1/I): ids are read aloud and typed on phones."""
ID_LENGTH = 8
ARGUMENTS_PREVIEW = 300

PauseKind = Literal["approval", "question"]
PauseStatus = Literal["pending", "approved", "denied", "expired", "answered", "timeout"]
DECIDED: frozenset[str] = frozenset({"approved", "denied", "expired", "answered", "timeout"})
AWAITING = "awaiting_approval"
"""The status of a paused run (D72): neither running nor final; it blocks nothing."""


def new_id() -> str:
    return "".join(secrets.choice(ID_ALPHABET) for _ in range(ID_LENGTH))


@dataclass(frozen=True, slots=True)
class Button:
    """One native button: its label, and the text its press stands for (a chat command)."""

    label: str
    command: str


@dataclass(slots=True)
class RequestRef:
    """Where a question was delivered, so deciding can edit it (the platform's message id)."""

    channel: str
    to: str
    account_id: str = "default"
    thread_id: str | None = None
    message_id: str | None = None

    def to_wire(self) -> dict[str, Any]:
        return {
            "channel": self.channel,
            "to": self.to,
            "accountId": self.account_id,
            "threadId": self.thread_id,
            "messageId": self.message_id,
        }

    @classmethod
    def from_wire(cls, d: dict[str, Any]) -> RequestRef:
        return cls(
            channel=str(d["channel"]),
            to=str(d["to"]),
            account_id=str(d.get("accountId") or "default"),
            thread_id=d.get("threadId"),
            message_id=d.get("messageId"),
        )

    def target(self) -> DeliveryContext:
        return DeliveryContext(
            channel=self.channel,
            to=self.to,
            account_id=self.account_id,
            thread_id=self.thread_id,
        )


@dataclass(slots=True)
class Approval:
    """A paused run's question (D72 approval or D73 ask_user), one per pending tool call."""

    id: str
    kind: PauseKind
    run_id: str
    tool_call_id: str
    tool: str
    arguments: dict[str, Any]
    session_key: str
    requester: dict[str, Any]
    created_at: int
    expires_at: int
    status: str = "pending"
    decided_at: int | None = None
    decided_by: str | None = None
    answer: str | None = None
    requests: list[RequestRef] = field(default_factory=list)

    def to_wire(self) -> dict[str, Any]:
        """The spec's shape (D72): `{id, tool, arguments, sessionKey, requester, createdAt,
        expiresAt}` plus what happened to it."""
        return {
            "id": self.id,
            "kind": self.kind,
            "tool": self.tool,
            "arguments": self.arguments,
            "sessionKey": self.session_key,
            "requester": self.requester,
            "createdAt": self.created_at,
            "expiresAt": self.expires_at,
            "status": self.status,
            "decidedAt": self.decided_at,
            "decidedBy": self.decided_by,
            **({"answer": self.answer} if self.answer is not None else {}),
        }


def arguments_preview(arguments: dict[str, Any]) -> str:
    text = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= ARGUMENTS_PREVIEW else text[: ARGUMENTS_PREVIEW - 1] + "…"


def request_text(a: Approval) -> str:
    """D72: `🛡️ Approval needed: <tool> <arguments as JSON, at most 300 characters>`, with the
    owner-only text fallback (D120)."""
    return (
        f"🛡️ Approval needed: {a.tool} {arguments_preview(a.arguments)}\n"
        f"/approve {a.id} · /deny {a.id}"
    )


def decided_text(a: Approval) -> str:
    """What the request becomes once decided (D72); an expired one says so (D120)."""
    if a.status == "approved":
        return f"🛡️ Approved by {a.decided_by}: {a.tool}"
    if a.status == "denied":
        return f"🛡️ Denied by {a.decided_by}: {a.tool}"
    return f"🛡️ Expired: {a.tool}"


def approval_buttons(a: Approval) -> tuple[Button, ...]:
    return (Button("Approve", f"/approve {a.id}"), Button("Deny", f"/deny {a.id}"))


def question_options(a: Approval) -> list[str]:
    raw = a.arguments.get("options")
    return [str(o) for o in raw] if isinstance(raw, list) else []


def question_text(a: Approval) -> str:
    """D73's question in the chat (D122): `❓ <question>`, its options numbered under it so a
    chat without buttons can answer by number or by text."""
    text = f"❓ {a.arguments.get('question', '')}"
    options = question_options(a)
    if options:
        text += "\n" + " · ".join(f"{i}. {o}" for i, o in enumerate(options, 1))
    return text


def question_buttons(a: Approval) -> tuple[Button, ...]:
    return tuple(Button(o, f"/answer {a.id} {i}") for i, o in enumerate(question_options(a), 1))


def answered_text(a: Approval) -> str:
    """The question once answered (`✅ <answer>`) or timed out (`⌛ No answer`) (D122)."""
    head = f"❓ {a.arguments.get('question', '')}"
    return f"{head}\n✅ {a.answer}" if a.status == "answered" else f"{head}\n⌛ No answer"


def answer_of(a: Approval, text: str) -> str:
    """A typed reply to a question: an option's number picks that option, else the text."""
    options = question_options(a)
    stripped = text.strip()
    if stripped.isdigit() and 1 <= int(stripped) <= len(options):
        return options[int(stripped) - 1]
    return stripped


def matches_tool(name: str, patterns: Iterable[str], *, mcp_server: str | None = None) -> bool:
    """D63's tool patterns: exact names, `*` globs, `mcp:*` (every MCP tool), `mcp:<server>`."""
    for raw in patterns:
        p = raw.strip()
        if not p:
            continue
        if p.startswith("mcp:"):
            server = p[4:]
            if mcp_server is not None and (server == "*" or server == mcp_server):
                return True
            continue
        if fnmatch.fnmatchcase(name, p):
            return True
    return False


__all__ = [
    "AWAITING",
    "DECIDED",
    "Approval",
    "Button",
    "PauseKind",
    "RequestRef",
    "answer_of",
    "answered_text",
    "approval_buttons",
    "decided_text",
    "matches_tool",
    "new_id",
    "question_buttons",
    "question_options",
    "question_text",
    "request_text",
]
