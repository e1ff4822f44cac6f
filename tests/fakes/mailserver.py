"""A real IMAP + SMTP server on loopback for the email tests: mail-devel (pymap + aiosmtpd).

Run in-process on the test's loop (SMTP too, not in aiosmtpd's thread), one per test (a few
milliseconds): every address has its own mailbox
(multi-user mode, one password for all), SMTP delivers into them, IMAP serves them, with
IDLE and STARTTLS. What the bot sends is recorded as it is accepted (``send`` calls, the
parsed message in ``params["message"]``), and the next SMTP transaction can be refused the
way a mail server does (451 try later, 550 refused). A test certificate is made on the fly;
``tls_proxy`` puts implicit TLS (IMAPS) in front of the IMAP port, which pymap lacks.
"""

from __future__ import annotations

import asyncio
import contextlib
import email
import email.policy
import ssl
import subprocess
import tempfile
from collections import deque
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from aiohttp import web
from aiosmtpd.smtp import SMTP, Envelope, Session
from mail_devel.auth import SMTPAuthenticator
from mail_devel.service import Service
from mail_devel.smtp import MemoryHandler

from tests.fakes.base import Call, EmulatorServer
from tests.gateway_process import free_port

PASSWORD = "mail-test-password"
_REFUSALS = {
    421: "421 4.3.2 Service not available",
    451: "451 4.7.1 Try again later",
    550: "550 5.7.1 Refused by policy",
}


_CERT: tuple[Path, Path] | None = None


def make_certificate() -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (made once per test session)."""
    global _CERT
    if _CERT is not None:
        return _CERT
    directory = Path(tempfile.mkdtemp(prefix="crosstalk-mail-cert-"))
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "2",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1,DNS:localhost",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    _CERT = cert, key
    return _CERT


class _Recorder(MemoryHandler):  # type: ignore[misc]
    """mail-devel's handler, plus a record of accepted mail and one-shot refusals."""

    def __init__(self, owner: MailServer, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.owner = owner
        self.refusals: deque[tuple[int, str | None]] = deque()

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        sender = str(envelope.mail_from or "").lower()
        if self.refusals and self.refusals[0][1] in (None, sender):
            code, _ = self.refusals.popleft()
            self.owner.record(Call("send", {"to": list(envelope.rcpt_tos)}, status=code))
            return _REFUSALS[code]
        answer: str = await super().handle_DATA(server, session, envelope)
        raw = envelope.original_content or envelope.content or b""
        data = raw if isinstance(raw, bytes) else raw.encode()
        message = email.message_from_bytes(data, policy=email.policy.default)
        self.owner.record(
            Call(
                "send",
                {
                    "from": envelope.mail_from,
                    "to": list(envelope.rcpt_tos),
                    "message": message,
                    "raw": data,
                },
                status=250,
            )
        )
        attached = any(True for _ in message.iter_attachments())
        await self.owner._hold("sendMedia" if attached else "send")  # hold_next (D16 tests)
        return answer


class MailServer(EmulatorServer):
    """``imap_port`` (plain / STARTTLS), ``smtp_port`` (plain / STARTTLS), ``smtps_port``."""

    def __init__(self) -> None:
        super().__init__()
        self.cert, self.key = make_certificate()
        self.imap_port, self.smtp_port, self.smtps_port = free_port(), free_port(), free_port()
        self.password = PASSWORD
        self.service: Service | None = None
        self.handler: _Recorder | None = None
        self._stack: contextlib.AsyncExitStack | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._proxies: list[asyncio.Server] = []
        self._servers: list[asyncio.Server] = []

    def _setup_routes(self, app: web.Application) -> None:
        return None

    @property
    def client_tls(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.cert))

    async def start(self) -> str:
        self._loop = asyncio.get_running_loop()
        args = Service.parse(
            [
                "--host",
                "127.0.0.1",
                "--multi-user",
                "--password",
                self.password,
                "--imap-port",
                str(self.imap_port),
                "--smtp-port",
                str(self.smtp_port),
                "--smtps-port",
                str(self.smtps_port),
                "--no-http",
                "--cert",
                str(self.cert),
                "--key",
                str(self.key),
            ]
        )
        service = await Service.init(args)
        assert service.config is not None and service.backend is not None
        assert service.imap is not None and service.ssl_context is not None
        service.config._tls_enabled = True  # mail-devel leaves IMAP STARTTLS off
        recorder = _Recorder(self, service.mailboxes, multi_user=True)
        self.service, self.handler = service, recorder
        self._stack = contextlib.AsyncExitStack()
        await service.backend.start(self._stack)
        await service.imap.start(self._stack)
        # SMTP on this loop, not in aiosmtpd's own thread: mail delivered into pymap's
        # mailboxes must wake the IMAP side on the loop it lives on
        auth = SMTPAuthenticator(args.user, self.password, True)

        def smtp() -> SMTP:
            return SMTP(
                recorder,
                hostname="127.0.0.1",
                tls_context=service.ssl_context,
                auth_required=False,
                auth_require_tls=False,
                authenticator=auth,
                enable_SMTPUTF8=True,
            )

        self._servers = [
            await self._loop.create_server(smtp, "127.0.0.1", self.smtp_port),
            await self._loop.create_server(
                smtp, "127.0.0.1", self.smtps_port, ssl=service.ssl_context
            ),
        ]
        self.base_url = f"imap://127.0.0.1:{self.imap_port}"
        return self.base_url

    async def stop(self) -> None:
        self._stopping.set()  # held answers (hold_next) end
        for server in [*self._proxies, *self._servers]:
            server.close()
        self._proxies, self._servers = [], []
        if self._stack is not None:  # bounded: a client that never hung up cannot hold it
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._stack.aclose(), 5)
        self._stack = self.service = None

    def refuse_next(self, code: int, sender: str | None = None) -> None:
        """The next SMTP transaction (from `sender`, if given) ends with 451 (try later) or
        550 (refused)."""
        assert self.handler is not None
        self.handler.refusals.append((code, sender.lower() if sender else None))

    def sent(self) -> list[EmailMessage]:
        return [c.params["message"] for c in self.calls if c.method == "send" and c.status == 250]

    async def tls_proxy(self) -> int:
        """A port that speaks TLS from the first byte and forwards to the IMAP port."""
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(str(self.cert), str(self.key))

        async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            with contextlib.suppress(Exception):
                while data := await reader.read(65536):
                    writer.write(data)
                    await writer.drain()
            writer.close()

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.imap_port)
            await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

        server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=ctx)
        self._proxies.append(server)
        return int(server.sockets[0].getsockname()[1])
