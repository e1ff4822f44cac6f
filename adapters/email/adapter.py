"""Email channel adapter: IMAP in, SMTP out (aioimaplib, aiosmtplib; D77, D171).

The IMAP connection is the connection the supervisor keeps up (D35; with a lease one process
of a cluster reads the mailbox, D36): it waits with IDLE where the server offers it, else
polls every ``pollSeconds``. Each mail is a direct message from its sender; its thread is its
own session (the ``dm_threads`` capability: D62's sender session + ``:thread:<id>``). Senders
are judged by D11 like everywhere, with ``dmPolicy: allowlist`` as this channel's default.
Replies go out by SMTP, one mail per reply (long replies are split), threaded under the
message they answer.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from pathlib import Path

import aioimaplib

from adapters.email.imap import Inbox, LoginRefused, connect
from adapters.email.parse import Mail, parse, thread_key
from adapters.email.smtp import compose, message_id, reply_subject, send
from adapters.email.spec import EmailConfig
from adapters.email.threads import Thread, ThreadIndex
from adapters.supervised import SupervisedAdapter
from core.api.channels import (
    AdapterStatus,
    Attachment,
    ChannelEnv,
    ChannelUnavailable,
    ChunkRef,
    DeliveryContext,
    InboundMessage,
    InboundSink,
    MediaItem,
    SendReceipt,
    kind_of_mime,
)
from core.api.rendering import split_markdown

log = logging.getLogger(__name__)

CHANNEL = "email"
TEXT_LIMIT = 20_000
MAIL_LIMIT = 18 * 1024 * 1024
"""The largest file attached (D150, D159): base64 makes it 24 MB, within the 25 MB that common
mail providers accept for a whole message."""
IDLE_SECONDS = 300.0  # re-issue IDLE well within servers' 30-minute limit (RFC 2177)
_KEEP_RAW = 64


class EmailAdapter(SupervisedAdapter):
    """One mailbox (``channels.email``)."""

    channel = CHANNEL
    text_limit = TEXT_LIMIT
    reconcile = "resend"  # SMTP cannot be asked; the same Message-ID goes out again
    media_limit = MAIL_LIMIT
    chunk_refs = True

    def __init__(
        self,
        config: EmailConfig,
        account_id: str = "default",
        env: ChannelEnv | None = None,
        *,
        idle_seconds: float = IDLE_SECONDS,
        retry_initial: float = 1.0,
        retry_max: float = 60.0,
    ) -> None:
        self.config = config
        self.account_id = account_id
        self.idle_seconds = idle_seconds
        self.retry_initial = retry_initial
        self.retry_max = retry_max
        state_dir: Path | None = env.state_dir if env is not None else None
        self.threads = ThreadIndex(state_dir, account_id)
        self._sink: InboundSink | None = None
        self._inbox: Inbox | None = None
        self._task: asyncio.Task[None] | None = None
        self._raw: OrderedDict[str, bytes] = OrderedDict()  # recent mail, for attachments
        self._checked = False

    # ---- lifecycle ----------------------------------------------------------------------------

    async def stop(self) -> None:
        await self._unsupervise()
        await self.close()

    def status(self) -> AdapterStatus:
        extra: dict[str, str | int] = {"address": self.config.from_address}
        if self._sup is not None and self._inbox is not None:
            extra["mode"] = "idle" if self.config.idle and self._inbox.can_idle else "poll"
        return self._status(extra)

    async def restart_connection(self, reason: str) -> None:
        if self._sup is not None:
            await self._sup.restart(reason)

    # The Connection the supervisor drives.

    async def prepare(self) -> None:
        """Nothing to hold open for sending (each reply is one SMTP session)."""
        return None

    async def open(self) -> None:
        client = await connect(self.config.imap)
        inbox = Inbox(client, self.config.mailbox)
        try:
            await inbox.select()
            self._inbox = inbox
            await inbox.drain(self._handle)  # what came while we were away
        except BaseException:
            self._inbox = None
            await inbox.logout()
            raise
        self.last_receive_ms = int(time.time() * 1000)
        self._task = asyncio.create_task(self._run(inbox), name=f"email-{self.account_id}")

    async def _run(self, inbox: Inbox) -> None:
        while True:
            await inbox.wait_for_mail(self.config.idle, self.config.poll_seconds, self.idle_seconds)
            self.last_receive_ms = int(time.time() * 1000)
            await inbox.drain(self._handle)

    async def wait_closed(self) -> None:
        task = self._task
        if task is None:
            await asyncio.Event().wait()
            return
        await asyncio.shield(task)  # the reader is ended by close(), with a bound

    async def close(self) -> None:
        """Hang up first, then end the reader: aioimaplib's IDLE helpers can leave a
        cancelled wait pending forever, so the wait for the reader is bounded."""
        task, self._task = self._task, None
        inbox, self._inbox = self._inbox, None
        if inbox is not None:
            await inbox.logout()
        if task is not None:
            task.cancel()
            done, _ = await asyncio.wait({task}, timeout=5)
            if not done:
                log.warning("%s: the IMAP reader did not end; left behind", self.name)

    def fatal_reason(self, exc: BaseException) -> str | None:
        return str(exc) if isinstance(exc, LoginRefused) else None

    # ---- inbound ------------------------------------------------------------------------------

    async def _handle(self, uid: int, raw: bytes) -> None:
        mail = parse(raw)
        msg = self._normalize(mail, uid)
        if msg is None or self._sink is None:
            return
        root = mail.root
        if root is not None:
            self.threads.note(
                root, Thread(subject=mail.subject, last=mail.message_id, references=mail.chain)
            )
        if mail.message_id:
            self._raw[mail.message_id] = raw
            while len(self._raw) > _KEEP_RAW:
                self._raw.popitem(last=False)
        await self._sink(msg)

    def _normalize(self, mail: Mail, uid: int) -> InboundMessage | None:
        own = self.config.from_address.lower()
        if not mail.sender or mail.sender == own or own.endswith(f"<{mail.sender}>"):
            return None  # our own mail (a copy in the inbox, a bounce to ourselves)
        if mail.automatic:
            log.info(
                "%s: ignored automatic mail from %s (%s)", self.name, mail.sender, mail.message_id
            )
            return None
        if not mail.text and not mail.attachments:
            return None
        root = mail.root
        identity = mail.message_id or f"uid:{uid}"
        attachments = tuple(
            Attachment(
                kind=kind_of_mime(p.mime),
                name=p.name,
                mime=p.mime,
                size=len(p.data),
                file_id=f"{mail.message_id}#{i}" if mail.message_id else None,
            )
            for i, p in enumerate(mail.attachments)
        )
        return InboundMessage(
            channel=CHANNEL,
            account_id=self.account_id,
            chat_type="direct",
            chat_id=mail.sender,
            thread_id=thread_key(root) if root else None,
            sender_id=mail.sender,
            sender_name=mail.sender_name,
            text=mail.text,
            attachments=attachments,
            message_id=mail.message_id,
            timestamp_ms=mail.timestamp_ms,
            reply_to=DeliveryContext(
                channel=CHANNEL, to=mail.sender, account_id=self.account_id, thread_id=root
            ),
            identities=(f"message-id:{identity}",),
        )

    async def fetch_attachment(self, attachment: Attachment) -> bytes | None:
        """From the copy kept when it arrived, else fetched again from the mailbox."""
        if not attachment.file_id or "#" not in attachment.file_id:
            return None
        mid, _, index = attachment.file_id.rpartition("#")
        raw = self._raw.get(mid) or await self._refetch(mid)
        if raw is None:
            return None
        parts = parse(raw).attachments
        return parts[int(index)].data if index.isdigit() and int(index) < len(parts) else None

    async def _refetch(self, mid: str) -> bytes | None:
        client: aioimaplib.IMAP4 = await connect(self.config.imap)
        inbox = Inbox(client, self.config.mailbox)
        try:
            await inbox.select()
            resp = await client.uid_search("HEADER", "Message-ID", mid)
            words = b" ".join(x for x in resp.lines[:-1] if isinstance(x, bytes)).split()
            uids = [int(w) for w in words if w.isdigit()]
            return await inbox.fetch(uids[-1]) if uids else None
        finally:
            await inbox.logout()

    # ---- outbound -----------------------------------------------------------------------------

    def chat_of(self, to: str) -> str:
        """`email:Ann@Example.org` → `ann@example.org`, as a mail's sender is kept (D179)."""
        return to.strip().removeprefix("email:").strip().lower()

    def chunks(self, text: str) -> list[str]:
        return split_markdown(text, TEXT_LIMIT)

    async def send_text(
        self, target: DeliveryContext, text: str, ref: ChunkRef | None = None
    ) -> SendReceipt:
        return await self._mail(target, text, ref, None)

    async def send_media(
        self, target: DeliveryContext, media: MediaItem, ref: ChunkRef
    ) -> SendReceipt:
        """A mail in the thread with the file attached, its caption (or its name) as the text
        (D159); in doubt after a crash it goes once more with the same Message-ID."""
        return await self._mail(target, media.caption or f"📎 {media.name}", ref, media)

    async def _mail(
        self,
        target: DeliveryContext,
        text: str,
        ref: ChunkRef | None,
        media: MediaItem | None,
    ) -> SendReceipt:
        to = str(target.to or "").removeprefix("email:")
        where = f"{self.name} to {to}"
        if self._sup is None or self.status().state in ("stopped", "failed"):
            raise ChannelUnavailable(f"{where}: not connected ({self.status().state})")
        root = str(target.thread_id) if target.thread_id not in (None, "") else None
        thread = self.threads.get(root) if root else None
        if root and thread is None:  # a reply routed by another process: thread by the root
            thread = Thread(subject="", last=root, references=(root,))
        mid = message_id(ref, self.config.from_address, to, text if media is None else media.name)
        msg = compose(
            sender=self.config.from_address,
            to=to,
            subject=reply_subject(thread.subject if thread else ""),
            text=text,
            msg_id=mid,
            in_reply_to=thread.last if thread else None,
            references=thread.references if thread else (),
            attachment=media,
        )
        await send(self.config.smtp, msg, where)
        return SendReceipt(message_id=mid)
