"""The exactly-once ledger (D16) on real SQLite and real PostgreSQL: identities are claimed with
the message and its run in one transaction, a second claim is refused on any connection (two
stores on one database are two gateway processes), and old identities are pruned."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from core.model.media import MediaItem
from core.store import DeliveryRecord, RunRecord, Store, TranscriptMessage, now_ms
from core.store.inbound import Claim, DuplicateInbound

CLAIMS = (Claim("telegram", "default", "update:7"), Claim("telegram", "default", "msg:42:3"))


def _run(key: str) -> RunRecord:
    return RunRecord(
        id=str(uuid.uuid4()),
        session_key=key,
        status="queued",
        lane="main",
        deliver=True,
        created_at=now_ms(),
    )


async def _users(store: Store, session_id: str) -> list[str]:
    return [m.plain_text() for m in await store.history(session_id) if m.role == "user"]


async def test_claim_is_stored_with_the_message_and_refused_again(store: Store) -> None:
    entry = await store.ensure_session("agent:main:main", agent_id="main", kind="main")
    msg = TranscriptMessage.text("user", "hi", now_ms())
    await store.enqueue_claimed(entry, msg, _run(entry.key), CLAIMS)
    assert await store.is_known(CLAIMS[1:])  # either identity is enough
    with pytest.raises(DuplicateInbound):
        await store.enqueue_claimed(
            entry, TranscriptMessage.text("user", "hi", now_ms()), _run(entry.key), CLAIMS
        )
    with pytest.raises(DuplicateInbound):
        await store.append_claimed(
            entry, TranscriptMessage.text("user", "hi", now_ms()), CLAIMS[:1]
        )
    with pytest.raises(DuplicateInbound):
        await store.claim_only(CLAIMS[1:])
    assert await _users(store, entry.session_id) == ["hi"]
    assert (await store.last_run(entry.key)) is not None
    # another account or channel with the same platform ids is another message
    other = Claim("telegram", "second-bot", "update:7")
    await store.claim_only((other,))


async def test_two_processes_racing_store_one_message(store: Store, tmp_path: object) -> None:
    """Two stores (own connections/pools) on the same database, claiming at the same time."""
    other = Store(store.url, store.state_dir)
    await other.open()
    try:
        entry = await store.ensure_session("agent:main:main", agent_id="main", kind="main")
        claims = (Claim("slack", "default", "event:Ev1"),)

        async def take(s: Store) -> bool:
            try:
                await s.enqueue_claimed(
                    entry, TranscriptMessage.text("user", "x", now_ms()), _run(entry.key), claims
                )
            except DuplicateInbound:
                return False
            return True

        results = await asyncio.gather(*(take(s) for s in (store, other, store, other)))
        assert sorted(results) == [False, False, False, True]
        assert await _users(store, entry.session_id) == ["x"]
    finally:
        await other.close()


async def test_claims_older_than_the_window_are_pruned(store: Store) -> None:
    await store.claim_only((Claim("discord", "default", "msg:1"),))
    assert await store.prune_claims(now_ms() - 60_000) == 0
    assert await store.prune_claims(now_ms() + 1) == 1
    assert not await store.is_known((Claim("discord", "default", "msg:1"),))
    await store.claim_only((Claim("discord", "default", "msg:1"),))  # accepted again


async def test_a_chunk_reported_failed_later_fails_its_delivery(store: Store) -> None:
    """D166: found by channel account and platform message id, never another channel's."""
    ids = []
    for account in ("default", None):
        rec = DeliveryRecord(
            kind="reply",
            outcome="pending",
            text="a\nb",
            created_at=now_ms(),
            channel="whatsapp",
            to="4915100000001",
            account_id=account,
        )
        did = await store.open_delivery(rec, ["a", "b"])
        await store.mark_chunk(did, 0, "sent", message_id=f"wamid.{did}.0")
        await store.mark_chunk(did, 1, "sent", message_id=f"wamid.{did}.1")
        await store.finish_delivery(did, "delivered", None, 1)
        ids.append(did)
    first, second = ids
    assert await store.fail_sent_chunk("signal", "default", f"wamid.{first}.1", "x") is None
    assert await store.fail_sent_chunk("whatsapp", "work", f"wamid.{first}.1", "x") is None
    assert (
        await store.fail_sent_chunk("whatsapp", "default", f"wamid.{first}.1", "too late") == first
    )
    # a delivery whose target named no account went to the default account
    assert await store.fail_sent_chunk("whatsapp", "default", f"wamid.{second}.0", "gone") == second
    chunks = await store.chunks_of(ids)
    assert [(c.state, c.reason) for c in chunks[first]] == [("sent", None), ("failed", "too late")]
    assert [c.state for c in chunks[second]] == ["failed", "sent"]
    rows = {d.id: d for d in await store.list_deliveries(outcome="failed")}
    assert rows[first].reason == "too late" and rows[second].reason == "gone"


async def test_kept_for_a_chat_newest_of_each_kind_with_job_or_hook(store: Store) -> None:
    """D136: the cron and webhook replies one chat was sent, oldest first, the newest `limit`,
    each naming its job (the run's `meta.cronJob`) or hook (`meta.hook`); `since` (the session's
    reset) leaves earlier ones out."""
    ids = []
    for i, (kind, meta, channel, outcome) in enumerate(
        [
            ("cron", {"cronJob": "morning"}, "webchat", "delivered"),
            ("reply", None, "webchat", "delivered"),  # in the transcript already: not kept
            ("hook", {"hook": "ci"}, "webchat", "delivered"),
            ("cron", {"cronJob": "night"}, "telegram", "delivered"),  # another chat
            ("cron", {"cronJob": "muted"}, "webchat", "suppressed_by_policy"),
            ("cron", {"cronJob": "evening"}, "webchat", "delivered"),
        ]
    ):
        run = _run(f"agent:main:{kind}:{i}")
        run.meta = meta
        await store.create_run(run)
        ids.append(
            await store.record_delivery(
                DeliveryRecord(
                    kind=kind,
                    outcome=outcome,
                    text=f"text {i}",
                    created_at=1_000 + i,
                    session_key=run.session_key,
                    channel=channel,
                    to="owner",
                    run_id=run.id,
                )
            )
        )
    kept = await store.kept_for("webchat", "owner", ("cron", "hook"))
    assert [(k.record.text, k.origin.label(), k.media) for k in kept] == [
        ("text 0", "⏰ cron job morning", ()),
        ("text 2", "🪝 webhook ci", ()),
        ("text 5", "⏰ cron job evening", ()),
    ]
    newest = await store.kept_for("webchat", "owner", ("cron", "hook"), limit=2)
    assert [k.record.text for k in newest] == ["text 2", "text 5"]
    since_reset = await store.kept_for("webchat", "owner", ("cron", "hook"), since=1_002)
    assert [k.record.text for k in since_reset] == ["text 2", "text 5"]
    assert await store.kept_for("webchat", "owner", ("cron", "hook"), since=1_006) == []
    origin = await store.delivery_origin(ids[2])
    assert origin is not None and (origin.kind, origin.source) == ("hook", "ci")
    assert await store.delivery_origin(10**9) is None


async def test_a_kept_delivery_counts_from_its_opening_until_it_fails(store: Store) -> None:
    """D190: a web chat page's history shows a cron reply from the moment its row is opened
    (before its first send), so a page opening meanwhile never misses it; a failed one is not
    shown."""
    run = _run("agent:main:cron:morning")
    run.meta = {"cronJob": "morning"}
    await store.create_run(run)
    rec = DeliveryRecord(
        kind="cron",
        outcome="pending",
        text="good morning",
        created_at=now_ms(),
        session_key=run.session_key,
        channel="webchat",
        to="owner",
        run_id=run.id,
    )
    delivery = await store.open_delivery(rec, ["good morning"])
    kept = await store.kept_for("webchat", "owner", ("cron",))
    assert [(k.record.id, k.record.text, k.origin.label()) for k in kept] == [
        (delivery, "good morning", "⏰ cron job morning")
    ]
    origin = await store.delivery_origin(delivery)
    assert origin is not None and origin.run_id == run.id  # a notice names its turn so
    await store.finish_delivery(delivery, "failed", "gone", 1)
    assert await store.kept_for("webchat", "owner", ("cron",)) == []


async def test_a_kept_delivery_names_the_items_its_media_chunks_send(store: Store) -> None:
    """D192: each kept delivery comes with the items its media chunks send (no bytes), in chunk
    order, read for all of them at once; a text-only one with none."""
    run = _run("agent:main:cron:morning")
    run.meta = {"cronJob": "morning"}
    await store.create_run(run)
    png = MediaItem(data=b"\x89PNG" + bytes(60), mime="image/png", name="chart.png")
    note = MediaItem(data=b"OggS" + bytes(10), mime="audio/ogg", name="note.ogg", voice=True)
    chart, voice = await store.save_media([png, note], run_id=run.id, session_key=run.session_key)

    async def opened(text: str, chunks: list[str], media_ids: list[str | None]) -> int:
        rec = DeliveryRecord(
            kind="cron",
            outcome="pending",
            text=text,
            created_at=now_ms(),
            session_key=run.session_key,
            channel="webchat",
            to="owner",
            run_id=run.id,
        )
        return await store.open_delivery(rec, chunks, media_ids)

    plain = await opened("no files", ["no files"], [])
    both = await opened(
        "two files\n" + chart.placeholder() + "\n" + voice.placeholder(),
        ["two files", chart.placeholder(), voice.placeholder()],
        [None, chart.id, voice.id],
    )
    kept = await store.kept_for("webchat", "owner", ("cron",))
    assert [k.record.id for k in kept] == [plain, both]
    assert kept[0].media == ()
    assert [(m.id, m.kind, m.name, m.mime, m.size, m.placeholder) for m in kept[1].media] == [
        (chart.id, "image", "chart.png", "image/png", 64, chart.placeholder()),
        (voice.id, "voice", "note.ogg", "audio/ogg", 14, voice.placeholder()),
    ]
