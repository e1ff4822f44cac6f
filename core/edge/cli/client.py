"""The command line's two shared steps: load the config (or exit 2) and call a running
gateway's HTTP API (or exit 1). The sub-command modules (cron, pairing) use them too."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.config import CrosstalkConfig


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


def client_target(args: argparse.Namespace) -> tuple[str, str]:
    config = load(args)
    from core.edge.http.auth import gateway_secret

    url = args.url or f"http://127.0.0.1:{config.gateway.port}"
    token = args.token or gateway_secret(config, config.resolve_state_dir())
    return url.rstrip("/"), token


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
    base, token = client_target(args)
    try:
        status, data = asyncio.run(_request(method, base + path, token, body))
    except OSError as exc:
        print(f"crosstalk: cannot reach the gateway at {base}: {exc}", file=sys.stderr)
        raise SystemExit(1) from exc
    if status >= 400:
        print(json.dumps(data, indent=2) if not isinstance(data, str) else data, file=sys.stderr)
        raise SystemExit(1)
    return data
