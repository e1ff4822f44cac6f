"""This process's name in the cluster: a fresh id per start, plus pid and host for people."""

from __future__ import annotations

import os
import socket
import uuid
from dataclasses import dataclass, field

from core.store.store import now_ms


@dataclass(frozen=True, slots=True)
class ProcessIdentity:
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    pid: int = field(default_factory=os.getpid)
    host: str = field(default_factory=socket.gethostname)
    started_at: int = field(default_factory=now_ms)
