"""OpenAI clients as they are (D80): the conversation a client resends picks its session and,
for a session with no transcript yet, is the model's context; an SDK's automatic retry of a
failed request finds the first attempt instead of starting a second turn.

Conversations are found by a fingerprint of their user and assistant messages, kept as an
inbound identity (`openai` / `conversation`, D16's ledger) naming the session: after each
answered turn, the conversation including that answer. A client that resends its whole
conversation (llm, litellm, Open WebUI, the SDK in a loop) therefore stays in one session; an
edited history matches nothing and starts a new session seeded with it. Fingerprints are
forgotten with the ledger (`gateway.dedupWindowDays`): a conversation resumed later starts a new
session from the history the client sends, which loses nothing the model needs.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from core.store.inbound import Claim, DuplicateInbound

if TYPE_CHECKING:
    from aiohttp import web

    from core.model.records import SessionEntry
    from core.store import Store

Exchange = tuple[str, str]
"""(role, text) of one user or assistant message a client sent."""

RETRY_HEADER = "x-stainless-retry-count"
RETRY_WINDOW_MS = 10 * 60 * 1000
"""How long after a first attempt an SDK retry of it is recognised (the SDKs retry within
seconds; a deliberate resend of the same body later is a new request)."""
CLIENT_HISTORY = "clientHistory"
"""`meta` flag on messages stored from a client's request rather than said in this session."""


def fingerprint(messages: Sequence[Exchange]) -> str:
    canonical = json.dumps([[role, text.strip()] for role, text in messages], ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def conversation_claim(messages: Sequence[Exchange]) -> Claim:
    return Claim("openai", "conversation", f"conv:{fingerprint(messages)}")


async def session_of(store: Store, earlier: Sequence[Exchange]) -> str | None:
    """The session whose conversation so far equals `earlier` (D80); None for a new one."""
    if not earlier:
        return None
    rec = await store.get_claim(conversation_claim(earlier))
    return rec.session_key if rec is not None else None


def new_conversation_id() -> str:
    """`<id>` of `agent:<agentId>:openai:<id>`: URL-safe, and stable because it is stored."""
    return secrets.token_hex(8)


async def remember(store: Store, key: str, conversation: Sequence[Exchange]) -> None:
    """After an answered turn: the conversation including the answer leads to `key`."""
    try:
        await store.claim_only([conversation_claim(conversation)], session_key=key)
    except DuplicateInbound:  # an identical conversation in another session: the first keeps it
        pass


async def seed(store: Store, entry: SessionEntry, earlier: Sequence[Exchange]) -> int:
    """A session without a transcript gets the client's earlier messages as its first ones,
    so they are the model's context (D80); a session with a transcript keeps its own (D14)."""
    if not earlier or await store.history(entry.session_id, limit=1):
        return 0
    from core.model.records import TranscriptMessage

    now = int(time.time() * 1000)
    rows = [
        TranscriptMessage.text(
            "user" if role == "user" else "assistant", text, now, meta={CLIENT_HISTORY: True}
        )
        for role, text in earlier
    ]
    await store.append_messages(entry, rows)
    return len(rows)


async def retry_claim(
    store: Store, request: web.Request, route: str, body: dict[str, Any]
) -> Claim | None:
    """The idempotency claim we derive for an SDK request (`x-stainless-retry-count`) that has
    no `Idempotency-Key` (D80): a first attempt (count 0) gets a claim of its own; a retry
    (count 1 or more) gets the claim of the newest first attempt with the same body, session
    header and token within `RETRY_WINDOW_MS`, so it replays that attempt's answer."""
    count = request.headers.get(RETRY_HEADER)
    if count is None:
        return None
    digest = hashlib.sha256(
        json.dumps(
            [
                body,
                request.headers.get("x-crosstalk-session-key", ""),
                request.headers.get("Authorization", ""),
            ],
            sort_keys=True,
            ensure_ascii=False,
        ).encode("utf-8", "surrogatepass")
    ).hexdigest()[:32]
    prefix = f"sdk:{digest}:"
    if count.strip() not in ("", "0"):
        since = int(time.time() * 1000) - RETRY_WINDOW_MS
        first = await store.latest_claim("http", route, prefix, since)
        if first is not None:
            return first.claim
    return Claim("http", route, prefix + secrets.token_hex(8))
