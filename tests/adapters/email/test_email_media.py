"""Media out by email (D78, D150, D159) against a real IMAP/SMTP server: a tool's file leaves
with the reply as a mail in the same thread with the file attached (its caption the text),
once; a file over 18 MB is a text naming it."""

from __future__ import annotations

from email.message import EmailMessage

from core.api.plugins import MediaItem, ToolArgs, ToolSpec, WithMedia
from core.engine.outbound.delivery import Outbound
from core.model.delivery_context import DeliveryContext
from core.store import DeliveryRecord
from tests.adapters.email.mail import OWNER, bot_mail, deliver, mail_from, start, text_of
from tests.conftest import RuntimeFactory
from tests.fakes.mailserver import MailServer
from tests.fakes.model import FakeModelServer, text, tool_call
from tests.polling import eventually

PDF = MediaItem(data=b"%PDF-1.4 the report", mime="application/pdf", name="report.pdf")
MB = 1024 * 1024


async def replies(mail: MailServer, count: int) -> list[EmailMessage]:
    async def enough() -> list[EmailMessage] | None:
        found = bot_mail(mail)
        return found if len(found) >= count else None

    return await eventually(enough, 60, f"{count} mails from the bot")


async def _report(env: object, ctx: object, args: object) -> WithMedia:
    return WithMedia({"status": "written"}, [PDF])


async def test_a_tools_file_arrives_attached_in_the_thread(
    make_runtime: RuntimeFactory, fake_email: MailServer, fake_model: FakeModelServer
) -> None:
    rt, _ = await start(make_runtime, fake_email, **{"streaming": "off"})
    rt.tools.register(ToolSpec("write_report", "Write the report.", ToolArgs, _report))
    fake_model.script(tool_call("write_report", {}), text("The report is attached."))
    first = mail_from(OWNER, "the report, please", subject="Q3")
    await deliver(fake_email, first)
    reply, attached = await replies(fake_email, 2)
    assert text_of(reply) == "The report is attached."
    assert attached["Subject"] == "Re: Q3" and attached["In-Reply-To"] == first["Message-ID"]
    assert attached.get_content_type() == "multipart/mixed"
    assert text_of(attached) == "📎 report.pdf"
    [part] = list(attached.iter_attachments())
    assert (part.get_content_type(), part.get_filename()) == ("application/pdf", "report.pdf")
    assert part.get_payload(decode=True) == PDF.data

    async def settled() -> DeliveryRecord | None:
        rows = await rt.store.list_deliveries()
        return rows[0] if len(rows) == 1 and rows[0].outcome != "pending" else None

    row = await eventually(settled, 30, "the reply's delivery settled")
    assert row.outcome == "delivered" and row.id is not None
    chunks = (await rt.store.chunks_of([row.id]))[row.id]
    assert chunks[1].platform_message_id == attached["Message-ID"]


async def test_a_caption_is_the_text_and_a_big_file_is_named(
    make_runtime: RuntimeFactory, fake_email: MailServer
) -> None:
    rt, _ = await start(make_runtime, fake_email)
    target = DeliveryContext(channel="email", to=OWNER)
    photo = MediaItem(data=b"\x89PNG...", mime="image/png", name="cat.png", caption="our cat")
    huge = MediaItem(data=bytes(18 * MB + 1), mime="video/mp4", name="film.mp4")
    result = await rt.gate.deliver(Outbound("", "notice", None, target=target, media=[photo, huge]))
    assert result.outcome == "delivered", result.reason
    cat, named = await replies(fake_email, 2)
    assert text_of(cat) == "our cat"
    assert [p.get_filename() for p in cat.iter_attachments()] == ["cat.png"]
    assert text_of(named) == "📎 film.mp4 (18.0 MB) is too big to send here (limit 18.0 MB)."
    assert list(named.iter_attachments()) == []
