"""`Idempotency-Key` on `POST /v1/chat/completions` and `POST /tools/invoke` (decision D16).

The key is claimed in the store like a platform message identity (with the message and the
run, for chat completions), so a retried request never starts a second turn, on any process
and after a restart. A repeat of a finished request gets the first response back; a repeat
while the first is still running gets the D16 409.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from aiohttp import web

from core.store import FINAL_RUN_STATUSES
from core.store.inbound import Claim, ClaimRecord

if TYPE_CHECKING:
    from core.runtime import Runtime

HEADER = "Idempotency-Key"
MAX_KEY = 255
CONFLICT = {
    "error": {
        "message": "request with this Idempotency-Key is still running",
        "type": "invalid_request_error",
        "code": "idempotency_conflict",
    }
}
#: Claims of `/tools/invoke` carry the process that made them: one left without a result by a
#: dead process will never get one.
BOOT_ID = f"boot:{uuid.uuid4().hex}"


class BadKey(ValueError):
    pass


def claim_for(request: web.Request, route: str) -> Claim | None:
    """The claim of this request's key on `route`, None without a key; BadKey when unusable."""
    raw = request.headers.get(HEADER)
    if raw is None:
        return None
    key = raw.strip()
    if not key or len(key) > MAX_KEY:
        raise BadKey(f"{HEADER} must be 1-{MAX_KEY} characters")
    return Claim("http", route, f"idem:{key}")


def bad_key(exc: BadKey) -> web.Response:
    return web.json_response(
        {"error": {"message": str(exc), "type": "invalid_request_error"}}, status=400
    )


def conflict() -> web.Response:
    return web.json_response(CONFLICT, status=409)


async def remember(rt: Runtime, claim: Claim | None, status: int, body: Any) -> None:
    if claim is not None:
        await rt.store.set_claim_result(claim, {"status": status, "body": body})


async def first_response(rt: Runtime, claim: Claim) -> dict[str, Any] | None:
    """The first request's response as `{status, body}`; None while it is still running.

    Raises LookupError when the key was never used.
    """
    rec = await rt.store.get_claim(claim)
    if rec is None:
        raise LookupError(claim.identity)
    if rec.result is not None:
        return rec.result
    return await _from_run(rt, rec)


async def _from_run(rt: Runtime, rec: ClaimRecord) -> dict[str, Any] | None:
    """A claim without a stored response: its run ended while no one kept the answer (a
    crash between the two), or the process that held it died."""
    run_id = rec.run_id
    if run_id is None:
        return None
    if run_id.startswith("boot:"):
        if run_id == BOOT_ID:
            return None
        return {
            "status": 503,
            "body": {
                "ok": False,
                "error": {
                    "type": "unavailable",
                    "message": "the gateway restarted while this request was running",
                },
            },
        }
    run = await rt.store.get_run(run_id)
    if run is None or run.status not in FINAL_RUN_STATUSES or rt.runs.is_pending(run_id):
        return None
    if run.status != "ok":
        return {
            "status": 502,
            "body": {"error": {"message": run.error or run.status, "type": "agent_error"}},
        }
    entry = await rt.store.get_session(run.session_key)
    reply = ""
    if entry is not None:
        msgs = await rt.store.history(entry.session_id, run_id=run_id, include_tools=False)
        reply = next((m.plain_text() for m in reversed(msgs) if m.role == "assistant"), "")
    return {
        "status": 200,
        "body": {
            "id": f"chatcmpl-{run_id.replace('-', '')[:24]}",
            "object": "chat.completion",
            "created": run.created_at // 1000,
            "model": "crosstalk",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": reply},
                }
            ],
        },
    }


async def replay(rt: Runtime, claim: Claim) -> web.Response | None:
    """The answer to a repeated key, or None when the key is new."""
    try:
        first = await first_response(rt, claim)
    except LookupError:
        return None
    if first is None:
        return conflict()
    return web.json_response(first["body"], status=int(first["status"]))
