"""The inbound pipeline: named steps every message passes, in order (D98).

    dedup → admission → route → command → mention → policy → run

Each step is ``async def step(inbound, proceed)``: it acts on the message and either calls
``proceed()`` for the rest of the pipeline or stops there (a redelivery is dropped, a refused
sender gets nothing or a pairing code, a command is answered, a message nobody addressed is
stored without a run). The built-in steps are the router's; a plugin adds its own before or
after any of them by name (``PluginContext.add_inbound_step``, docs/PLUGINS.md), so what a
message goes through is one list, not a hub of hard-coded calls.

A step that stops must leave a trace, as the built-ins do: the message stored, a refusal
logged or counted, or a reply (nothing is lost).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.model.inbound import InboundMessage
    from core.model.records import SessionEntry
    from core.model.roles import Role
    from core.store.inbound import Claim

Proceed = Callable[[], Awaitable[None]]


@dataclass(slots=True)
class Inbound:
    """One message on its way through the pipeline; steps fill in what they learn."""

    message: InboundMessage
    claims: tuple[Claim, ...] = ()
    """Its platform identities (D16), claimed in the transaction that stores it."""
    session_key: str | None = None
    """Set by `route`: the session the message belongs to (the key module decides)."""
    entry: SessionEntry | None = None
    """Set by `route`: that session, with the message's chat as its reply route."""
    role: Role = "guest"
    """Set by `admission`: the sender's role (D60), never the model's say."""
    person_id: str | None = None
    """Set by `route`: the sender's linked person (D65), when linked."""
    notes: dict[str, object] = field(default_factory=dict)
    """Free room for plugin steps to hand something to a later step."""

    @property
    def is_owner(self) -> bool:
        """The sender is an owner (D60)."""
        return self.role == "owner"


StepFn = Callable[[Inbound, Proceed], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class InboundStep:
    name: str
    run: StepFn


class InboundStepError(ValueError):
    """A step named twice, or placed relative to a step that does not exist."""


class InboundSteps:
    """The ordered steps; the router adds the built-ins, plugins add theirs around them."""

    def __init__(self) -> None:
        self._steps: list[InboundStep] = []

    @property
    def names(self) -> list[str]:
        return [s.name for s in self._steps]

    def append(self, step: InboundStep) -> None:
        self._check_new(step)
        self._steps.append(step)

    def insert(
        self, step: InboundStep, *, before: str | None = None, after: str | None = None
    ) -> None:
        """Place `step` right before or right after the step named so (exactly one of them)."""
        if (before is None) == (after is None):
            raise InboundStepError("give exactly one of before= or after=")
        self._check_new(step)
        anchor = before if before is not None else after
        names = self.names
        if anchor not in names:
            raise InboundStepError(f"no inbound step named {anchor!r} (steps: {names})")
        at = names.index(anchor) + (0 if before is not None else 1)
        self._steps.insert(at, step)

    def _check_new(self, step: InboundStep) -> None:
        if step.name in self.names:
            raise InboundStepError(f"inbound step already registered: {step.name}")

    async def handle(self, inbound: Inbound) -> None:
        """Run the steps in order; each decides whether the rest run."""
        steps = tuple(self._steps)

        async def at(index: int) -> None:
            if index < len(steps):
                await steps[index].run(inbound, lambda: at(index + 1))

        await at(0)


__all__ = ["Inbound", "InboundStep", "InboundStepError", "InboundSteps", "Proceed", "StepFn"]
