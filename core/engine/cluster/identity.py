"""This process's name in the cluster: a fresh id per start, plus pid and host for people."""

from __future__ import annotations

import os
import socket
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from core.store.store import now_ms


def pid_space() -> str:
    """This kernel boot and PID namespace: within one, a pid names one live process, so a
    registered pid that no longer exists here is a dead gateway (D27). Empty when unknown."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text(encoding="ascii").strip()
        return f"{boot}:{os.stat('/proc/self/ns/pid').st_ino}"
    except OSError:
        return ""


@dataclass(frozen=True, slots=True)
class ProcessIdentity:
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    pid: int = field(default_factory=os.getpid)
    host: str = field(default_factory=socket.gethostname)
    started_at: int = field(default_factory=now_ms)
    pid_space: str = field(default_factory=pid_space)
