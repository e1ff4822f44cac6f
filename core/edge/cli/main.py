"""`crosstalk` command line: run the gateway, check config, migrate, talk to a running gateway."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import TYPE_CHECKING, Any

from core.edge.cli.approvals import add_approvals_parser
from core.edge.cli.client import call, load, resolve_target
from core.edge.cli.identities import add_identities_parser
from core.edge.cli.pairing import add_pairing_parser
from core.model.errors import CrosstalkError

if TYPE_CHECKING:
    pass


def _private_umask() -> None:
    """Whatever the gateway process creates is its own (D12); the state dir is 0700 anyway."""
    import os

    os.umask(0o077)


def _gateway(args: argparse.Namespace) -> int:
    import gc

    gc.disable()  # D55: start-up only allocates; serve() freezes what it built and re-enables
    from core.features.models import heap

    heap.skip_library_clis()  # D145, before an adapter or the model stack imports httpx
    try:
        return _run_gateway(args)
    finally:
        gc.enable()


def _run_gateway(args: argparse.Namespace) -> int:
    import logging

    from core.edge.http.server import serve
    from core.engine.observability.logs import configure_logging

    configure_logging()  # text until the config says otherwise: load problems are logged too
    config = load(args)
    _private_umask()
    from core.config import config_secrets

    configure_logging(
        config.logging.format,
        level=getattr(logging, config.logging.level),
        secrets=config_secrets(config),
    )
    from core.features.models import heap

    heap.freeze_after_warm_up()  # D50: this process owns its heap
    try:
        asyncio.run(serve(config))
    except KeyboardInterrupt:
        pass
    except (CrosstalkError, OSError) as exc:
        print(f"crosstalk: the gateway could not start: {exc}", file=sys.stderr)
        return 1
    return 0


def _config_check(args: argparse.Namespace) -> int:
    config = load(args)
    from core.config import dump_masked

    print(json.dumps(dump_masked(config), indent=2))
    return 0  # no dmScope warning: a non-owner's DM never shares the main session (D62)


def _db_upgrade(args: argparse.Namespace) -> int:
    from core.store.engine import upgrade_sync
    from core.store.files import private_dir

    config = load(args)
    _private_umask()
    private_dir(config.resolve_state_dir())
    upgrade_sync(config.database_url())
    print(f"database upgraded: {config.database_url().split('@')[-1]}")
    return 0


def _invoke(args: argparse.Namespace, tool: str, tool_args: dict[str, Any]) -> Any:
    body = {"tool": tool, "args": tool_args, "sessionKey": args.session}
    return call(args, "POST", "/tools/invoke", body)["result"]["details"]


def _sessions_list(args: argparse.Namespace) -> int:
    details = _invoke(args, "sessions_list", {"limit": args.limit})
    if args.json:
        print(json.dumps(details, indent=2))
        return 0
    for row in details["sessions"]:
        print(
            f"{row['key']:<48} {row['kind']:<6} {row['channel']:<9} {row.get('displayName') or ''}"
        )
    print(f"{details['count']} session(s)")
    return 0


def _sessions_patch(args: argparse.Namespace) -> int:
    body: dict[str, Any] = {}
    if args.send_policy is not None:
        body["sendPolicy"] = {
            "on": "allow",
            "allow": "allow",
            "off": "deny",
            "deny": "deny",
            "inherit": None,
        }[args.send_policy]
    if args.label is not None:
        body["label"] = args.label
    from urllib.parse import quote

    print(
        json.dumps(call(args, "PATCH", f"/api/sessions/{quote(args.key, safe='')}", body), indent=2)
    )
    return 0


def _tools_invoke(args: argparse.Namespace) -> int:
    try:
        tool_args = json.loads(args.args)
    except ValueError as exc:
        print(f"crosstalk: --args is not valid JSON: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(_invoke(args, args.name, tool_args), indent=2))
    return 0


def _deliveries(args: argparse.Namespace) -> int:
    from urllib.parse import urlencode

    query = {
        k: v
        for k, v in (
            ("session", args.session_filter),
            ("outcome", args.outcome),
            ("limit", str(args.limit)),
        )
        if v
    }
    data = call(args, "GET", "/api/deliveries?" + urlencode(query))
    if not data["deliveries"]:
        print("no deliveries" + (" matching these filters" if len(query) > 1 else ""))
    for d in data["deliveries"]:
        print(
            f"#{d['id']} {d['outcome']:<21} {d['kind']:<13} {d['sessionKey'] or '-'} "
            f"→ {d['channel']}:{d['to']}  {d['reason'] or ''}"
        )
    return 0


def _channels_status(args: argparse.Namespace) -> int:
    from core.edge.http.channel_stats import status_suffix

    data = call(args, "GET", "/healthz")
    for ch in data["channels"]:
        line = f"{ch['channel']}/{ch['accountId']}: {ch['state']} {ch.get('detail') or ''}"
        if "refused" in ch:
            line = f"{line.rstrip()} refused={ch['refused']}"
        print(line.rstrip() + status_suffix(ch))
    return 0


def _mcp(args: argparse.Namespace) -> int:
    """One clear line instead of a task group's traceback (D130): the gateway and the token are
    checked before the relay starts."""
    from core.edge.mcp.stdio_proxy import run_stdio_proxy

    target = resolve_target(args)
    call(args, "GET", "/v1/models")  # exits 1 with the reason: no gateway, or not its token
    return asyncio.run(run_stdio_proxy(target.url, target.token, args.session))


class _Version(argparse.Action):
    """`--version`: the installed package's version, looked up only when asked (D55)."""

    def __call__(self, parser: argparse.ArgumentParser, *_: Any, **__: Any) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("crosstalk")
        except PackageNotFoundError:
            found = "(not installed as a package)"
        print(f"crosstalk {found}")
        parser.exit()


_CONFIG_HELP = "YAML or JSON5 config file (default: $CROSSTALK_CONFIG)"


class _Subparsers:
    """Adds every subcommand (at any depth) with the shared options (`--config`)."""

    def __init__(self, action: Any, common: argparse.ArgumentParser) -> None:
        self._action = action
        self._common = common

    def add_parser(self, name: str, **kw: Any) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = self._action.add_parser(
            name, parents=[self._common], **kw
        )
        return parser

    def group(self, name: str, **kw: Any) -> _Subparsers:
        """A subcommand with subcommands of its own (`config check`, `sessions list`)."""
        return _Subparsers(
            self.add_parser(name, **kw).add_subparsers(dest="sub", required=True), self._common
        )


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="crosstalk", description=__doc__)
    p.add_argument("--config", help=_CONFIG_HELP)
    p.add_argument("--version", action=_Version, nargs=0, help="print the version and exit")
    # `--config` is accepted before the subcommand and after it (README: `crosstalk gateway
    # --config FILE`); SUPPRESS keeps a subcommand's absent option from resetting the global one
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", default=argparse.SUPPRESS, help=_CONFIG_HELP)
    sub = _Subparsers(p.add_subparsers(dest="command", required=True), common)

    def client(sp: argparse.ArgumentParser, *, requester: bool = True) -> None:
        sp.add_argument("--url", help="gateway URL (default: http://127.0.0.1:<gateway.port>)")
        sp.add_argument("--token", help="gateway token (default: from config or state dir)")
        if requester:
            sp.add_argument("--session", default="main", help="requester session key")

    sub.add_parser("gateway", help="run the gateway in the foreground").set_defaults(fn=_gateway)
    cfg = sub.group("config")
    cfg.add_parser("check", help="print the effective config, secrets masked").set_defaults(
        fn=_config_check
    )
    db = sub.group("db")
    db.add_parser("upgrade", help="apply database migrations").set_defaults(fn=_db_upgrade)
    sessions = sub.group("sessions")
    ls = sessions.add_parser("list", help="list sessions of a running gateway")
    ls.add_argument("--json", action="store_true")
    ls.add_argument("--limit", type=int, default=50)
    client(ls)
    ls.set_defaults(fn=_sessions_list)
    patch = sessions.add_parser("patch", help="change a session (send policy, label)")
    patch.add_argument("key")
    patch.add_argument("--send-policy", choices=["on", "off", "inherit", "allow", "deny"])
    patch.add_argument("--label")
    client(patch)
    patch.set_defaults(fn=_sessions_patch)
    tools = sub.group("tools")
    inv = tools.add_parser("invoke", help="invoke a tool over POST /tools/invoke")
    inv.add_argument("name")
    inv.add_argument("--args", default="{}")
    client(inv)
    inv.set_defaults(fn=_tools_invoke)
    dl = sub.add_parser("deliveries", help="the delivery log, newest first")
    dl.add_argument("--session", dest="session_filter", help="only this session's deliveries")
    dl.add_argument("--outcome")
    dl.add_argument("--limit", type=int, default=50)
    client(dl, requester=False)
    dl.set_defaults(fn=_deliveries)
    ch = sub.group("channels")
    st = ch.add_parser("status", help="connection state of each channel")
    client(st, requester=False)
    st.set_defaults(fn=_channels_status)
    add_pairing_parser(sub, client)
    add_identities_parser(sub, client)
    add_approvals_parser(sub, client)
    from core.edge.cli.cron import add_cron_commands

    add_cron_commands(sub, client)
    mcp = sub.add_parser(
        "mcp",
        help="serve the session tools over MCP on stdio (relays to the running gateway's /mcp)",
    )
    client(mcp)
    mcp.set_defaults(fn=_mcp)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    result: int = args.fn(args)
    return result


if __name__ == "__main__":
    raise SystemExit(main())
