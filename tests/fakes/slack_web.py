"""The Web API half of the Slack fake: token checks, injected failures and stalls, and the
methods (auth.test, apps.connections.open, chat.postMessage and chat.update, the two-step file
upload, conversations.history and .replies)."""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING, Any

from aiohttp import web

from tests.fakes.base import Call, Failure, json_response


class SlackWebApi:
    """Mixed into FakeSlack (which provides the attributes and helpers declared here)."""

    harmless_methods: frozenset[str]
    bot_token: str
    app_token: str
    team_id: str
    bot_user_id: str
    bot_id: str
    app_id: str
    base_url: str
    posted: list[dict[str, Any]]
    pending_uploads: dict[str, dict[str, Any]]
    uploads: list[dict[str, Any]]

    if TYPE_CHECKING:  # provided by FakeSlack and EmulatorServer

        def record(self, call: Call) -> Call: ...
        async def _stall(self, method: str) -> bool: ...
        async def _hold(self, method: str) -> None: ...
        def _take_failure(self, method: str) -> Failure | None: ...
        def next_ts(self) -> str: ...
        @property
        def ws_url(self) -> str: ...

    def _error(self, failure: Failure) -> web.Response:
        body: dict[str, Any] = {
            "ok": False,
            "error": "ratelimited" if failure.status == 429 else "internal_error",
        }
        body.update(failure.body or {})
        headers = dict(failure.headers)
        if failure.status == 429:
            headers.setdefault("Retry-After", str(int(failure.retry_after or 1)))
        return json_response(body, failure.status, headers)

    async def _handle(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        params: dict[str, Any] = dict(request.query)
        if request.content_type == "application/json":
            params.update(await request.json())
        else:
            params.update({k: v for k, v in (await request.post()).items() if isinstance(v, str)})
        token = request.headers.get("Authorization", "").removeprefix("Bearer ") or params.get(
            "token"
        )
        call = self.record(Call(method, params, token, request.path, request.method))
        if await self._stall(method):  # stall_next: no effect, no answer while the fake runs
            call.status = 504
            return self._error(Failure(504))
        failure = self._take_failure(method)
        if failure is not None:
            call.status = failure.status
            return self._error(failure)
        result = self._result(method, params, token)
        await self._hold(method)
        return json_response(result, headers={"x-oauth-scopes": "chat:write,app_mentions:read"})

    async def _upload(self, request: web.Request) -> web.Response:
        """Step 2 of files_upload_v2: the bytes, posted to the URL step 1 gave (D78)."""
        file_id = request.match_info["file_id"]
        if file_id not in self.pending_uploads:
            return web.Response(status=404, text="unknown upload")
        self.pending_uploads[file_id]["data"] = await request.read()
        self.record(Call("upload", {"file_id": file_id}, None, request.path))
        return web.Response(text="OK - 1")

    def _files(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """files.getUploadURLExternal and files.completeUploadExternal (D78): the completed
        files are shared in the channel as one message carrying them."""
        if method == "files.getUploadURLExternal":
            file_id = f"F{len(self.pending_uploads) + 1:08d}"
            self.pending_uploads[file_id] = {"filename": params.get("filename"), "data": None}
            return {
                "ok": True,
                "upload_url": f"{self.base_url}/upload/{file_id}",
                "file_id": file_id,
            }
        files = params.get("files")
        files = json.loads(files) if isinstance(files, str) else files or []
        done = []
        for f in files:
            pending = self.pending_uploads.get(str(f.get("id")))
            if pending is None or pending["data"] is None:
                return {"ok": False, "error": "file_not_found"}
            done.append({"id": f["id"], "name": pending["filename"], "title": f.get("title")})
            self.uploads.append({"channel": params.get("channel_id"), **pending})
        if params.get("channel_id"):
            ts = self.next_ts()
            message = {
                "type": "message",
                "text": params.get("initial_comment") or "",
                "user": self.bot_user_id,
                "bot_id": self.bot_id,
                "ts": ts,
                "files": done,
            }
            if params.get("thread_ts"):
                message["thread_ts"] = params["thread_ts"]
            self.posted.append({**message, "channel": params["channel_id"]})
        return {"ok": True, "files": done}

    def _result(self, method: str, params: dict[str, Any], token: str | None) -> dict[str, Any]:
        if method == "apps.connections.open":
            if token != self.app_token:
                return {
                    "ok": False,
                    "error": "not_allowed_token_type"
                    if token == self.bot_token
                    else "invalid_auth",
                }
            return {"ok": True, "url": f"{self.ws_url}/link/?ticket={uuid.uuid4()}"}
        if token != self.bot_token:
            return {
                "ok": False,
                "error": "not_allowed_token_type" if token == self.app_token else "invalid_auth",
            }
        if method == "auth.test":
            return {
                "ok": True,
                "url": "https://fake.slack.com/",
                "team": "Fake Team",
                "user": "crosstalk",
                "team_id": self.team_id,
                "user_id": self.bot_user_id,
                "bot_id": self.bot_id,
                "is_enterprise_install": False,
            }
        if method in ("files.getUploadURLExternal", "files.completeUploadExternal"):
            return self._files(method, params)
        if method == "chat.update":
            shown = next(
                (
                    m
                    for m in self.posted
                    if m["channel"] == params.get("channel") and m["ts"] == params.get("ts")
                ),
                None,
            )
            if shown is None:
                return {"ok": False, "error": "message_not_found"}
            if not params.get("text") and not params.get("blocks"):
                return {"ok": False, "error": "no_text"}
            shown["text"] = params.get("text", "")
            shown["edits"] = shown.get("edits", 0) + 1
            if "blocks" in params:  # an update without blocks keeps them, as Slack does
                shown["blocks"] = _blocks(params["blocks"])
            return {
                "ok": True,
                "channel": shown["channel"],
                "ts": shown["ts"],
                "text": shown["text"],
            }
        if method == "chat.postMessage":
            if not params.get("channel"):
                return {"ok": False, "error": "channel_not_found"}
            if not params.get("text") and not params.get("blocks"):
                return {"ok": False, "error": "no_text"}
            ts = params.get("ts") or self.next_ts()
            message = {
                "type": "message",
                "text": params.get("text", ""),
                "user": self.bot_user_id,
                "bot_id": self.bot_id,
                "app_id": self.app_id,
                "team": self.team_id,
                "ts": ts,
            }
            if params.get("thread_ts"):
                message["thread_ts"] = params["thread_ts"]
            metadata = params.get("metadata")
            if isinstance(metadata, str):  # form-encoded calls send it as a JSON string
                metadata = json.loads(metadata)
            if metadata:
                message["metadata"] = metadata
            if params.get("blocks"):
                message["blocks"] = _blocks(params["blocks"])
            self.posted.append({**message, "channel": params["channel"]})
            return {"ok": True, "channel": params["channel"], "ts": ts, "message": message}
        if method == "conversations.history":
            history = [
                {
                    k: v
                    for k, v in m.items()
                    if k != "channel"
                    and (
                        k != "metadata" or params.get("include_all_metadata") in (True, "true", "1")
                    )
                }
                for m in reversed(self.posted)
                if m["channel"] == params.get("channel")
            ]
            return {
                "ok": True,
                "messages": history[: int(params.get("limit") or 100)],
                "has_more": False,
            }
        if method == "conversations.replies":
            # Bolt 1.30 reads this for DM threads (assistant thread context) before say().
            thread = [
                {k: v for k, v in m.items() if k != "channel"}
                for m in self.posted
                if m["channel"] == params.get("channel")
                and params.get("ts") in (m["ts"], m.get("thread_ts"))
            ]
            return {"ok": True, "messages": thread, "has_more": False}
        if method in self.harmless_methods:
            return {"ok": True}
        return {"ok": False, "error": "unknown_method"}


def _blocks(raw: Any) -> list[dict[str, Any]]:
    """Blocks as sent: a JSON string in form-encoded calls, a list in JSON ones."""
    return list(json.loads(raw) if isinstance(raw, str) else raw or [])
