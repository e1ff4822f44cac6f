"""What a reply needs to thread under its conversation: the subject and the message answered.

Noted as each mail arrives, kept in ``<stateDir>/email/<account>-threads.json`` (mode 0600,
the most recent 500 threads) so a restart still threads replies. A process that never saw
the thread (another member of a cluster) threads by the root id alone, which every client
still files correctly.
"""

from __future__ import annotations

import json
import os
from collections import OrderedDict
from dataclasses import asdict, dataclass
from pathlib import Path

KEEP = 500


@dataclass(frozen=True, slots=True)
class Thread:
    subject: str
    last: str | None
    references: tuple[str, ...]


class ThreadIndex:
    def __init__(self, state_dir: Path | None, account_id: str) -> None:
        self.path = state_dir / "email" / f"{account_id}-threads.json" if state_dir else None
        self._threads: OrderedDict[str, Thread] = OrderedDict()
        if self.path is not None and self.path.exists():
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
                for root, t in data.items():
                    self._threads[root] = Thread(
                        str(t["subject"]), t.get("last"), tuple(t.get("references") or ())
                    )
            except (OSError, ValueError, KeyError, TypeError):
                self._threads.clear()

    def get(self, root: str) -> Thread | None:
        return self._threads.get(root)

    def note(self, root: str, thread: Thread) -> None:
        old = self._threads.pop(root, None)
        subject = thread.subject or (old.subject if old else "")
        self._threads[root] = Thread(subject, thread.last, thread.references)
        while len(self._threads) > KEEP:
            self._threads.popitem(last=False)
        self._save()

    def _save(self) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        os.chmod(self.path.parent, 0o700)
        tmp = self.path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({k: asdict(v) for k, v in self._threads.items()}, fh)
        os.replace(tmp, self.path)
