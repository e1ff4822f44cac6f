"""The sessions vocabulary plugins share with core: keys, stored records, delivery targets,
runs, send policy and the hop budget (D1, D5, D8, D13, D49).

Values and pure rules only (plus the store protocol a plugin reads sessions through); the
registration surface is :mod:`core.api.plugins`.
"""

from __future__ import annotations

from core.config import primary_model
from core.config.schema_cron import CronJobConfig
from core.engine.outbound.delivery import Outbound
from core.engine.runs import RunRequest
from core.engine.runs.reset import reset_session
from core.features.agent.compaction import compact_now
from core.features.cron.clock import iso
from core.features.cron.service import CronError
from core.features.cron.turns import deliver_target, target_wire
from core.features.services import SessionStore
from core.features.subagents.announce import format_duration, status_word
from core.features.subagents.prompts import subagent_system_prompt
from core.features.subagents.sweeper import archive_at
from core.model.delivery_context import DeliveryContext, session_target
from core.model.keys import (
    InvalidSessionKey,
    agent_id_of,
    is_key_shaped,
    is_subagent_key,
    is_uuid,
    multiple_sessions_found,
    no_session_found,
    normalize_agent_id,
    not_visible_from_sandbox,
    parse_announce_target,
)
from core.model.records import RunRecord, SessionEntry, SessionQuery, TranscriptMessage
from core.model.search import QueryError, SearchHit, SearchQuery, excerpt, searchable_text
from core.model.send_limits import hop_error
from core.model.send_policy import effective_policy_text
from core.store import StoreError, now_ms
from core.store.runs import STEER_LANE
from core.store.subagents import SubagentRecord

__all__ = [
    "STEER_LANE",
    "CronError",
    "CronJobConfig",
    "DeliveryContext",
    "InvalidSessionKey",
    "Outbound",
    "QueryError",
    "RunRecord",
    "RunRequest",
    "SearchHit",
    "SearchQuery",
    "SessionEntry",
    "SessionQuery",
    "SessionStore",
    "StoreError",
    "SubagentRecord",
    "TranscriptMessage",
    "agent_id_of",
    "archive_at",
    "compact_now",
    "deliver_target",
    "effective_policy_text",
    "excerpt",
    "format_duration",
    "hop_error",
    "is_key_shaped",
    "is_subagent_key",
    "is_uuid",
    "iso",
    "multiple_sessions_found",
    "no_session_found",
    "normalize_agent_id",
    "not_visible_from_sandbox",
    "now_ms",
    "parse_announce_target",
    "primary_model",
    "reset_session",
    "searchable_text",
    "session_target",
    "status_word",
    "subagent_system_prompt",
    "target_wire",
]
