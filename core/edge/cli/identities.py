"""`crosstalk identities list [--json]|unlink CHANNEL USER_ID`: linked identities (D65)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from core.edge.cli.client import call

ClientArgs = Callable[..., None]


def _list(args: argparse.Namespace) -> int:
    data = call(args, "GET", "/api/identities")
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    if not data["persons"]:
        print("no linked identities")
    for person in data["persons"]:
        accounts = ", ".join(f"{i['channel']}:{i['userId']}" for i in person["identities"])
        print(f"{person['personId']}  {accounts}")
    return 0


def _unlink(args: argparse.Namespace) -> int:
    path = f"/api/identities/{quote(args.channel, safe='')}/{quote(args.user_id, safe='')}"
    data = call(args, "DELETE", path)
    print(f"Unlinked {data['channel']}:{data['userId']}.")
    return 0


def add_identities_parser(sub: Any, client: ClientArgs) -> None:
    """Register `identities …` on the top-level subparsers; `client` adds --url/--token."""
    group = sub.group("identities", help="accounts linked into one person (/link)")
    ls = group.add_parser("list", help="each person and its accounts")
    ls.add_argument("--json", action="store_true")
    client(ls, requester=False)
    ls.set_defaults(fn=_list)
    un = group.add_parser("unlink", help="take one account out of its person")
    un.add_argument("channel")
    un.add_argument("user_id")
    client(un, requester=False)
    un.set_defaults(fn=_unlink)
