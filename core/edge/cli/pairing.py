"""`crosstalk pairing list|approve|deny|revoke`: DM pairing of a running gateway (D11)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, urlencode

from core.edge.cli.client import call

ClientArgs = Callable[..., None]


def _list(args: argparse.Namespace) -> int:
    query = f"?{urlencode({'channel': args.channel})}" if args.channel else ""
    data = call(args, "GET", f"/api/pairing{query}")
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    if not data["requests"]:
        print("no pending pairing requests")
    for r in data["requests"]:
        who = f"{r['userId']} ({r['userName']})" if r.get("userName") else r["userId"]
        print(f"{r['code']}  {r['channel']}/{r['accountId']}  {who}  {r['preview']!r}")
    for a in data["approved"]:
        print(f"approved  {a['channel']}/{a['accountId']}  {a['userId']}")
    return 0


def _settle(args: argparse.Namespace, action: str) -> int:
    path = f"/api/pairing/{quote(args.channel, safe='')}/{quote(args.code, safe='')}/{action}"
    data = call(args, "POST", path)
    verb = "Approved" if action == "approve" else "Denied"
    print(f"{verb} {data['userId']} on {args.channel.strip().lower()}.")
    return 0


def _revoke(args: argparse.Namespace) -> int:
    path = f"/api/pairing/{quote(args.channel, safe='')}/approved/{quote(args.user_id, safe='')}"
    data = call(args, "DELETE", path)
    print(f"Revoked {data['userId']} on {args.channel.strip().lower()}.")
    return 0


def add_pairing_parser(sub: Any, client: ClientArgs) -> None:
    """Register `pairing …` on the top-level subparsers; `client` adds --url/--token."""
    pairing = sub.group("pairing", help="who may DM the bot: pairing requests")
    ls = pairing.add_parser("list", help="pending requests and approved senders")
    ls.add_argument("--channel", help="only this channel (one D11 guards)")
    ls.add_argument("--json", action="store_true")
    client(ls, requester=False)
    ls.set_defaults(fn=_list)
    for action, text in (
        ("approve", "approve a pending request by its code"),
        ("deny", "deny a pending request by its code"),
    ):
        sp = pairing.add_parser(action, help=text)
        sp.add_argument("channel")
        sp.add_argument("code")
        client(sp, requester=False)
        sp.set_defaults(fn=lambda a, act=action: _settle(a, act))
    rv = pairing.add_parser("revoke", help="remove an approved sender from a channel")
    rv.add_argument("channel")
    rv.add_argument("user_id")
    client(rv, requester=False)
    rv.set_defaults(fn=_revoke)
