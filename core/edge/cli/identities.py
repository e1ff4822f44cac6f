"""`crosstalk identities list [--json]|unlink CHANNEL USER_ID`: linked identities (D65)."""

from __future__ import annotations

import argparse
from typing import Any
from urllib.parse import quote

from core.edge.cli.client import ClientArgs, add_client_command, call, show_list


def _line(person: dict[str, Any]) -> str:
    accounts = ", ".join(f"{i['channel']}:{i['userId']}" for i in person["identities"])
    return f"{person['personId']}  {accounts}"


def _list(args: argparse.Namespace) -> int:
    return show_list(args, "/api/identities", "persons", "no linked identities", _line)


def _unlink(args: argparse.Namespace) -> int:
    path = f"/api/identities/{quote(args.channel, safe='')}/{quote(args.user_id, safe='')}"
    data = call(args, "DELETE", path)
    print(f"Unlinked {data['channel']}:{data['userId']}.")
    return 0


def add_identities_parser(sub: Any, client: ClientArgs) -> None:
    """Register `identities …` on the top-level subparsers; `client` adds --url/--token."""
    group = sub.group("identities", help="accounts linked into one person (/link)")
    add_client_command(group, client, "list", "each person and its accounts", _list, listing=True)
    text = "take one account out of its person"
    add_client_command(group, client, "unlink", text, _unlink, "channel", "user_id")
