"""Prompts of a sub-agent: its system prompt (R4.6) and the announce step (R4.9 contract A)."""

from __future__ import annotations

ANNOUNCE_USER_MESSAGE = "Sub-agent announce step."
ANNOUNCE_SKIP = "ANNOUNCE_SKIP"
TASK_PLACEHOLDER = "{{TASK_DESCRIPTION}}"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def subagent_system_prompt(
    *,
    task: str,
    child_key: str,
    requester_key: str | None,
    requester_channel: str | None,
    label: str | None,
) -> str:
    """The extra system prompt of a child run: one task, reported back automatically."""
    role = _one_line(task) or TASK_PLACEHOLDER
    context = []
    if label:
        context.append(f"- Label: {label}")
    if requester_key:
        context.append(f"- Requester session: {requester_key}.")
    if requester_channel:
        context.append(f"- Requester channel: {requester_channel}.")
    context.append(f"- Your session: {child_key}.")
    return "\n".join(
        [
            "# Subagent Context",
            "",
            "You are a **subagent** spawned by the main agent for a specific task.",
            "",
            "## Your Role",
            f"- You were created to handle: {role}",
            "- Complete this task. That's your entire purpose.",
            "- You are NOT the main agent. Don't try to be.",
            "",
            "## Rules",
            "1. **Stay focused** - Do your assigned task, nothing else.",
            "2. **Complete the task** - Your final message will be automatically reported to the "
            "main agent.",
            "3. **Don't initiate** - No heartbeats, no proactive actions, no side quests.",
            "4. **Be ephemeral** - You may be terminated after task completion. That's fine.",
            "",
            "## Output Format",
            "When complete, your final response should include:",
            "- What you accomplished or found",
            "- Any relevant details the main agent should know",
            "- Keep it concise but informative",
            "",
            "## What You DON'T Do",
            "- NO user conversations (that's the main agent's job)",
            "- NO external messages (email, posts, etc.) unless explicitly tasked",
            "- NO cron jobs or persistent state",
            "- NO pretending to be the main agent",
            "- NO using the `message` tool directly",
            "",
            "## Session Context",
            *context,
        ]
    )


def announce_prompt(*, task: str, label: str | None, status: str, error: str | None) -> str:
    """The extra system prompt of the announce step run in the child session."""
    lines = [
        "# Sub-agent announce step",
        "",
        "Your task has ended. Write the report that is posted to the requester's chat.",
        f"- Task: {_one_line(task) or TASK_PLACEHOLDER}",
    ]
    if label:
        lines.append(f"- Label: {label}")
    lines.append(f"- Run status: {status}")
    if error:
        lines.append(f"- Error: {error}")
    lines += [
        "",
        "Reply with these two sections only:",
        "Result: <what you found or did, concisely>",
        "Notes: <caveats or follow-ups, one per line starting with '- '; or '- (none)'>",
        "",
        f"Reply exactly {ANNOUNCE_SKIP} to post nothing.",
    ]
    return "\n".join(lines)
