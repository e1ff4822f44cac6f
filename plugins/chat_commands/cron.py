"""`/cron list` and `/cron rm ID`: the owner looks at and removes scheduled jobs from chat."""

from __future__ import annotations

from core.api.plugins import OWNER, CommandInvocation, CommandSpec
from core.api.sessions import CronError, iso

USAGE = "⚙️ Usage: /cron list | /cron rm ID"


async def handle_cron(inv: CommandInvocation) -> str:
    args = inv.command.args.split()
    cron = inv.env.cron
    if args in (["list"], ["ls"], []):
        jobs = await cron.jobs()
        if not jobs:
            return "⚙️ No cron jobs."
        lines = ["⚙️ Cron jobs:"]
        for rec in jobs:
            spec = rec.spec
            when = (
                f"at {spec['at']}"
                if spec.get("at")
                else f"every {spec['every']}"
                if spec.get("every")
                else f"{spec.get('schedule')}" + (f" ({spec['tz']})" if spec.get("tz") else "")
            )
            state = "" if rec.enabled else " (disabled)"
            lines.append(
                f"{rec.id}: {when}{state} — next {iso(rec.next_run_at)}, "
                f"last {rec.last_status or 'never'}"
            )
        return "\n".join(lines)
    if len(args) == 2 and args[0] in ("rm", "remove"):
        try:
            await cron.remove(args[1])
        except CronError as exc:
            return f"⚙️ {exc}."
        return f"⚙️ Removed cron job {args[1]}."
    return USAGE


SPEC = CommandSpec(
    name="cron",
    description="List or remove scheduled jobs: /cron list | rm ID",
    handler=handle_cron,
    permission=OWNER,
    usage=USAGE,
)
