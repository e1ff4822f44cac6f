"""`crosstalk pairing list|approve|deny|revoke`: DM pairing of a running gateway (D11)."""

from __future__ import annotations

import argparse
from functools import partial
from typing import Any
from urllib.parse import quote, urlencode

from core.edge.cli.client import ClientArgs, add_client_command, call, show_list


def _line(r: dict[str, Any]) -> str:
    who = f"{r['userId']} ({r['userName']})" if r.get("userName") else r["userId"]
    return f"{r['code']}  {r['channel']}/{r['accountId']}  {who}  {r['preview']!r}"


def _approved(data: dict[str, Any]) -> list[str]:
    return [f"approved  {a['channel']}/{a['accountId']}  {a['userId']}" for a in data["approved"]]


def _list(args: argparse.Namespace) -> int:
    query = f"?{urlencode({'channel': args.channel})}" if args.channel else ""
    empty = "no pending pairing requests"
    return show_list(args, f"/api/pairing{query}", "requests", empty, _line, _approved)


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
    text = "pending requests and approved senders"
    ls = add_client_command(pairing, client, "list", text, _list, listing=True)
    ls.add_argument("--channel", help="only this channel (one D11 guards)")
    for action, text in (
        ("approve", "approve a pending request by its code"),
        ("deny", "deny a pending request by its code"),
    ):
        fn = partial(_settle, action=action)
        add_client_command(pairing, client, action, text, fn, "channel", "code")
    text = "remove an approved sender from a channel"
    add_client_command(pairing, client, "revoke", text, _revoke, "channel", "user_id")
