"""`crosstalk cron list|add|rm|enable|disable|run`: cron jobs of a running gateway (/api/cron)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from core.edge.cli.client import ClientArgs, add_client_command, call
from core.features.cron.clock import iso


def _when(job: dict[str, Any]) -> str:
    if job.get("at"):
        return f"at {job['at']}"
    if job.get("every"):
        return f"every {job['every']}"
    return f"{job.get('schedule')}" + (f" ({job['tz']})" if job.get("tz") else "")


def _deliver(job: dict[str, Any]) -> str:
    d = job.get("deliver")
    return f"{d['channel']}:{d['to']}" if isinstance(d, dict) else "none"


def _list(args: argparse.Namespace) -> int:
    data = call(args, "GET", "/api/cron")
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    for job in data["jobs"]:
        state = "enabled" if job["enabled"] else "disabled"
        print(
            f"{job['id']:<20} {_when(job):<28} → {_deliver(job):<24} {state:<8} "
            f"next={iso(job['nextRunAt'])} last={job['lastStatus'] or '-'}"
        )
    print(f"{len(data['jobs'])} job(s)")
    return 0


def _parse_deliver(
    value: str | None, account: str | None, thread: str | None
) -> dict[str, Any] | str | None:
    if value is None:
        return None
    if value == "none":
        return "none"
    channel, sep, to = value.partition(":")
    if not sep or not channel or not to:
        raise SystemExit("crosstalk: --deliver must be CHANNEL:TO or none")
    out: dict[str, Any] = {"channel": channel, "to": to}
    if account:
        out["accountId"] = account
    if thread:
        out["threadId"] = thread
    return out


def _add(args: argparse.Namespace) -> int:
    body: dict[str, Any] = {"id": args.id, "message": args.message}
    for key in ("schedule", "tz", "every", "at"):
        if getattr(args, key) is not None:
            body[key] = getattr(args, key)
    if args.agent:
        body["agentId"] = args.agent
    deliver = _parse_deliver(args.deliver, args.account_id, args.thread_id)
    if deliver is not None:
        body["deliver"] = deliver
    if args.disabled:
        body["enabled"] = False
    job = call(args, "POST", "/api/cron", body)
    print(f"added {job['id']} ({_when(job)}), next run {iso(job['nextRunAt'])}")
    return 0


def _rm(args: argparse.Namespace) -> int:
    call(args, "DELETE", f"/api/cron/{args.id}")
    print(f"removed {args.id}")
    return 0


def _toggle(action: str) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        job = call(args, "POST", f"/api/cron/{args.id}/{action}")
        print(f"{job['id']} {action}d, next run {iso(job['nextRunAt'])}")
        return 0

    return run


def _run(args: argparse.Namespace) -> int:
    data = call(args, "POST", f"/api/cron/{args.id}/run")
    print(f"started run {data['runId']} in {data['sessionKey']}")
    return 0


def add_cron_commands(sub: Any, client: ClientArgs) -> None:
    """Register `crosstalk cron …` on the top-level subparsers."""
    cron = sub.group("cron", help="scheduled jobs of a running gateway")
    text = "list jobs with their last and next run"
    add_client_command(cron, client, "list", text, _list, listing=True)
    add = cron.add_parser("add", help="add a job (one of --schedule, --every, --at)")
    add.add_argument("id", help="job id: [a-z0-9][a-z0-9_-]{0,63}")
    when = add.add_mutually_exclusive_group(required=True)
    when.add_argument("--schedule", help='5-field cron expression, e.g. "0 9 * * 1-5"')
    when.add_argument("--every", help="interval, e.g. 10m, 1h30m")
    when.add_argument("--at", help="ISO-8601 time, fires once")
    add.add_argument("--tz", help="time zone of --schedule / --at, e.g. Europe/Paris")
    add.add_argument("--message", required=True, help="what the agent is told")
    add.add_argument("--agent", help="agent id (default: the default agent)")
    add.add_argument("--deliver", help="CHANNEL:TO, or none (default none)")
    add.add_argument("--account-id")
    add.add_argument("--thread-id")
    add.add_argument("--disabled", action="store_true")
    client(add, requester=False)
    add.set_defaults(fn=_add)
    handlers: dict[str, tuple[str, Callable[[argparse.Namespace], int]]] = {
        "rm": ("remove a job", _rm),
        "enable": ("enable a job", _toggle("enable")),
        "disable": ("disable a job", _toggle("disable")),
        "run": ("fire a job now", _run),
    }
    for name, (text, fn) in handlers.items():
        add_client_command(cron, client, name, text, fn, "id")
