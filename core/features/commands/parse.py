"""Text-command parsing (R5.4) and the ``/send`` reply texts (D4), with no I/O.

Every channel adapter feeds raw message text through ``parse_command`` so that ``/SEND ON``,
``/send: on``, ``/send@MyBot off`` and ``@bot /send off`` in a group all mean the same thing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

__all__ = [
    "SEND_OWNER_ONLY",
    "SEND_USAGE",
    "ParsedCommand",
    "SendMode",
    "is_send_command",
    "parse_command",
    "parse_send_mode",
    "send_set_text",
]

SendMode: TypeAlias = Literal["allow", "deny", "inherit"]

SEND_USAGE = "⚙️ Usage: /send on|off|inherit"
SEND_OWNER_ONLY = "⚙️ /send is owner-only."

_COMMAND_RE = re.compile(
    r"^/(?P<name>[A-Za-z][A-Za-z0-9_-]*)(?:@(?P<bot>[^\s:@/]+))?(?P<rest>.*)$",
    re.DOTALL,
)
_COLON_RE = re.compile(r"^\s*:")
_ALPHA_TOKEN_RE = re.compile(r"[A-Za-z]*")
_SEND_TOKENS: dict[str, SendMode] = {
    "on": "allow",
    "allow": "allow",
    "off": "deny",
    "deny": "deny",
    "inherit": "inherit",
    "default": "inherit",
    "reset": "inherit",
}
_SEND_SET_WORDS: dict[SendMode, str] = {"allow": "on", "deny": "off", "inherit": "inherit"}


@dataclass(frozen=True, slots=True)
class ParsedCommand:
    """A recognised ``/name args`` command; ``raw`` is the message text as received."""

    name: str
    args: str
    raw: str


def _mention_regex(pattern: str) -> str:
    """Match a mention literally, but not inside a longer word (``@bot`` vs ``@bots``)."""
    head = r"(?<![\w@])" if re.match(r"[\w@]", pattern) else ""
    tail = r"(?!\w)" if re.search(r"\w$", pattern) else ""
    return rf"{head}{re.escape(pattern)}{tail}(?:\s*[:,])?"


def _strip_mentions(text: str, patterns: Sequence[str]) -> str:
    cleaned = [pattern.strip() for pattern in patterns if pattern.strip()]
    if not cleaned:
        return text
    ordered = sorted(set(cleaned), key=len, reverse=True)
    regex = re.compile("|".join(_mention_regex(pattern) for pattern in ordered), re.IGNORECASE)
    return regex.sub(" ", text)


def parse_command(
    text: str,
    *,
    bot_username: str | None = None,
    is_group: bool = False,
    mention_patterns: Sequence[str] = (),
) -> ParsedCommand | None:
    """Parse a slash command from message text, or ``None`` when it is an ordinary message.

    In groups, bot mentions (``mention_patterns`` plus ``@bot_username``) are removed first so
    that ``@bot /send off`` is a command. ``/cmd@other_bot`` is addressed to another bot and
    is therefore not ours.
    """
    body = text
    bot = bot_username.strip().lstrip("@").lower() if bot_username else None
    if is_group:
        patterns = list(mention_patterns)
        if bot:
            patterns.append(f"@{bot}")
        body = _strip_mentions(body, patterns)
    body = body.strip()
    if not body.startswith("/"):
        return None
    body = body.splitlines()[0].strip()
    match = _COMMAND_RE.match(body)
    if match is None:
        return None
    suffix = match.group("bot")
    if suffix is not None and bot is not None and suffix.lower() != bot:
        return None
    rest = match.group("rest")
    colon = _COLON_RE.match(rest)
    if colon is not None:
        rest = rest[colon.end() :]
    elif rest and not rest[0].isspace():
        return None
    return ParsedCommand(name=match.group("name").lower(), args=rest.strip(), raw=text)


def parse_send_mode(args: str) -> SendMode | Literal["invalid"] | None:
    """Map ``/send`` arguments to a mode; ``None`` asks for the status (D4).

    Anything other than one known alias is ``"invalid"`` (answered with the usage text); use
    ``is_send_command`` first, since multi-token text is not a ``/send`` command at all.
    """
    stripped = args.strip()
    if not stripped:
        return None
    return _SEND_TOKENS.get(stripped.lower(), "invalid")


def is_send_command(parsed: ParsedCommand | None) -> bool:
    """``/send`` with at most one alphabetic token; ``/send on please`` goes to the agent."""
    return (
        parsed is not None
        and parsed.name == "send"
        and _ALPHA_TOKEN_RE.fullmatch(parsed.args) is not None
    )


def send_set_text(mode: SendMode) -> str:
    """Confirmation reply after ``/send <mode>`` changed the session override."""
    return f"⚙️ Send policy set to {_SEND_SET_WORDS[mode]}."
