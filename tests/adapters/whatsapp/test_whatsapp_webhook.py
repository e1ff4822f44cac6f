"""The WhatsApp webhook (D77, D162) against FakeWhatsApp: the verify challenge and signatures on
the real gateway app, a webhook before start answered 503 for Meta's retry, statuses, reactions
and other numbers starting nothing, two numbers sharing the route."""

from __future__ import annotations

import json

from adapters.whatsapp.adapter import WhatsAppAdapter
from core.model.records import SessionQuery
from tests.adapters.inbox import Inbox
from tests.adapters.whatsapp.helpers import ANN, account, gateway, serve, started_runtime
from tests.conftest import RuntimeFactory
from tests.fakes.model import FakeModelServer
from tests.fakes.whatsapp import FakeWhatsApp

# -- the webhook ---------------------------------------------------------------------------


async def test_verify_challenge(fake_whatsapp: FakeWhatsApp) -> None:
    adapter = WhatsAppAdapter(account(fake_whatsapp))
    server = await serve(fake_whatsapp, adapter)
    try:
        client = server.make_url("/whatsapp/webhook")
        import aiohttp

        async with aiohttp.ClientSession() as http:
            ok = {
                "hub.mode": "subscribe",
                "hub.verify_token": fake_whatsapp.verify_token,
                "hub.challenge": "1158201444",
            }
            async with http.get(client, params=ok) as resp:
                assert (resp.status, await resp.text()) == (200, "1158201444")
            for bad in (
                {**ok, "hub.verify_token": "guess"},
                {**ok, "hub.mode": "unsubscribe"},
                {"hub.challenge": "x"},
            ):
                async with http.get(client, params=bad) as resp:
                    assert resp.status == 403
                    body = await resp.json()
                    assert "verification failed" in body["error"]["message"]
    finally:
        await server.close()


async def test_bad_or_missing_signature_is_401_and_nothing_is_stored(
    fake_whatsapp: FakeWhatsApp, make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt, adapter = await started_runtime(make_runtime, fake_whatsapp)
    server = await gateway(rt, fake_whatsapp, adapter)
    try:
        payload = fake_whatsapp.user_message(ANN, "let me in", deliver=False)
        raw = json.dumps(payload).encode()
        assert (await fake_whatsapp.post_webhook(payload, signature=""))[0] == 401
        assert (await fake_whatsapp.post_webhook(payload, app_secret="not-the-secret"))[0] == 401
        tampered = raw.replace(b"let me in", b"evil twin")
        status, body = await fake_whatsapp.post_webhook(
            tampered, signature=fake_whatsapp_sig(fake_whatsapp, raw)
        )
        assert status == 401 and "X-Hub-Signature-256" in json.loads(body)["error"]["message"]
        assert await rt.store.list_sessions(SessionQuery(include_reserved=True)) == []
        assert fake_model.requests == []
        status, _ = await fake_whatsapp.post_webhook(payload)  # the real one
        assert status == 200
        await fake_whatsapp.wait_until(lambda: len(fake_whatsapp.sent) == 1)
        assert fake_whatsapp.sent[0]["text"] == "echo: let me in"
        status, _ = await fake_whatsapp.post_webhook(b"{not json")
        assert status == 400
    finally:
        await adapter.stop()
        await server.close()


def fake_whatsapp_sig(fake: FakeWhatsApp, raw: bytes) -> str:
    from tests.fakes.whatsapp import sign

    return sign(raw, fake.app_secret)


async def test_webhook_before_start_is_retried_by_meta(fake_whatsapp: FakeWhatsApp) -> None:
    adapter = WhatsAppAdapter(account(fake_whatsapp))
    server = await serve(fake_whatsapp, adapter)
    inbox = Inbox()
    try:
        fake_whatsapp.user_message(ANN, "early")
        await fake_whatsapp.wait_for("webhook", 1)
        assert fake_whatsapp.posts[0][0] == 503 and fake_whatsapp.outbox  # kept for a retry
        await adapter.start(inbox)
        await fake_whatsapp.wait_delivered()
        [msg] = inbox.messages
        assert (msg.text, msg.chat_id, msg.sender_name) == ("early", ANN, "Ann")
        assert msg.identities[0].startswith("msg:wamid.")
    finally:
        await adapter.stop()
        await server.close()


async def test_statuses_reactions_and_other_numbers_start_nothing(
    fake_whatsapp: FakeWhatsApp,
) -> None:
    adapter = WhatsAppAdapter(account(fake_whatsapp))
    server = await serve(fake_whatsapp, adapter)
    inbox = Inbox()
    await adapter.start(inbox)
    try:
        fake_whatsapp.deliver(
            fake_whatsapp.payload(statuses=[fake_whatsapp.status("wamid.OUT1", ANN, "delivered")])
        )
        fake_whatsapp.deliver(
            fake_whatsapp.payload(
                messages=[
                    fake_whatsapp.message(
                        ANN, kind="reaction", media={"message_id": "wamid.OUT1", "emoji": "👍"}
                    )
                ]
            )
        )
        fake_whatsapp.deliver(
            fake_whatsapp.payload(
                messages=[fake_whatsapp.message(ANN, "not ours")], phone_number_id="999"
            )
        )
        fake_whatsapp.user_message(ANN, "barrier")
        await fake_whatsapp.wait_delivered()
        assert [m.text for m in inbox.messages] == ["barrier"]
        assert all(status == 200 for status, _ in fake_whatsapp.posts)
    finally:
        await adapter.stop()
        await server.close()


async def test_two_numbers_share_the_route(fake_whatsapp: FakeWhatsApp) -> None:
    first = WhatsAppAdapter(account(fake_whatsapp))
    other_cfg = account(fake_whatsapp, phoneNumberId="222000333")
    second = WhatsAppAdapter(other_cfg, "work")
    fake_whatsapp.phone_numbers.add("222000333")
    server = await serve(fake_whatsapp, first, second)
    a, b = Inbox(), Inbox()
    await first.start(a)
    await second.start(b)
    try:
        fake_whatsapp.deliver(
            fake_whatsapp.payload(
                messages=[fake_whatsapp.message(ANN, "to work")], phone_number_id="222000333"
            )
        )
        fake_whatsapp.user_message(ANN, "to default")
        await fake_whatsapp.wait_delivered()
        assert [m.text for m in a.messages] == ["to default"]
        assert [(m.text, m.account_id) for m in b.messages] == [("to work", "work")]
    finally:
        await first.stop()
        await second.stop()
        await server.close()
