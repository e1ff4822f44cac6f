"""The command line's shared steps: load the config (or exit 2), call a running gateway's HTTP
API (or exit 1), and the client sub-commands' common shapes (a list, a command taking ids). The
sub-command modules (cron, pairing, identities, approvals) use them too."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from core.config import CrosstalkConfig

ClientArgs = Callable[..., None]
"""Adds --url/--token (and, unless `requester=False`, --session) to a sub-command."""


def load(args: argparse.Namespace) -> CrosstalkConfig:
    """The config, or exit 2 with one `path: reason` line per problem (also what would only
    fail later: a model naming no configured provider, D12)."""
    from core.config import ConfigError, load_config  # imported here: D55 (gc is off by then)
    from core.config.checks import model_reference_problems

    try:
        config = load_config(args.config)
        problems = model_reference_problems(config)
        if problems:
            raise ConfigError(problems)
        return config
    except ConfigError as exc:
        print(f"crosstalk: invalid configuration\n{exc}", file=sys.stderr)
        raise SystemExit(2) from exc


@dataclass(frozen=True)
class Target:
    """The gateway a client command talks to and where its token came from (D130)."""

    url: str
    token: str
    token_from: str
    state_dir: Path
    state_origin: str

    def fixes(self) -> str:
        return (
            f"state directory read: {self.state_dir} ({self.state_origin}).\n"
            "Run the command from the checkout where ./scripts/run started the gateway, set "
            "CROSSTALK_STATE_DIR to the directory the gateway printed as `State:` at start, or "
            "pass --token TOKEN (and --url URL for another gateway)."
        )


def resolve_target(args: argparse.Namespace) -> Target:
    """URL and token, read only: a client command never creates a token (D130); without one
    it exits 1 saying which gateway it would have tried and where it looked."""
    config = load(args)
    from core.config.state_dir import TOKEN_FILE, state_dir_origin
    from core.edge.http.auth import configured_secret

    url = (args.url or f"http://127.0.0.1:{config.gateway.port}").rstrip("/")
    state_dir = config.resolve_state_dir()
    origin = state_dir_origin(state_dir)
    if args.token:
        return Target(url, args.token, "--token", state_dir, origin)
    token = configured_secret(config, state_dir)
    if token is None:
        target = Target(url, "", "", state_dir, origin)
        fail(f"no gateway token to reach {url}: {state_dir / TOKEN_FILE} does not exist.", target)
    auth = config.gateway.auth
    source = (
        f"the file {state_dir / TOKEN_FILE}"
        if auth.mode == "token" and auth.token is None
        else "the config (gateway.auth) or CROSSTALK_GATEWAY_TOKEN"
    )
    return Target(url, token, source, state_dir, origin)


def fail(problem: str, target: Target) -> NoReturn:
    print(f"crosstalk: {problem}\n{target.fixes()}", file=sys.stderr)
    raise SystemExit(1)


def client_target(args: argparse.Namespace) -> tuple[str, str]:
    target = resolve_target(args)
    return target.url, target.token


def refused(target: Target) -> NoReturn:
    """A 401: the token is not this gateway's; say which token was sent and from where."""
    fail(f"the gateway at {target.url} refused the token from {target.token_from}.", target)


def unreachable(target: Target, exc: BaseException) -> NoReturn:
    print(
        f"crosstalk: cannot reach the gateway at {target.url} ({exc}).\n"
        "Start it with ./scripts/run (or crosstalk gateway), or pass --url URL.",
        file=sys.stderr,
    )
    raise SystemExit(1)


async def _request(method: str, url: str, token: str, body: Any = None) -> tuple[int, Any]:
    import aiohttp

    async with (
        aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as http,
        http.request(method, url, json=body, headers={"Authorization": f"Bearer {token}"}) as resp,
    ):
        text = await resp.text()
        try:
            return resp.status, json.loads(text)
        except ValueError:
            return resp.status, text


def call(args: argparse.Namespace, method: str, path: str, body: Any = None) -> Any:
    target = resolve_target(args)
    try:
        status, data = asyncio.run(_request(method, target.url + path, target.token, body))
    except OSError as exc:
        unreachable(target, exc)
    if status == 401:
        refused(target)
    if status >= 400:
        print(error_line(status, data), file=sys.stderr)
        raise SystemExit(1)
    return data


def error_line(status: int, data: Any) -> str:
    """The gateway's refusal as one line (`error: <message>`), whichever of our error shapes
    it came in; anything else as it was sent."""
    found = data.get("error") if isinstance(data, dict) else None
    if isinstance(found, dict) and isinstance(found.get("message"), str):
        return f"error: {found['message']} (HTTP {status})"
    return data if isinstance(data, str) else json.dumps(data, indent=2)


def show_list(
    args: argparse.Namespace,
    path: str,
    key: str,
    empty: str,
    line: Callable[[dict[str, Any]], str],
    then: Callable[[dict[str, Any]], Iterable[str]] = lambda data: (),
) -> int:
    """A list command: the gateway's JSON with --json, else a line per item of `key` (`empty`
    for none), then the lines `then` makes of the rest."""
    data = call(args, "GET", path)
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    if not data[key]:
        print(empty)
    for text in [*map(line, data[key]), *then(data)]:
        print(text)
    return 0


def add_client_command(
    group: Any,
    client: ClientArgs,
    name: str,
    text: str,
    fn: Callable[[argparse.Namespace], int],
    *positionals: str,
    listing: bool = False,
) -> argparse.ArgumentParser:
    """A sub-command of a running gateway: its positionals, --json when `listing`, the client
    options."""
    sp: argparse.ArgumentParser = group.add_parser(name, help=text)
    for positional in positionals:
        sp.add_argument(positional)
    if listing:
        sp.add_argument("--json", action="store_true")
    client(sp, requester=False)
    sp.set_defaults(fn=fn)
    return sp
