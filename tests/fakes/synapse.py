"""A real Matrix homeserver for the tests: Synapse from PyPI on 127.0.0.1 with SQLite (D173).

Started once per test session (``synapse`` fixture, about a second), in its own process with a
throw-away directory; users are registered through the shared-secret admin API, so every test
gets fresh users and rooms and nothing leaks between tests. Rate limits are lifted (the tests
inject 429s themselves through :class:`tests.fakes.matrix_proxy.MatrixProxy`) and password
hashing is cheap.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from tests.gateway_process import free_port

SERVER_NAME = "localhost"
_SECRET = "crosstalk-test-shared-secret"
_FAST = {"per_second": 10000, "burst_count": 10000}
_CONFIG = """
server_name: "{name}"
pid_file: {dir}/homeserver.pid
listeners:
  - port: {port}
    bind_addresses: ['127.0.0.1']
    type: http
    tls: false
    x_forwarded: false
    resources:
      - names: [client]
        compress: false
database:
  name: sqlite3
  args:
    database: {dir}/homeserver.db
log_config: {dir}/log.yaml
media_store_path: {dir}/media
registration_shared_secret: "{secret}"
report_stats: false
signing_key_path: {dir}/signing.key
trusted_key_servers: []
suppress_key_server_warning: true
bcrypt_rounds: 4
enable_metrics: false
federation_domain_whitelist: []
presence:
  enabled: false
rc_message: {fast}
rc_login:
  address: {fast}
  account: {fast}
  failed_attempts: {fast}
rc_joins:
  local: {fast}
rc_invites:
  per_room: {fast}
  per_user: {fast}
  per_issuer: {fast}
rc_key_requests: {fast}
rc_3pid_validation: {fast}
rc_admin_redaction: {fast}
"""
_LOG = """
version: 1
formatters:
  precise: {{format: '%(asctime)s %(name)s %(levelname)s %(message)s'}}
handlers:
  file: {{class: logging.FileHandler, formatter: precise, filename: {dir}/homeserver.log}}
root: {{level: WARNING, handlers: [file]}}
disable_existing_loggers: false
"""


@dataclass(frozen=True, slots=True)
class MatrixUser:
    user_id: str
    localpart: str
    password: str


class Homeserver:
    """One Synapse process; :meth:`register` makes users."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="crosstalk-synapse-"))
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self._proc: subprocess.Popen[bytes] | None = None
        self._names = itertools.count(1)

    def start(self, timeout: float = 60.0) -> None:
        fast = json.dumps(_FAST)
        (self.dir / "homeserver.yaml").write_text(
            _CONFIG.format(
                name=SERVER_NAME, dir=self.dir, port=self.port, secret=_SECRET, fast=fast
            )
        )
        (self.dir / "log.yaml").write_text(_LOG.format(dir=self.dir))
        cmd = [
            sys.executable,
            "-m",
            "synapse.app.homeserver",
            "-c",
            str(self.dir / "homeserver.yaml"),
        ]
        subprocess.run([*cmd, "--generate-keys"], check=True, capture_output=True, timeout=60)
        out = open(self.dir / "stdout.log", "wb")
        self._proc = subprocess.Popen(
            cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"synapse exited: {self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/health", timeout=1) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"synapse did not start in {timeout}s: {self.log_tail()}")

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)

    def log_tail(self, lines: int = 30) -> str:
        text = ""
        for name in ("stdout.log", "homeserver.log"):
            path = self.dir / name
            if path.exists():
                text += path.read_text(errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def register(self, prefix: str) -> MatrixUser:
        """A new user ``@<prefix>-<n>:localhost`` via the shared-secret admin API."""
        localpart = f"{prefix}-{next(self._names)}"
        password = f"pw-{localpart}"
        url = f"{self.base_url}/_synapse/admin/v1/register"
        with urllib.request.urlopen(url, timeout=10) as r:
            nonce = json.loads(r.read())["nonce"]
        mac = hmac.new(_SECRET.encode(), digestmod=hashlib.sha1)
        mac.update(
            b"\x00".join([nonce.encode(), localpart.encode(), password.encode(), b"notadmin"])
        )
        body = json.dumps(
            {
                "nonce": nonce,
                "username": localpart,
                "password": password,
                "admin": False,
                "mac": mac.hexdigest(),
            }
        ).encode()
        req = urllib.request.Request(url, body, {"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            user_id = json.loads(r.read())["user_id"]
        return MatrixUser(user_id, localpart, password)
