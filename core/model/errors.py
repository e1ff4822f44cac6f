"""Crosstalk's exception tree.

    CrosstalkError
    ├── DeliveryError            an outbound message could not be handed to a platform
    │   ├── PolicyDenied         the send policy resolved to deny
    │   ├── RateLimited          the platform asked us to wait (`retry_after` seconds)
    │   ├── ChannelUnavailable   no adapter, adapter down, network failure
    │   ├── TargetNotFound       the chat/channel does not exist (404)
    │   └── TargetForbidden      the bot may not post there (403)
    ├── ToolError                a tool call failed; becomes {status:"error", tool, error}
    │   ├── ToolInputError       bad or missing argument ("sessionKey required")
    │   └── ToolRefused          a documented refusal; the registry returns it as the payload
    │                            {status:"forbidden"|"error", error, …} (never a thrown error)
    ├── RunError                 an agent run could not start or finished badly
    │   ├── SendBlocked          "send blocked by session policy" (decision D5)
    │   └── UnknownRun           no run with that id
    ├── LifecycleError           the runtime was started twice, or used in the wrong state
    ├── ConfigError              core.config.loader: invalid or unreadable configuration
    ├── StoreError               core.store.store: a store operation was refused
    ├── DuplicateInbound         core.store.ledger: this platform message was accepted before
    ├── ModelNotAvailable        core.features.models.resolver: no configured provider or model
    ├── MissingExtra             core.features.models.providers: a provider's SDK extra is missing
    ├── HttpError                core.edge.http.edge: a client error answered with a 4xx
    ├── CronError                core.features.cron.service: a cron job could not be added or run
    └── PluginError              core.features.extension.discovery: a plugin could not be loaded

Each error stays importable from the module named beside it; this module holds the root and the
errors several packages share.
"""

from __future__ import annotations

SEND_BLOCKED = "send blocked by session policy"


class CrosstalkError(Exception):
    """Base of every error Crosstalk raises on purpose."""


class DeliveryError(CrosstalkError):
    """An outbound message did not reach the platform."""


class PolicyDenied(DeliveryError):
    pass


class RateLimited(DeliveryError):
    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ChannelUnavailable(DeliveryError):
    pass


class TargetNotFound(DeliveryError):
    pass


class TargetForbidden(DeliveryError):
    pass


class ToolError(CrosstalkError):
    """Raised inside a tool; the agent adapter turns it into an error payload."""


class ToolInputError(ToolError):
    pass


class ToolRefused(ToolError):
    """The one way a tool refuses: ``raise ToolRefused(text)``.

    The tool registry turns it into the documented result payload
    ``{runId?, status, error, …fields}`` (status ``forbidden`` by default, or ``error``), so
    every caller (agent, ``POST /tools/invoke``, MCP) sees the same shape, never an exception.
    """

    def __init__(
        self, error: str, *, status: str = "forbidden", run_id: str | None = None, **fields: object
    ) -> None:
        super().__init__(error)
        self.error, self.status, self.run_id, self.fields = error, status, run_id, fields

    def with_run_id(self, run_id: str) -> ToolRefused:
        """The same refusal, reported for run `run_id` (sessions_send results carry it)."""
        return ToolRefused(self.error, status=self.status, run_id=run_id, **self.fields)

    def payload(self) -> dict[str, object]:
        lead: dict[str, object] = {} if self.run_id is None else {"runId": self.run_id}
        return {**lead, "status": self.status, "error": self.error, **self.fields}


class RunError(CrosstalkError):
    pass


class SendBlocked(RunError):
    def __init__(self, message: str = SEND_BLOCKED) -> None:
        super().__init__(message)


class UnknownRun(RunError):
    pass


class LimitStop(RunError):
    """A cost limit reached before a model request (D64): the run ends `limited`; `text` is
    the refusal to send ("" when this window's refusal was already sent)."""

    def __init__(self, text: str) -> None:
        super().__init__(text or "limit reached")
        self.text = text


class LifecycleError(CrosstalkError):
    """The runtime was asked to do something its state forbids (a second ``start``)."""
