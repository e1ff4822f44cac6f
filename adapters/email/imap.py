"""IMAP for the email channel: connecting (TLS modes) and reading new mail (D171).

aioimaplib speaks IMAP over asyncio but has no STARTTLS, so :func:`connect` upgrades the
connection itself with ``loop.start_tls`` after the server's go-ahead, then asks for the
capabilities again (the ones before TLS do not count, RFC 3501 §6.2.1).

New mail is what is not ``\\Seen``: fetched with ``BODY.PEEK`` (which leaves the flag), handed
to the router, and only then flagged ``\\Seen``. A crash in between leaves it unseen, so it
comes again after a restart and the router drops it by its ``Message-ID`` (D16): the flag is
the confirmation, kept on the server, so it holds for every process of a cluster.
"""

from __future__ import annotations

import asyncio
import re
import ssl
from collections.abc import Awaitable, Callable

import aioimaplib

from adapters.email.spec import MailServerConfig
from core.api.channels import secret_value

TIMEOUT = 30.0
_UID = re.compile(rb"UID (\d+)")


class LoginRefused(Exception):
    """The server refused the credentials (or TLS could not be set up): retrying won't help."""


def tls_context(config: MailServerConfig) -> ssl.SSLContext:
    return (
        ssl.create_default_context(cafile=config.ca_file)
        if config.ca_file
        else ssl.create_default_context()
    )


async def connect(config: MailServerConfig, timeout: float = TIMEOUT) -> aioimaplib.IMAP4:
    """A logged-in IMAP client (``tls``: IMAPS, ``starttls``: upgraded, ``none``: plain);
    a server that does not answer within `timeout` is a connection error, retried."""
    async with asyncio.timeout(timeout):
        return await _connect(config, timeout)


async def _connect(config: MailServerConfig, timeout: float) -> aioimaplib.IMAP4:
    port = config.port_for("imap")
    if config.tls == "tls":
        client: aioimaplib.IMAP4 = aioimaplib.IMAP4_SSL(
            host=config.host, port=port, timeout=timeout, ssl_context=tls_context(config)
        )
    else:
        client = aioimaplib.IMAP4(host=config.host, port=port, timeout=timeout)
    await client.wait_hello_from_server()
    if config.tls == "starttls":
        await _starttls(client, config)
    resp = await client.login(config.username, secret_value(config.password) or "")
    if resp.result != "OK":
        await _drop(client)
        raise LoginRefused(f"IMAP login refused: {_text(resp.lines)}")
    return client


async def _starttls(client: aioimaplib.IMAP4, config: MailServerConfig) -> None:
    proto = client.protocol
    if "STARTTLS" not in proto.capabilities:
        await _drop(client)
        raise LoginRefused("the IMAP server offers no STARTTLS (tls: starttls)")
    loop = asyncio.get_running_loop()
    resp = await proto.execute(aioimaplib.Command("STARTTLS", proto.new_tag(), loop=loop))
    if resp.result != "OK":
        await _drop(client)
        raise LoginRefused(f"STARTTLS refused: {_text(resp.lines)}")
    proto.transport = await loop.start_tls(
        proto.transport, proto, tls_context(config), server_hostname=config.host
    )
    await proto.capability()


async def _drop(client: aioimaplib.IMAP4) -> None:
    transport = getattr(client.protocol, "transport", None)
    if transport is not None:
        transport.close()


def _text(lines: list[object]) -> str:
    return " ".join(
        x.decode(errors="replace") if isinstance(x, bytes | bytearray) else str(x) for x in lines
    )


class ImapError(ConnectionError):
    """A command the server did not answer with OK (the connection is not to be trusted)."""


def _ok(resp: aioimaplib.Response, what: str) -> aioimaplib.Response:
    if resp.result != "OK":
        raise ImapError(f"IMAP {what} failed: {_text(resp.lines)}")
    return resp


Handler = Callable[[int, bytes], Awaitable[None]]
"""(uid, raw message) → handled; raises when the message could not be stored."""


class Inbox:
    """One selected mailbox: new mail in, confirmed with ``\\Seen``."""

    def __init__(self, client: aioimaplib.IMAP4, mailbox: str) -> None:
        self.client = client
        self.mailbox = mailbox
        self.uidvalidity = ""
        self.idling = False

    async def select(self) -> None:
        resp = _ok(await self.client.select(self.mailbox), f"SELECT {self.mailbox}")
        for line in resp.lines:
            m = re.search(rb"UIDVALIDITY (\d+)", line if isinstance(line, bytes) else b"")
            if m:
                self.uidvalidity = m.group(1).decode()

    @property
    def can_idle(self) -> bool:
        return bool(self.client.has_capability("IDLE"))

    async def unseen(self) -> list[int]:
        resp = _ok(await self.client.uid_search("UNSEEN"), "SEARCH UNSEEN")
        words = b" ".join(x for x in resp.lines[:-1] if isinstance(x, bytes)).split()
        return sorted(int(w) for w in words if w.isdigit())

    async def fetch(self, uid: int) -> bytes | None:
        resp = _ok(await self.client.uid("fetch", str(uid), "(BODY.PEEK[])"), "FETCH")
        for line in resp.lines:
            if isinstance(line, bytearray):
                return bytes(line)
        return None

    async def confirm(self, uid: int) -> None:
        _ok(await self.client.uid("store", str(uid), "+FLAGS", "(\\Seen)"), "STORE \\Seen")

    async def drain(self, handle: Handler) -> int:
        """Hand every unseen message over, oldest first, until a search finds none; returns
        how many. (Mail that arrives meanwhile is announced in the answer to some command,
        which the server then counts as told: only a new search is sure to see it.)"""
        count = 0
        while uids := await self.unseen():
            for uid in uids:
                raw = await self.fetch(uid)
                if raw is not None:
                    await handle(uid, raw)
                await self.confirm(uid)
                count += 1
        return count

    async def wait_for_mail(self, idle: bool, poll_seconds: float, idle_seconds: float) -> None:
        """Return when new mail may be there: an IDLE push, or the poll interval. IDLE, too,
        ends after at most ``poll_seconds``: a server that counts a message as told before
        the IDLE began (announced in an earlier answer) never pushes it."""
        if not (idle and self.can_idle):
            await asyncio.sleep(poll_seconds)
            _ok(await self.client.noop(), "NOOP")  # the server is still there
            return
        wait = min(idle_seconds, poll_seconds)
        self.idling = True
        waiter = await self.client.idle_start(timeout=wait)
        # asyncio.wait, not wait_for (what aioimaplib's wait_server_push uses): a cancelled
        # wait_for on Python 3.11 can wait forever for its inner task to finish
        push = asyncio.ensure_future(self.client.protocol.idle_queue.get())
        try:
            await asyncio.wait({push}, timeout=wait)
        finally:  # also when cancelled: end the IDLE, wait for its answer only if not
            push.cancel()
            if self.client.has_pending_idle():
                self.client.idle_done()
        done, _ = await asyncio.wait({waiter}, timeout=TIMEOUT)
        if not done:
            raise ImapError("IMAP IDLE did not end")
        self.idling = False

    async def part(self, uid: int) -> bytes | None:
        return await self.fetch(uid)

    async def logout(self) -> None:
        """LOGOUT when the connection is quiet; after a cancelled IDLE the answer may never
        come, so the connection is just closed (a server takes that as a logout)."""
        try:
            if not self.idling:
                await asyncio.wait_for(self.client.logout(), 2)
        except Exception:
            pass
        finally:
            await _drop(self.client)
