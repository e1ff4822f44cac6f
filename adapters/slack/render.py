"""Markdown → Slack mrkdwn, with slackify-markdown (a markdown-it-py renderer).

Slack reads ``&``, ``<`` and ``>`` as control characters (links, ``<!channel>`` broadcasts,
``<@U…>`` mentions), so every one of them in model or user text — prose, inline code and code
blocks alike — is escaped: nothing the model writes can ping a channel or forge a link. Tables
become monospaced blocks (core.model.markdown); headings are bold lines.
"""

from __future__ import annotations

from typing import Any

from markdown_it.token import Token
from slackify_markdown.slackify import SlackifyMarkdown

from core.api.rendering import split_markdown, tables_to_code

TEXT_LIMIT = 4000  # Slack truncates past 40k, but advises keeping `text` under 4k


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class _Renderer(SlackifyMarkdown):  # type: ignore[misc]  # the library ships no types
    def text(self, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
        return escape(tokens[idx].content)

    def code_inline(self, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
        return f"`{escape(tokens[idx].content)}`"

    def fence(self, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
        return f"```\n{escape(tokens[idx].content)}```{self.NEW_LINE * 2}"

    code_block = fence

    def link_open(self, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
        href = str(tokens[idx].attrs.get("href", ""))
        tokens[idx].attrs["href"] = escape(href).replace("|", "%7C")
        return str(super().link_open(tokens, idx, options, env))

    def blockquote_open(self, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
        env["quote_depth"] = env.get("quote_depth", 0) + 1
        return "> "

    def blockquote_close(self, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
        env["quote_depth"] = env.get("quote_depth", 1) - 1
        return str(self.NEW_LINE)

    def softbreak(self, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
        return "\n> " if env.get("quote_depth") else "\n"

    hardbreak = softbreak

    def paragraph_close(self, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
        if env.get("quote_depth") and not tokens[idx].hidden:
            return "\n> " if _more_in_quote(tokens, idx) else str(self.NEW_LINE)
        return str(super().paragraph_close(tokens, idx, options, env))


def _more_in_quote(tokens: list[Token], idx: int) -> bool:
    return idx + 1 < len(tokens) and tokens[idx + 1].type != "blockquote_close"


def render(md: str) -> str:
    """mrkdwn for one markdown text."""
    return str(_Renderer(tables_to_code(md)).slackify()).rstrip("\n")


def render_chunks(md: str, limit: int = TEXT_LIMIT) -> list[str]:
    """Render, then split format-aware (mrkdwn fences are markdown fences)."""
    return split_markdown(render(md), limit)
