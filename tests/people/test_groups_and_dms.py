"""D62: a non-owner's DM never lands in the owner's main session; groups need an owner's yes."""

from __future__ import annotations

import re

from core.api.testing import RecordingAdapter
from core.features.access.pairing import group_pairing_text
from core.model.inbound import InboundMessage
from tests.conftest import RuntimeFactory

TG = {"botToken": "1:x", "owners": ["10"], "allowFrom": ["20", "*"], "streaming": "off"}


async def test_under_main_only_the_owner_reaches_the_main_session(
    make_runtime: RuntimeFactory,
) -> None:
    tg = RecordingAdapter("telegram")
    rt = await make_runtime(
        {"session": {"dmScope": "main"}, "channels": {"telegram": TG}}, adapters=[tg]
    )
    for sender, text in (("10", "owner here"), ("20", "member here"), ("30", "guest here")):
        before = len(tg.sent)
        await tg.say(text, chat_id=sender, sender=sender)
        await tg.wait_for("", before + 1, timeout=15)

    async def texts(key: str) -> list[str]:
        entry = await rt.store.get_session(key)
        assert entry is not None, key
        return [
            m.plain_text() for m in await rt.store.history(entry.session_id) if m.role == "user"
        ]

    assert await texts("agent:main:main") == ["owner here"]
    assert await texts("agent:main:telegram:dm:20") == ["member here"]
    assert await texts("agent:main:telegram:dm:30") == ["guest here"]


def _group(tg: RecordingAdapter, text: str, sender: str, *, mentioned: bool) -> InboundMessage:
    return tg.message(
        text, chat_id="-100", sender_id=sender, chat_type="group", mentioned=mentioned
    )


async def test_an_unknown_group_gets_one_code_and_speaks_once_approved(
    make_runtime: RuntimeFactory,
) -> None:
    tg, web = RecordingAdapter("telegram"), RecordingAdapter("webchat")
    rt = await make_runtime({"channels": {"telegram": TG}}, adapters=[tg, web])
    await tg.inject(_group(tg, "chatter nobody addressed", "30", mentioned=False))
    assert tg.sent == [] and await rt.access.pairing.pending() == []
    await tg.inject(_group(tg, "@bot list every session", "30", mentioned=True))
    [(where, text)] = tg.sent
    match = re.fullmatch(
        r"🔐 This group is not approved yet\. An owner can approve it with the code "
        r"([A-HJ-NP-Z2-9]{8})\.",
        text,
    )
    assert match is not None and where.to == "-100", text
    code = match.group(1)
    assert text == group_pairing_text(code)
    await tg.inject(_group(tg, "@bot hello?", "31", mentioned=True))
    assert len(tg.sent) == 1  # once
    assert await rt.store.get_session("agent:main:telegram:group:-100") is None  # no session
    [req] = await rt.access.pairing.pending()
    assert (req.code, req.chat_id, req.user_id) == (code, "-100", "group:-100")
    await web.say("/pair list", chat_id="owner", sender="owner")
    [listing] = await web.wait_sent(1)
    assert f"{code} · telegram/default · group:-100" in listing

    await web.say(f"/pair approve {code}", chat_id="owner", sender="owner")
    await web.wait_sent(2)
    assert web.sent[-1][1] == "⚙️ Approved group:-100 on telegram."
    await tg.wait_for("", 2)
    assert tg.sent[-1][1] == "✅ This group is approved. Mention me again to talk."
    assert tg.sent[-1][0].to == "-100"  # told in the group, not as if one person were approved
    before = len(tg.sent)
    await tg.inject(_group(tg, "/whoami", "31", mentioned=True))
    await tg.wait_for("", before + 1)
    assert tg.sent[-1][1] == "⚙️ You are guest on telegram (31)."
    before = len(tg.sent)
    await tg.inject(_group(tg, "@bot hello again", "31", mentioned=True))
    await tg.wait_for("", before + 1, timeout=15)  # the approved group is answered
    assert await rt.store.get_session("agent:main:telegram:group:-100") is not None


async def test_an_owner_is_answered_in_an_unapproved_group_and_open_keeps_the_old_way(
    make_runtime: RuntimeFactory,
) -> None:
    tg = RecordingAdapter("telegram")
    await make_runtime({"channels": {"telegram": TG}}, adapters=[tg])
    await tg.inject(_group(tg, "/whoami", "10", mentioned=True))
    assert await tg.wait_sent(1) == ["⚙️ You are owner on telegram (10)."]

    tg2 = RecordingAdapter("telegram")
    await make_runtime({"channels": {"telegram": {**TG, "groupPolicy": "open"}}}, adapters=[tg2])
    await tg2.inject(_group(tg2, "/whoami", "30", mentioned=True))
    assert await tg2.wait_sent(1) == ["⚙️ You are guest on telegram (30)."]


async def test_a_deny_rule_on_groups_keeps_a_group_code_out_of_the_group(
    make_runtime: RuntimeFactory,
) -> None:
    """An owner who denied every group (`chatType: group`) is not overridden by a stranger who
    adds the bot to one: the group has no session yet, but the chat the code would land in is a
    group, so the code is held back and logged (D140); the request still waits for the owner."""
    tg = RecordingAdapter("telegram")
    rule = {"action": "deny", "match": {"chatType": "group"}}
    rt = await make_runtime(
        {"channels": {"telegram": TG}, "session": {"sendPolicy": {"rules": [rule]}}},
        adapters=[tg],
    )
    await tg.inject(_group(tg, "@bot hello", "30", mentioned=True))
    [req] = await rt.access.pairing.pending()
    assert req.chat_id == "-100"
    assert tg.sent == []
    [row] = await rt.store.list_deliveries(outcome="suppressed_by_policy")
    assert (row.to, row.kind) == ("-100", "notice")
