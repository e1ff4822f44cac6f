"""What the web chat page shows of its session after a (re)load (D133): each message, each turn's
outcome when it was not a reply (failed, stopped), and tool calls folded into the reply."""

from __future__ import annotations

from typing import Any

from core.api.gateway import SessionStore, TranscriptMessage, text_with_placeholders


def history_row(m: TranscriptMessage) -> dict[str, Any]:
    shown = text_with_placeholders(m.content) if m.role == "user" else m.plain_text()
    row: dict[str, Any] = {"role": m.role, "text": shown, "ts": m.timestamp}
    media = [
        {k: p.get(k) for k in ("kind", "name", "mime", "size")} | {"id": p["mediaId"]}
        for p in m.content
        if p.get("type") == "attachment" and p.get("mediaId")
    ]
    if media:
        row["media"] = media
    if m.run_id:
        row["runId"] = m.run_id
    if m.role == "user" and (m.meta or {}).get("noRun"):
        row["noRun"] = str((m.meta or {})["noRun"])
    if (m.meta or {}).get("notice"):
        row["notice"] = True
    return row


def tool_cards(messages: list[TranscriptMessage]) -> dict[int, list[dict[str, Any]]]:
    """The tool calls of each assistant message (by its index), each with its result: what the
    page shows folded under the reply (D133)."""
    results = {
        m.tool_call_id: (m.plain_text(), bool(m.is_error))
        for m in messages
        if m.role == "toolResult" and m.tool_call_id
    }
    cards: dict[int, list[dict[str, Any]]] = {}
    for i, m in enumerate(messages):
        if m.role != "assistant":
            continue
        for call in (p for p in m.content if p.get("type") == "toolCall"):
            result, failed = results.get(str(call.get("id")), (None, False))
            card = {"name": call.get("name"), "arguments": call.get("arguments"), "result": result}
            cards.setdefault(i, []).append(card | ({"isError": True} if failed else {}))
    return cards


async def history_rows(
    store: SessionStore, messages: list[TranscriptMessage]
) -> list[dict[str, Any]]:
    """Rows for the page: each turn's user message with its run's outcome when that was not a
    reply (failed, stopped), tool calls folded into the reply that follows them (D133)."""
    cards = tool_cards(messages)
    asked = [m.run_id for m in messages if m.role == "user" and m.run_id]
    outcomes = await store.run_outcomes(asked)
    rows: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    for i, m in enumerate(messages):
        if m.role == "toolResult":
            continue
        if m.role == "user" and pending:  # a turn that ended among its tools
            rows.append({"role": "assistant", "text": "", "ts": m.timestamp, "tools": pending})
            pending = []
        pending.extend(cards.get(i, []))
        if m.role == "assistant" and not m.plain_text():
            if not any(p.get("type") == "attachment" for p in m.content):
                continue  # a tool-calling step: its cards go with the reply that follows
        row = history_row(m)
        if m.role == "assistant" and pending:
            row["tools"], pending = pending, []
        if m.role == "user" and m.run_id and m.run_id in outcomes:
            outcome = turn_outcome(*outcomes[m.run_id])
            if outcome is not None:
                row["outcome"] = outcome
        rows.append(row)
    if pending:
        last = messages[-1].timestamp
        rows.append({"role": "assistant", "text": "", "ts": last, "tools": pending})
    return rows


def turn_outcome(status: str, error: str | None) -> dict[str, str] | None:
    """How a turn that did not end in a reply is shown: `stopped` (someone asked) or `error`
    with the text its chat was told (D12's provider notice, the timeout notice)."""
    if status == "aborted":
        if error == "merged":  # joined the next turn (D75): that turn answers it
            return None
        if error == "aborted":
            return {"kind": "stopped", "text": "Stopped"}
        return {"kind": "error", "text": f"⚙️ Agent run aborted: {error}"}
    if status == "timeout":
        return {"kind": "error", "text": "⚠️ The agent took too long and was stopped."}
    if status == "error":
        text = error if error and error.startswith("⚠️ ") else f"⚠️ The agent failed: {error}"
        return {"kind": "error", "text": text}
    return None
