"""The ledger after a chaos run (tests/chaos.py, D16): whether everything has settled, and the
duplicates, silent losses and aborted turns that the store and the fake chat show."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select

from core.store import Store
from core.store.ledger_tables import DeliveryChunkRow
from core.store.tables import DeliveryRow, MessageRow, RunRow
from tests.chaos_fakes import People, reply_for

MESSAGES: Any = MessageRow.__table__  # type: ignore[attr-defined]


@dataclass
class ChaosReport:
    backend: str
    messages: int = 0
    kills: int = 0
    duplicates: int = 0
    losses: int = 0
    aborted: int = 0
    refused: int = 0
    """Stored without a turn on purpose (a limit, a send policy: the message's `noRun`)."""
    resent_after_crash: int = 0
    failed_deliveries: int = 0
    chunks_sent: int = 0
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)

    def line(self) -> str:
        return (
            f"{self.backend}: messages={self.messages} kills={self.kills} "
            f"duplicates={self.duplicates} losses={self.losses} aborted={self.aborted} "
            f"refused={self.refused} "
            f"resent_after_crash={self.resent_after_crash} "
            f"failed_deliveries={self.failed_deliveries} chunks={self.chunks_sent} "
            f"({self.seconds:.1f}s)"
        )


async def is_settled(store: Store, sent: list[str]) -> bool:
    """Every message stored, no run in flight, no delivery pending, every ok run delivered."""

    def check(c: Any) -> bool:
        users = {
            m.content[0].get("text")
            for m in c.execute(select(MESSAGES.c.content).where(MESSAGES.c.role == "user"))
        }
        if not set(sent) <= users:
            return False
        runs = c.execute(select(RunRow.__table__.c.status)).scalars().all()  # type: ignore[attr-defined]
        if any(s in ("queued", "running") for s in runs):
            return False
        # in this order: a delivery opened between two statements is seen by the second
        d, r = DeliveryRow.__table__, RunRow.__table__  # type: ignore[attr-defined]
        undelivered = select(r.c.id).where(
            r.c.status == "ok",
            r.c.deliver.is_(True),
            ~select(d.c.id).where(d.c.run_id == r.c.id).exists(),
        )
        if c.execute(undelivered).first() is not None:
            return False
        return c.execute(select(d.c.id).where(d.c.outcome == "pending")).first() is None

    return bool(await store.read(check))


async def ledger_counts(store: Store) -> dict[str, Any]:
    """Counts that say why a run did not settle."""
    r, d = RunRow.__table__, DeliveryRow.__table__  # type: ignore[attr-defined]
    m = MessageRow.__table__  # type: ignore[attr-defined]

    def op(c: Any) -> dict[str, Any]:
        return {
            "users": c.execute(
                select(func.count()).select_from(m).where(m.c.role == "user")
            ).scalar_one(),
            "runs": dict(Counter(c.execute(select(r.c.status)).scalars().all())),
            "deliveries": dict(Counter(c.execute(select(d.c.outcome)).scalars().all())),
        }

    result: dict[str, Any] = await store.read(op)
    return result


async def analyse(store: Store, people: People, sent: list[str], report: ChaosReport) -> None:
    m, r = MessageRow.__table__, RunRow.__table__  # type: ignore[attr-defined]
    d, ch = DeliveryRow.__table__, DeliveryChunkRow.__table__  # type: ignore[attr-defined]

    def load(c: Any) -> tuple[Any, ...]:
        users = c.execute(select(m.c.id, m.c.content, m.c.meta).where(m.c.role == "user")).all()
        runs = c.execute(select(r.c.id, r.c.input_message_id, r.c.status)).all()
        deliveries = c.execute(select(d.c.id, d.c.run_id, d.c.outcome, d.c.to)).all()
        chunks = c.execute(
            select(
                ch.c.delivery_id, ch.c.chunk_index, ch.c.text, ch.c.state, ch.c.platform_message_id
            )
        ).all()
        return users, runs, deliveries, chunks

    users, runs, deliveries, chunks = await store.read(load)
    text_of = {mid: content[0].get("text") for mid, content, _ in users}
    refused = {mid for mid, _, meta in users if (meta or {}).get("noRun")}
    stored = Counter(text_of.values())
    runs_of: dict[int, list[tuple[str, str]]] = {}
    for run_id, input_id, status in runs:
        runs_of.setdefault(input_id, []).append((run_id, status))
    shown = people.shown()
    delivery_of = {run_id: (did, outcome, to) for did, run_id, outcome, to in deliveries}
    chunks_of: dict[int, list[Any]] = {}
    for row in chunks:
        chunks_of.setdefault(row[0], []).append(row)

    def problem(kind: str, what: str) -> None:
        report.problems.append(f"{kind}: {what}")
        if kind == "duplicate":
            report.duplicates += 1
        else:
            report.losses += 1

    for said in sent:
        if stored[said] == 0:
            problem("loss", f"{said} never stored")
        elif stored[said] > 1:
            problem("duplicate", f"{said} stored {stored[said]} times")
    for mid, said in text_of.items():
        turns = runs_of.get(mid, [])
        if mid in refused and not turns:  # stored and refused visibly, by design
            report.refused += 1
            continue
        if len(turns) != 1:
            problem("duplicate" if turns else "loss", f"{said} has {len(turns)} runs")
            continue
        run_id, status = turns[0]
        if status == "aborted":
            report.aborted += 1
            continue
        if status != "ok":
            continue  # an error/timeout notice went out through the gate like any reply
        if run_id not in delivery_of:
            problem("loss", f"{said}: finished turn without a delivery")
            continue
        did, outcome, to = delivery_of[run_id]
        if outcome == "failed":
            report.failed_deliveries += 1
            continue
        rows = sorted(chunks_of.get(did, []), key=lambda row: row[1])
        # the adapter chunks (and renders) the reply its own way: together, the whole reply
        if [w for row in rows for w in row[2].split()] != reply_for(said).split():
            problem(
                "loss",
                f"{said}: delivery {did} chunks differ from the reply: "
                f"{[(row[1], row[2][:40], row[3]) for row in rows]}",
            )
        for _, index, chunk_text, state, message_id in rows:
            times = shown[(str(to).removeprefix("channel:"), " ".join(chunk_text.split()))]
            if state == "pending":
                problem(
                    "loss",
                    f"{said}: chunk {index} still in doubt (delivery {did} "
                    f"{outcome}: {[(x[1], x[3]) for x in rows]})",
                )
            elif state == "resent_after_crash":
                report.resent_after_crash += 1
                if times not in (1, 2):
                    problem(
                        "duplicate" if times > 2 else "loss",
                        f"{said}: resent chunk {index} shown {times} times",
                    )
            elif state == "sent":
                report.chunks_sent += 1
                if times != 1 or not message_id:
                    problem(
                        "duplicate" if times > 1 else "loss",
                        f"{said}: chunk {index} shown {times} times",
                    )
