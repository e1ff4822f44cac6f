"""The interactions half of the Discord fake: application commands and INTERACTION_CREATE.

Takes what a bot registers (bulk overwrite of its global or a guild's commands, as Discord keeps
them: ids and versions added) and shows, per place and member, which of them Discord's menu
offers: a command's `contexts` (0 a server, 1 the bot's DM) and `default_member_permissions`
(`"0"`: only a server's administrators). It dispatches what users do with the bot's controls:
a button press (a message component, type 3) and a slash command (type 2, refused unless the
menu offered it to that user there, as Discord never sends one it did not show). Interaction
callbacks are authenticated by the interaction's token in the URL, not the bot token, and
answered the way `?with_response=1` is.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from aiohttp import web

from tests.fakes.base import Call, json_response

GUILD_CONTEXT, BOT_DM_CONTEXT = 0, 1


def _now() -> str:
    return datetime.now(UTC).isoformat()


class DiscordInteractions:
    """Mixed into FakeDiscord (which provides the attributes and helpers declared here)."""

    application_id: int
    shown: dict[str, dict[str, Any]]
    _ids: Iterator[int]

    def _init_interactions(self) -> None:
        #: the application's global commands and each guild's, as registered (ids added)
        self.commands: list[dict[str, Any]] = []
        self.guild_commands: dict[int, list[dict[str, Any]]] = {}
        #: interaction id → token of every interaction dispatched; callbacks received
        self.interaction_tokens: dict[str, str] = {}
        self.callbacks: list[dict[str, Any]] = []

    if TYPE_CHECKING:  # provided by FakeDiscord and EmulatorServer

        def record(self, call: Call) -> Call: ...
        def _guild_of(self, channel_id: int) -> int | None: ...
        def _author(self, author_id: int, bot: bool, username: str) -> dict[str, Any]: ...
        def message_payload(
            self, channel_id: int, content: str, *, guild_id: int | None, author: dict[str, Any]
        ) -> dict[str, Any]: ...
        async def dispatch(self, event: str, data: dict[str, Any]) -> None: ...
        @property
        def bot_user(self) -> dict[str, Any]: ...

    # -- REST -------------------------------------------------------------------------------

    def _setup_interaction_routes(self, app: web.Application) -> None:
        r = app.router
        glob = "/api/v10/applications/{application_id}/commands"
        guild = "/api/v10/applications/{application_id}/guilds/{guild_id}/commands"
        r.add_put(glob, self._overwrite)
        r.add_get(glob, self._list)
        r.add_put(guild, self._overwrite)
        r.add_get(guild, self._list)
        r.add_post("/api/v10/interactions/{interaction_id}/{token}/callback", self._callback)

    def _bot_token(self, request: web.Request) -> str:
        return request.headers.get("Authorization", "").removeprefix("Bot ")

    def _authorized(self, request: web.Request) -> bool:
        token: str = getattr(self, "token", "")
        return self._bot_token(request) == token

    def _scope(self, request: web.Request) -> tuple[str, int | None]:
        guild = request.match_info.get("guild_id")
        return ("Guild" if guild else "Global"), (int(guild) if guild else None)

    async def _overwrite(self, request: web.Request) -> web.Response:
        """PUT …/commands: the list replaces every command of that scope."""
        kind, guild = self._scope(request)
        body = await request.json()
        params = {"guild_id": guild, "commands": body}
        call = self.record(
            Call(
                f"bulkOverwrite{kind}Commands",
                params,
                self._bot_token(request),
                request.path,
                "PUT",
            )
        )
        if not self._authorized(request):
            call.status = 401
            return json_response({"message": "401: Unauthorized", "code": 0}, 401)
        if request.match_info["application_id"] != str(self.application_id):
            call.status = 403
            return json_response({"message": "Missing Access", "code": 50001}, 403)
        stored = [
            {
                **cmd,
                "id": str(next(self._ids)),
                "application_id": str(self.application_id),
                "version": str(next(self._ids)),
                **({"guild_id": str(guild)} if guild else {}),
            }
            for cmd in body
        ]
        if guild is None:
            self.commands = stored
        else:
            self.guild_commands[guild] = stored
        return json_response(stored)

    async def _list(self, request: web.Request) -> web.Response:
        kind, guild = self._scope(request)
        params = {"guild_id": guild}
        self.record(
            Call(f"get{kind}Commands", params, self._bot_token(request), request.path, "GET")
        )
        if not self._authorized(request):
            return json_response({"message": "401: Unauthorized", "code": 0}, 401)
        return json_response(self.commands if guild is None else self.guild_commands.get(guild, []))

    async def _callback(self, request: web.Request) -> web.Response:
        """An interaction's response: its token is the credential (no bot token is sent)."""
        interaction_id, token = request.match_info["interaction_id"], request.match_info["token"]
        body = await request.json() if request.can_read_body else {}
        call = self.record(
            Call(
                "interactionCallback",
                {"interaction_id": interaction_id, **body},
                token,
                request.path,
            )
        )
        if self.interaction_tokens.get(interaction_id) != token:
            call.status = 401
            return json_response({"message": "Invalid interaction token", "code": 50027}, 401)
        if any(c["interaction_id"] == interaction_id for c in self.callbacks):
            call.status = 400
            return json_response(
                {"message": "Interaction has already been acknowledged.", "code": 40060}, 400
            )
        self.callbacks.append({"interaction_id": interaction_id, **body})
        kind = int(body.get("type", 0))
        data = body.get("data") or {}
        ephemeral = bool(int(data.get("flags", 0)) & 64)
        answer: dict[str, Any] = {
            "interaction": {
                "id": interaction_id,
                "type": kind,
                "response_message_loading": kind == 5,
                "response_message_ephemeral": ephemeral,
            }
        }
        if kind == 4:  # CHANNEL_MESSAGE_WITH_SOURCE: the message it created
            message = {
                "id": str(next(self._ids)),
                "channel_id": "0",
                "type": 20,
                "content": data.get("content", ""),
                "author": self.bot_user,
                "timestamp": _now(),
                "edited_timestamp": None,
                "tts": False,
                "mention_everyone": False,
                "mentions": [],
                "mention_roles": [],
                "attachments": [],
                "embeds": [],
                "components": [],
                "pinned": False,
                "flags": int(data.get("flags", 0)),
            }
            answer["interaction"]["response_message_id"] = message["id"]
            answer["resource"] = {"type": kind, "message": message}
        if request.query.get("with_response") in ("1", "true"):
            return json_response(answer)
        return web.Response(status=204)

    # -- what users see and do --------------------------------------------------------------

    def menu_for(self, channel_id: int, *, admin: bool = False) -> list[str]:
        """The command names Discord's `/` menu shows this user in this channel: the guild's
        own commands and the global ones allowed in its context and for the member."""
        guild = self._guild_of(channel_id)
        context = BOT_DM_CONTEXT if guild is None else GUILD_CONTEXT
        found = list(self.commands)
        if guild is not None:
            found = self.guild_commands.get(guild, []) + found
        names: list[str] = []
        for cmd in found:
            if context not in cmd.get("contexts", [GUILD_CONTEXT, BOT_DM_CONTEXT]):
                continue
            if guild is not None and cmd.get("default_member_permissions") == "0" and not admin:
                continue
            if cmd["name"] not in names:
                names.append(cmd["name"])
        return names

    def _interaction(
        self,
        kind: int,
        channel_id: int,
        user_id: int,
        username: str,
        data: dict[str, Any],
        admin: bool = False,
    ) -> dict[str, Any]:
        guild_id = self._guild_of(channel_id)
        user = self._author(user_id, False, username)
        interaction: dict[str, Any] = {
            "id": str(next(self._ids)),
            "application_id": str(self.application_id),
            "type": kind,
            "token": f"itoken{next(self._ids)}",
            "version": 1,
            "channel_id": str(channel_id),
            "channel": {"id": str(channel_id), "type": 1 if guild_id is None else 0},
            "data": data,
            "locale": "en-US",
            "app_permissions": "0",
            "entitlements": [],
            "authorizing_integration_owners": {},
            "context": BOT_DM_CONTEXT if guild_id is None else GUILD_CONTEXT,
            "attachment_size_limit": 8 * 1024 * 1024,
        }
        if guild_id is None:
            interaction["user"] = user
        else:
            interaction["guild_id"] = str(guild_id)
            interaction["member"] = {
                "user": user,
                "roles": [],
                "joined_at": _now(),
                "deaf": False,
                "mute": False,
                "flags": 0,
                "permissions": "8" if admin else "0",  # ADMINISTRATOR
            }
        self.interaction_tokens[interaction["id"]] = interaction["token"]
        return interaction

    async def press(
        self, message_id: str, label: str, *, user_id: int, username: str = "alice"
    ) -> dict[str, Any]:
        """Press the button `label` under the bot's message: INTERACTION_CREATE (type 3, a
        message component), as Discord sends it; the client acknowledges it over REST."""
        shown = self.shown[str(message_id)]
        custom_id = next(
            c["custom_id"]
            for row in shown["components"]
            for c in row["components"]
            if c.get("label") == label
        )
        channel_id = int(shown["channel_id"])
        data = {"custom_id": custom_id, "component_type": 2}
        interaction = self._interaction(3, channel_id, user_id, username, data)
        interaction["message"] = self.message_payload(
            channel_id, shown["content"], guild_id=self._guild_of(channel_id), author=self.bot_user
        ) | {"id": str(message_id)}
        await self.dispatch("INTERACTION_CREATE", interaction)
        return interaction

    async def slash(
        self,
        channel_id: int,
        name: str,
        args: str | None = None,
        *,
        user_id: int,
        username: str = "alice",
        admin: bool = False,
    ) -> dict[str, Any]:
        """A user picks `/name` from the menu (with `args` in its string option, if given):
        INTERACTION_CREATE type 2. LookupError if the menu does not offer it to them there."""
        if name not in self.menu_for(channel_id, admin=admin):
            raise LookupError(f"/{name} is not in this user's menu in channel {channel_id}")
        guild = self._guild_of(channel_id)
        scoped = self.guild_commands.get(guild, []) if guild is not None else []
        cmd = next(c for c in scoped + self.commands if c["name"] == name)
        data: dict[str, Any] = {"id": cmd["id"], "name": name, "type": 1}
        if args is not None:
            option = (cmd.get("options") or [{}])[0]
            data["options"] = [{"name": option.get("name", "args"), "type": 3, "value": args}]
        if guild is not None:
            data["guild_id"] = str(guild)
        interaction = self._interaction(2, channel_id, user_id, username, data, admin)
        await self.dispatch("INTERACTION_CREATE", interaction)
        return interaction

    async def redeliver_interaction(self, interaction: dict[str, Any]) -> None:
        """INTERACTION_CREATE again (a resumed gateway session replays it)."""
        await self.dispatch("INTERACTION_CREATE", interaction)
