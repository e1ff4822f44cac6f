"""Chaos for decision D16: SIGKILL a real gateway process at random moments during a burst of
Telegram, Slack, WhatsApp or Signal messages, restart it, and check the ledger at the end.

Each fake redelivers as its platform does: Telegram the updates whose offset the killed process
had not confirmed, Slack the envelopes it had not acked, Meta the webhooks not answered 200, the
signal-cli daemon its events after the gateway's stored cursor. The fake model answers each
message with its text (every fourth one with a three-chunk reply). After the last kill a clean
gateway runs until everything has settled, then the store and the fake chat are compared:

* **duplicates**: a user message stored twice, a message with two runs, or a reply chunk shown
  twice in the chat without its ledger row saying `resent_after_crash`;
* **losses** (silent): a message never stored, a finished turn whose reply is neither in the chat
  nor `failed` in the delivery log, a chunk with a receipt that is not in the chat, or a chunk
  still `pending` (in doubt, neither reconciled nor marked);
* **aborted**: turns a kill interrupted (visible as `aborted` runs; D12's restart notice tells
  the chat).

Used by `tests/e2e/test_chaos.py` (short) and `bench/bench_chaos.py` (longer, prints figures).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path
from typing import Any

import aiosmtplib
from sqlalchemy import func, select

from core.store import Store
from core.store.ledger_tables import DeliveryChunkRow
from core.store.tables import DeliveryRow, MessageRow, RunRow
from tests.fakes.mailserver import MailServer
from tests.fakes.model import FakeModelServer
from tests.fakes.model_script import Reply, RequestJSON, content_text, text
from tests.fakes.signal import FakeSignal
from tests.fakes.slack import FakeSlack
from tests.fakes.telegram import FakeTelegram
from tests.fakes.whatsapp import FakeWhatsApp
from tests.gateway_process import GatewayProcess, free_port
from tests.polling import eventually

MESSAGES: Any = MessageRow.__table__  # type: ignore[attr-defined]
CHATS = (101, 102, 103)


def reply_for(said: str) -> str:
    """What the fake model answers: long (3 chunks, each line naming the message) for every
    fourth message, else a one-liner."""
    n = int(said[1:]) if said[1:].isdigit() else 0
    if n % 4 == 3:
        return "\n".join(
            f"{said} line {k:03d} " + "lorem ipsum dolor sit amet " * 3 for k in range(110)
        )
    return f"echo: {said}"


def _responder(body: RequestJSON) -> Reply:
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    said = content_text(users[-1].get("content")).strip() if users else ""
    return text(reply_for(said))


@dataclass
class ChaosReport:
    backend: str
    messages: int = 0
    kills: int = 0
    duplicates: int = 0
    losses: int = 0
    aborted: int = 0
    resent_after_crash: int = 0
    failed_deliveries: int = 0
    chunks_sent: int = 0
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)

    def line(self) -> str:
        return (
            f"{self.backend}: messages={self.messages} kills={self.kills} "
            f"duplicates={self.duplicates} losses={self.losses} aborted={self.aborted} "
            f"resent_after_crash={self.resent_after_crash} "
            f"failed_deliveries={self.failed_deliveries} chunks={self.chunks_sent} "
            f"({self.seconds:.1f}s)"
        )


Fake = FakeTelegram | FakeSlack | FakeWhatsApp | FakeSignal | MailServer
BOT_ADDRESS = "bot@example.org"


def _channel_yaml(fake: Fake) -> str:
    if isinstance(fake, FakeTelegram):
        return (
            "channels:\n  telegram:\n    dmPolicy: open\n    streaming: 'off'\n"
            f'    botToken: "{fake.token}"\n    apiBaseUrl: {fake.base_url}\n'
        )
    if isinstance(fake, FakeWhatsApp):
        return (
            "channels:\n  whatsapp:\n    dmPolicy: open\n"
            f'    phoneNumberId: "{fake.phone_number_id}"\n'
            f"    accessToken: {fake.token}\n    appSecret: {fake.app_secret}\n"
            f"    verifyToken: {fake.verify_token}\n    apiBaseUrl: {fake.api_base}\n"
        )
    if isinstance(fake, MailServer):  # plain IMAP/SMTP on loopback; IDLE, polled every 0.5s
        server = f"host: 127.0.0.1, username: {BOT_ADDRESS}, password: {fake.password}, tls: none"
        return (
            f"channels:\n  email:\n    dmPolicy: open\n    from: {BOT_ADDRESS}\n"
            f"    pollSeconds: 0.5\n    imap: {{{server}, port: {fake.imap_port}}}\n"
            f"    smtp: {{{server}, port: {fake.smtp_port}}}\n"
        )
    if isinstance(fake, FakeSignal):
        return (
            "channels:\n  signal:\n    dmPolicy: open\n"
            f'    account: "{fake.account}"\n    httpUrl: {fake.base_url}\n'
        )
    return (
        "channels:\n  slack:\n    dmPolicy: open\n    streaming: 'off'\n"
        f"    botToken: {fake.bot_token}\n    appToken: {fake.app_token}\n"
        f"    apiBaseUrl: {fake.base_url}\n"
    )


def _config(
    path: Path, state: Path, model: FakeModelServer, fake: Fake, db_url: str | None
) -> Path:
    db = f"  database:\n    url: {db_url}\n" if db_url else ""
    path.write_text(
        "gateway:\n"
        f"  stateDir: {state}\n"
        "  auth:\n    token: e2e-token\n  reconcileAfterSeconds: 1\n"
        + db
        + "models:\n  providers:\n    fake:\n"
        f"      baseUrl: {model.base_url}\n      apiKey: test\n"
        "agents:\n  defaults:\n    model: fake/fake-model\n"
        "session:\n  dmScope: per-channel-peer\n" + _channel_yaml(fake),
        encoding="utf-8",
    )
    return path


async def _settled(store: Store, sent: list[str]) -> bool:
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


class _People:
    """The users of one fake platform: send a message, read what the bot posted."""

    def __init__(self, platform: str) -> None:
        self.platform = platform
        fakes: dict[str, type[Fake]] = {
            "telegram": FakeTelegram,
            "slack": FakeSlack,
            "whatsapp": FakeWhatsApp,
            "signal": FakeSignal,
            "email": MailServer,
        }
        self.fake: Fake = fakes[platform]()
        if isinstance(self.fake, FakeSlack):
            self.fake.redeliver_on_connect = True

    def listen_on(self, port: int) -> None:
        """Where the gateway under test listens (for platforms that push to it)."""
        if isinstance(self.fake, FakeWhatsApp):
            self.fake.webhook_url = f"http://127.0.0.1:{port}/whatsapp/webhook"

    async def say(self, chat: int, said: str) -> None:
        if isinstance(self.fake, FakeTelegram):
            self.fake.user_message(chat, said)
        elif isinstance(self.fake, FakeWhatsApp):
            self.fake.user_message(f"4915100000{chat}", said)
        elif isinstance(self.fake, FakeSignal):
            self.fake.user_message(f"+1555000{chat}", said)
        elif isinstance(self.fake, MailServer):  # a new mail; a kill may leave it unseen
            msg = EmailMessage()
            msg["From"], msg["To"] = f"user{chat}@example.org", BOT_ADDRESS
            msg["Message-ID"] = make_msgid(domain="example.org")
            msg.set_content(said)
            await aiosmtplib.send(
                msg, hostname="127.0.0.1", port=self.fake.smtp_port, start_tls=False
            )
        else:
            await self.fake.queue_event(
                self.fake.message_event(f"D0{chat}", said, user=f"U0{chat}")
            )

    def shown(self) -> Counter[tuple[str, str]]:
        """(chat, text with white space folded) of every message the bot posted, with how often:
        renderers may trim what a chunk ends with."""
        if isinstance(self.fake, FakeTelegram):
            return Counter(
                (str(c.params["chat_id"]), " ".join(str(c.params["text"]).split()))
                for c in self.fake.calls_for("sendMessage")
                if c.status == 200
            )
        if isinstance(self.fake, MailServer):
            return Counter(
                (str(m["To"]), " ".join(str(part.get_content()).split()))
                for m in self.fake.sent()
                if BOT_ADDRESS in str(m["From"]) and (part := m.get_body(("plain",)))
            )
        if isinstance(self.fake, FakeWhatsApp | FakeSignal):
            return Counter((str(m["to"]), " ".join(str(m["text"]).split())) for m in self.fake.sent)
        return Counter(
            (str(m["channel"]), " ".join(str(m["text"]).split())) for m in self.fake.posted
        )


async def _state(store: Store) -> dict[str, Any]:
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


async def run_chaos(
    tmp: Path,
    *,
    db_url: str | None = None,
    rounds: int = 3,
    burst: int = 6,
    seed: int = 1,
    kill_within: float = 1.5,
    platform: str = "telegram",
) -> ChaosReport:
    """`rounds` start → burst → SIGKILL cycles, then a clean run until settled; the report."""
    rng = random.Random(seed)
    report = ChaosReport(f"{platform}/{'postgresql' if db_url else 'sqlite'}")
    t0 = time.perf_counter()
    model, people = FakeModelServer(), _People(platform)
    tg = people.fake
    await model.start()
    await tg.start()
    model.set_responder(_responder)
    state = tmp / "state"
    cfg = _config(tmp / "chaos.yaml", state, model, tg, db_url)
    port = free_port()
    people.listen_on(port)
    sent: list[str] = []
    try:
        for _ in range(rounds):
            gw = GatewayProcess(cfg, port)
            await gw.__aenter__()
            for _ in range(burst):
                said = f"m{len(sent):04d}"
                await people.say(rng.choice(CHATS), said)
                sent.append(said)
                await asyncio.sleep(rng.uniform(0, kill_within / burst))  # chaos, not a wait
            await asyncio.sleep(rng.uniform(0, kill_within))  # kill at a random moment
            await gw.kill()
            report.kills += 1
        async with GatewayProcess(cfg, port) as final:
            store = Store(db_url or f"sqlite+aiosqlite:///{state}/crosstalk.db", state)
            try:

                async def settled() -> bool:
                    return await _settled(store, sent)

                try:
                    await eventually(settled, timeout=120)
                except AssertionError:
                    report.problems.append(f"not settled within 120s: {await _state(store)}")
                else:
                    await _analyse(store, people, sent, report)
            finally:
                await store.close()
            if report.problems:
                report.problems += [
                    ln.rstrip()
                    for ln in final.output
                    if "Error" in ln or "WARNING" in ln or "ERROR" in ln
                ]
    finally:
        await tg.stop()
        await model.stop()
    report.messages = len(sent)
    report.seconds = time.perf_counter() - t0
    return report


async def _analyse(store: Store, people: _People, sent: list[str], report: ChaosReport) -> None:
    m, r = MessageRow.__table__, RunRow.__table__  # type: ignore[attr-defined]
    d, ch = DeliveryRow.__table__, DeliveryChunkRow.__table__  # type: ignore[attr-defined]

    def load(c: Any) -> tuple[Any, ...]:
        users = c.execute(select(m.c.id, m.c.content).where(m.c.role == "user")).all()
        runs = c.execute(select(r.c.id, r.c.input_message_id, r.c.status)).all()
        deliveries = c.execute(select(d.c.id, d.c.run_id, d.c.outcome, d.c.to)).all()
        chunks = c.execute(
            select(
                ch.c.delivery_id, ch.c.chunk_index, ch.c.text, ch.c.state, ch.c.platform_message_id
            )
        ).all()
        return users, runs, deliveries, chunks

    users, runs, deliveries, chunks = await store.read(load)
    text_of = {mid: content[0].get("text") for mid, content in users}
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
