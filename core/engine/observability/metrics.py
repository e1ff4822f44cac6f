"""Prometheus metrics of one runtime (`GET /metrics`), recorded at the single choke points.

Each runtime owns its own `CollectorRegistry` (never the process-global one), so several
runtimes in one process (tests) do not clash. Every sample carries a `process` label
(`host:pid`), so the series of several gateway processes on one database can be graphed side
by side. Values that already live elsewhere (queue depth, channel connection state) are read at
scrape time instead of being mirrored.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, get_args

from core.model.channel import AdapterState

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry, Counter, Histogram
    from prometheus_client.core import Metric

    from core.model.channel import AdapterStatus
    from core.store import RunRecord

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
ADAPTER_STATES: tuple[str, ...] = get_args(AdapterState)
_TURN_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)


def process_id() -> str:
    """`host:pid`: unique per gateway process, stable for its lifetime."""
    return f"{socket.gethostname()}:{os.getpid()}"


class _LiveState:
    """Queue depth and channel states, read from their owners when Prometheus scrapes (a
    prometheus_client collector by its `collect` method)."""

    def __init__(self, process: str) -> None:
        self.process = process
        self.load: Callable[[], tuple[int, int]] = lambda: (0, 0)
        self.channels: Callable[[], Iterable[AdapterStatus]] = list
        self.leases: Callable[[], Iterable[str]] = list
        """Names of the cluster leases this process holds (D27), as of its last heartbeat."""

    def collect(self) -> Iterable[Metric]:
        from prometheus_client.core import GaugeMetricFamily

        queued, running = self.load()
        depth = GaugeMetricFamily(
            "crosstalk_turn_queue_depth",
            "Turns accepted and waiting for their session or lane",
            labels=["process"],
        )
        depth.add_metric([self.process], queued)
        active = GaugeMetricFamily(
            "crosstalk_turns_running", "Turns executing right now", labels=["process"]
        )
        active.add_metric([self.process], running)
        state = GaugeMetricFamily(
            "crosstalk_channel_state",
            "Channel connection state (1 for the current state of each channel account)",
            labels=["process", "channel", "account", "state"],
        )
        for status in self.channels():
            for name in ADAPTER_STATES:
                state.add_metric(
                    [self.process, status.channel, status.account_id, name],
                    1 if status.state == name else 0,
                )
        held = GaugeMetricFamily(
            "crosstalk_lease_held",
            "1 for each cluster lease this process holds",
            labels=["process", "name"],
        )
        for name in self.leases():
            held.add_metric([self.process, name], 1)
        yield from (depth, active, state, held)


class _Series:
    """The registry and its series, built by the first sample or scrape (D56): an idle gateway
    never imports prometheus_client (~2 MiB)."""

    def __init__(self, process: str, started: float, live: _LiveState) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.registry: CollectorRegistry = CollectorRegistry()
        r, p = self.registry, ["process"]
        info = Gauge(
            "crosstalk_process_start_time_seconds",
            "Unix time this gateway process started",
            [*p, "pid", "host"],
            registry=r,
        )
        info.labels(process, str(os.getpid()), socket.gethostname()).set(started)
        self.started: Counter = Counter(
            "crosstalk_turns_started", "Turns that began executing", [*p, "lane"], registry=r
        )
        self.finished: Counter = Counter(
            "crosstalk_turns_finished",
            "Turns that ended, by final status (ok, error, timeout, aborted)",
            [*p, "lane", "status"],
            registry=r,
        )
        self.turn_seconds: Histogram = Histogram(
            "crosstalk_turn_duration_seconds",
            "Turn execution time (start to end)",
            [*p, "status"],
            buckets=_TURN_BUCKETS,
            registry=r,
        )
        self.wait_seconds: Histogram = Histogram(
            "crosstalk_turn_queue_wait_seconds",
            "Time from acceptance to start of a turn",
            p,
            buckets=_TURN_BUCKETS,
            registry=r,
        )
        self.model_seconds: Histogram = Histogram(
            "crosstalk_model_request_duration_seconds",
            "One model request (a turn makes one per tool round), by the model that answered",
            [*p, "model", "outcome"],
            buckets=_TURN_BUCKETS,
            registry=r,
        )
        self.deliveries: Counter = Counter(
            "crosstalk_deliveries",
            "Outbound deliveries through the gate, by outcome",
            [*p, "channel", "kind", "outcome"],
            registry=r,
        )
        self.refusals: Counter = Counter(
            "crosstalk_inbound_refusals",
            "Inbound messages refused by admission (D11)",
            [*p, "channel", "account", "reason"],
            registry=r,
        )
        self.limit_refusals: Counter = Counter(
            "crosstalk_limit_refusals",
            "Messages refused and turns stopped by a limit (D64)",
            [*p, "scope", "limit"],
            registry=r,
        )
        r.register(live)  # a collector by its `collect` method


class Metrics:
    """The counters and histograms of one runtime; every method is one call at a choke point."""

    def __init__(self, process: str | None = None) -> None:
        self.process = process or process_id()
        self._started_at = time.time()
        self._series: _Series | None = None
        self.live = _LiveState(self.process)
        self.timed_models: dict[
            str, Any
        ] = {}  # ref -> TimedModel (core.features.models.timed_model)

    @property
    def series(self) -> _Series:
        if self._series is None:
            self._series = _Series(self.process, self._started_at, self.live)
        return self._series

    @property
    def registry(self) -> CollectorRegistry:
        return self.series.registry

    # ---- choke points -----------------------------------------------------------------------

    def turn_started(self, run: RunRecord) -> None:
        m = self.series
        m.started.labels(self.process, run.lane).inc()
        if run.started_at is not None:
            m.wait_seconds.labels(self.process).observe(
                max(run.started_at - run.created_at, 0) / 1000
            )

    def turn_finished(self, run: RunRecord) -> None:
        m = self.series
        m.finished.labels(self.process, run.lane, run.status).inc()
        if run.started_at is not None and run.ended_at is not None:
            m.turn_seconds.labels(self.process, run.status).observe(
                max(run.ended_at - run.started_at, 0) / 1000
            )

    def delivery(self, channel: str | None, kind: str, outcome: str) -> None:
        self.series.deliveries.labels(self.process, channel or "none", kind, outcome).inc()

    def refusal(self, channel: str, account_id: str, reason: str) -> None:
        self.series.refusals.labels(self.process, channel, account_id, reason).inc()

    def limit_refusal(self, scope: str, limit: str) -> None:
        self.series.limit_refusals.labels(self.process, scope, limit).inc()

    def model_request(self, ref: str, outcome: str, seconds: float) -> None:
        self.series.model_seconds.labels(self.process, ref, outcome).observe(seconds)

    # ---- wiring and output ------------------------------------------------------------------

    def watch(
        self,
        load: Callable[[], tuple[int, int]],
        channels: Callable[[], Iterable[AdapterStatus]],
        leases: Callable[[], Iterable[str]],
    ) -> None:
        """Where the values read at scrape time live: queue depth, channel states, leases."""
        self.live.load, self.live.channels, self.live.leases = load, channels, leases

    def exposition(self) -> bytes:
        from prometheus_client import generate_latest

        return generate_latest(self.registry)

    def sample(self, name: str, **labels: Any) -> float:
        """One sample's value (0 when absent): for `crosstalk` tools and tests."""
        value = self.registry.get_sample_value(name, {"process": self.process, **labels})
        return value or 0.0


DISCARD = Metrics(process="unwired")
"""What a gate or run manager built outside a runtime records into (never exposed)."""
