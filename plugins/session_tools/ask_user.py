"""`ask_user {question, options?}`: the agent asks the person in the chat and waits (D73).

An agent's call pauses its run durably (the same machinery as approvals, D72): the question goes
to the turn's chat with one button per option, and the requester's next press or message there
is the answer (it starts no turn of its own); the model gets `{answer}`, or `{status:
"timeout"}` after `tools.askUser.timeoutMinutes`. Over HTTP there is no chat to ask.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field, field_validator

from core.api.plugins import ToolArgs, ToolContext, ToolSpec

if TYPE_CHECKING:
    from core.api.plugins import ToolEnv

MAX_OPTIONS = 4
MAX_OPTION_CHARS = 40


class AskUserArgs(ToolArgs):
    question: str = Field(min_length=1, max_length=1000, description="What to ask the user")
    options: list[str] | None = Field(
        default=None,
        max_length=MAX_OPTIONS,
        description=f"Up to {MAX_OPTIONS} short answers ({MAX_OPTION_CHARS} characters each), "
        "shown as buttons; omit for a free-text answer",
    )

    @field_validator("options")
    @classmethod
    def _short(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        cleaned = [v.strip() for v in value if v.strip()]
        if any(len(v) > MAX_OPTION_CHARS for v in cleaned):
            raise ValueError(f"each option has at most {MAX_OPTION_CHARS} characters")
        return cleaned or None


async def ask_user(env: ToolEnv, ctx: ToolContext, args: AskUserArgs) -> dict[str, Any]:
    """Called directly (HTTP, MCP): nobody is in a chat turn to answer."""
    return {"status": "error", "error": "ask_user waits for a person in a chat turn"}


SPEC = ToolSpec(
    name="ask_user",
    description="Ask the user a question and wait for the answer (optionally offering up to 4 "
    "choices as buttons). Returns {answer} or {status: 'timeout'}.",
    args_model=AskUserArgs,
    handler=ask_user,
    defers=True,
    subagents=False,
    profiles=frozenset({"messaging", "minimal"}),
)
