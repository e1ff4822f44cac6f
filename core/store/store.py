"""The one store API: every aggregate's operations on one object (all SQL is in core/store, D96).

:class:`Store` joins the aggregates, each a module of its own: sessions, transcripts, runs, the
delivery log, inbound identities, pairing, cron jobs, sub-agents and the cluster's tables. Each
operation is one function of a connection run in one transaction (:mod:`core.store.database`).
"""

from __future__ import annotations

from core.store.activity import ActivityStore
from core.store.approvals import ApprovalsStore
from core.store.cluster import ClusterStore
from core.store.console import ConsoleStore
from core.store.cron import CronStore
from core.store.database import StoreError, now_ms
from core.store.deliveries import DeliveriesStore
from core.store.inbound import InboundStore
from core.store.media import MediaStore
from core.store.pairing import PairingStore
from core.store.people import PeopleStore
from core.store.search import SearchStore
from core.store.subagents import SubagentStore
from core.store.summaries import SummariesStore


class Store(
    InboundStore,
    ClusterStore,
    DeliveriesStore,
    PairingStore,
    CronStore,
    SubagentStore,
    ConsoleStore,
    ApprovalsStore,
    MediaStore,
    SearchStore,
    SummariesStore,
    ActivityStore,
    PeopleStore,
):
    """Async facade over SQLite or PostgreSQL: sessions, transcripts (and their search), runs,
    deliveries, inbound identities, pairing, cron jobs, sub-agents, the cluster's rows, the owner
    console's, paused runs' questions (D72) and outbound media (D78)."""


__all__ = ["Store", "StoreError", "now_ms"]
