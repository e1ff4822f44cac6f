"""A turn that stops for people and goes on later (D72): pydantic-ai's deferred tools.

A tool under `tools.approvals.require` raises pydantic-ai's `ApprovalRequired` unless its call
was approved; the run then ends with `DeferredToolRequests`, and the turn is paused: its new
messages (the model's tool calls, the results of the calls that needed nobody) wait in the
run's meta, and each deferred call becomes a question row. Resumed, the turn runs again from
those messages with `DeferredToolResults`: approved calls run (once: the run resumes once),
denied or expired ones give the model `{status: "denied"}`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from core.engine.runs.contract import Pause
from core.model.approvals import Approval, PauseKind, matches_tool, new_id

if TYPE_CHECKING:
    from core.config import CrosstalkConfig
    from core.engine.runs.contract import RunRequest
    from core.store import RunRecord

DENIED = {"status": "denied"}


def requires_approval(config: CrosstalkConfig, tool: str, *, mcp_server: str | None = None) -> bool:
    return matches_tool(tool, config.tools.approvals.require, mcp_server=mcp_server)


def mcp_server_of(tool: str) -> str | None:
    """MCP tools are named `<server>__<tool>` (core.features.mcp.client.tool_name)."""
    return tool.split("__", 1)[0] if "__" in tool else None


def paused_messages(run: RunRecord) -> list[Any] | None:
    """The model messages a paused run stopped with; None for a fresh turn."""
    paused = (run.meta or {}).get("paused")
    if not isinstance(paused, dict):
        return None
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    return list(ModelMessagesTypeAdapter.validate_python(paused.get("messages") or []))


def pause_of(
    config: CrosstalkConfig,
    run: RunRecord,
    request: RunRequest,
    output: Any,
    messages: list[Any],
    *,
    now: int,
) -> Pause:
    """The run's pause: its meta with the partial turn, one approval per call that needs an
    owner's yes (D72), one question per `ask_user` call (D73)."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    origin = request.context.origin
    requester = {
        **(origin.model_dump() if origin is not None else {}),
        "owner": request.context.owner,
        "sender": request.context.sender,
        "via": request.context.via,
    }
    ttl = int(config.tools.approvals.timeout_minutes * 60_000)
    asks = int(config.tools.ask_user.timeout_minutes * 60_000)

    def question(call: Any, kind: PauseKind, expires_at: int) -> Approval:
        return Approval(
            id=new_id(),
            kind=kind,
            run_id=run.id,
            tool_call_id=call.tool_call_id,
            tool=call.tool_name,
            arguments=_arguments(call.args),
            session_key=run.session_key,
            requester=requester,
            created_at=now,
            expires_at=expires_at,
        )

    questions = [question(call, "approval", now + ttl) for call in output.approvals] + [
        question(call, "question", now + asks) for call in output.calls
    ]
    meta = {
        **(run.meta or {}),
        "paused": {"messages": ModelMessagesTypeAdapter.dump_python(messages, mode="json")},
    }
    return Pause(meta, questions)


def deferred_results(questions: list[Approval]) -> Any:
    """What the decisions tell pydantic-ai: approved calls run, the others are denied."""
    from pydantic_ai import DeferredToolResults, ToolDenied

    approvals: dict[str, Any] = {}
    calls: dict[str, Any] = {}
    for q in questions:
        if q.kind == "question":  # D73: the answer, or that nobody answered in time
            calls[q.tool_call_id] = (
                {"answer": q.answer} if q.status == "answered" else {"status": "timeout"}
            )
            continue
        approvals[q.tool_call_id] = (
            True if q.status == "approved" else ToolDenied(json.dumps(DENIED))
        )
    return DeferredToolResults(approvals=approvals, calls=calls)


def _arguments(args: Any) -> dict[str, Any]:
    if isinstance(args, dict):
        return args
    if isinstance(args, str) and args.strip():
        try:
            parsed = json.loads(args)
        except ValueError:
            return {"raw": args}
        return parsed if isinstance(parsed, dict) else {"value": parsed}
    return {}
