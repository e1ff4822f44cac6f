"""What a client sent to :class:`tests.fakes.providers.FakeProviders`, read back per API
(``responses``, ``anthropic``, ``gemini``): the last user text, the system prompt and the last
tool result."""

from __future__ import annotations

import json
from typing import Any


def tool_output(api: str, body: dict[str, Any]) -> str:
    """The last tool result the client sent back, as text (JSON-encoded when structured)."""
    if api == "responses":
        outs = [
            i
            for i in body.get("input") or []
            if isinstance(i, dict) and i.get("type") == "function_call_output"
        ]
        return str(outs[-1]["output"]) if outs else ""
    if api == "anthropic":
        blocks = [
            b
            for m in body.get("messages", [])
            if isinstance(m.get("content"), list)
            for b in m["content"]
            if b.get("type") == "tool_result"
        ]
        return json.dumps(blocks[-1].get("content")) if blocks else ""
    parts = [
        p
        for c in body.get("contents", [])
        for p in c.get("parts", [])
        if "functionResponse" in p or "function_response" in p
    ]
    if not parts:
        return ""
    return json.dumps(parts[-1].get("functionResponse") or parts[-1].get("function_response"))


def _text_of(content: Any, kinds: tuple[str, ...] = ("text", "input_text")) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(p.get("text", ""))
            for p in content
            if isinstance(p, dict) and p.get("type", "text") in kinds
        )
    return ""


def last_user_text(api: str, body: dict[str, Any]) -> str:
    if api == "responses":
        items = body.get("input")
        if isinstance(items, str):
            return items
        users = [i for i in items or [] if i.get("role") == "user"]
        return _text_of(users[-1].get("content")) if users else ""
    if api == "anthropic":
        users = [m for m in body.get("messages", []) if m.get("role") == "user"]
        return _text_of(users[-1].get("content")) if users else ""
    users = [c for c in body.get("contents", []) if c.get("role") == "user"]
    return "".join(p.get("text", "") for p in users[-1].get("parts", [])) if users else ""


def system_text(api: str, body: dict[str, Any]) -> str:
    if api == "responses":
        extra = [
            _text_of(i.get("content"))
            for i in body.get("input") or []
            if isinstance(i, dict) and i.get("role") in ("system", "developer")
        ]
        return "\n\n".join([body.get("instructions") or "", *extra])
    if api == "anthropic":
        return _text_of(body.get("system"))
    si = body.get("systemInstruction") or body.get("system_instruction") or {}
    return "".join(p.get("text", "") for p in si.get("parts", []))
