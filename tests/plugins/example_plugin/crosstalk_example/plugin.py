"""The plugin: `/shout` (owner-only) and the `example_weather` tool."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from core.api.plugins import (
    OWNER,
    CommandInvocation,
    CommandSpec,
    PluginContext,
    ToolContext,
    ToolEnv,
    ToolRefused,
    ToolSpec,
)

FORECASTS = {"oslo": "snow, -3 °C", "lisbon": "sunny, 21 °C"}


async def shout(inv: CommandInvocation) -> str:
    # No owner check here: the registry refuses non-owners before this runs.
    return f"📣 {inv.command.args.upper() or 'HELLO'}"


class WeatherArgs(BaseModel):
    city: str = Field(description="City name, e.g. Oslo")


async def weather(env: ToolEnv, ctx: ToolContext, args: WeatherArgs) -> dict[str, Any]:
    forecast = FORECASTS.get(args.city.strip().lower())
    if forecast is None:
        raise ToolRefused(f"no forecast for {args.city}", status="error")
    return {"status": "ok", "city": args.city, "forecast": forecast}


def register(ctx: PluginContext) -> None:
    ctx.register_command(
        CommandSpec(
            name="shout",
            description="Shout a line back (owner-only)",
            handler=shout,
            permission=OWNER,
            usage="/shout TEXT",
        )
    )
    ctx.register_tool(
        ToolSpec(
            name="example_weather",
            description="Today's forecast for a city.",
            args_model=WeatherArgs,
            handler=weather,
        )
    )
