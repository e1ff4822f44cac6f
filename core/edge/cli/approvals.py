"""`crosstalk approvals list|approve ID|deny ID`: tool calls waiting for an owner (D72)."""

from __future__ import annotations

import argparse
import json
from functools import partial
from typing import Any
from urllib.parse import quote

from core.edge.cli.client import ClientArgs, add_client_command, call, show_list


def _line(a: dict[str, Any]) -> str:
    arguments = json.dumps(a["arguments"], ensure_ascii=False)
    return f"{a['id']}  {a['tool']}  {arguments[:120]}  {a['sessionKey']}"


def _list(args: argparse.Namespace) -> int:
    return show_list(args, "/api/approvals", "approvals", "no pending approvals", _line)


def _decide(args: argparse.Namespace, action: str) -> int:
    data = call(args, "POST", f"/api/approvals/{quote(args.id, safe='')}/{action}")
    a = data["approval"]
    verb = "Approved" if action == "approve" else "Denied"
    print(f"{verb} {a['id']}: {a['tool']}")
    return 0


def add_approvals_parser(sub: Any, client: ClientArgs) -> None:
    """Register `approvals …` on the top-level subparsers; `client` adds --url/--token."""
    approvals = sub.group("approvals", help="tool calls waiting for an owner's yes (D72)")
    add_client_command(
        approvals, client, "list", "pending approvals, oldest first", _list, listing=True
    )
    for action, text in (
        ("approve", "let the tool call run (exactly once)"),
        ("deny", "refuse the tool call; the agent is told"),
    ):
        fn = partial(_decide, action=action)
        add_client_command(approvals, client, action, text, fn, "id")
