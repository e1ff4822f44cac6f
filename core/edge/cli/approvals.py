"""`crosstalk approvals list|approve ID|deny ID`: tool calls waiting for an owner (D72)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from core.edge.cli.client import call

ClientArgs = Callable[..., None]


def _list(args: argparse.Namespace) -> int:
    data = call(args, "GET", "/api/approvals")
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    if not data["approvals"]:
        print("no pending approvals")
    for a in data["approvals"]:
        arguments = json.dumps(a["arguments"], ensure_ascii=False)
        print(f"{a['id']}  {a['tool']}  {arguments[:120]}  {a['sessionKey']}")
    return 0


def _decide(args: argparse.Namespace, action: str) -> int:
    data = call(args, "POST", f"/api/approvals/{quote(args.id, safe='')}/{action}")
    a = data["approval"]
    verb = "Approved" if action == "approve" else "Denied"
    print(f"{verb} {a['id']}: {a['tool']}")
    return 0


def add_approvals_parser(sub: Any, client: ClientArgs) -> None:
    """Register `approvals …` on the top-level subparsers; `client` adds --url/--token."""
    approvals = sub.group("approvals", help="tool calls waiting for an owner's yes (D72)")
    ls = approvals.add_parser("list", help="pending approvals, oldest first")
    ls.add_argument("--json", action="store_true")
    client(ls, requester=False)
    ls.set_defaults(fn=_list)
    for action, text in (
        ("approve", "let the tool call run (exactly once)"),
        ("deny", "refuse the tool call; the agent is told"),
    ):
        sp = approvals.add_parser(action, help=text)
        sp.add_argument("id")
        client(sp, requester=False)
        sp.set_defaults(fn=lambda a, act=action: _decide(a, act))
