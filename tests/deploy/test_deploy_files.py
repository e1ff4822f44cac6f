"""The container files in deploy/ keep their invariants (no Docker on the test machines, so the
files are parsed): a non-root image with a /healthz healthcheck that binds 0.0.0.0 through
CROSSTALK_GATEWAY_BIND; compose with PostgreSQL and two gateway replicas behind one port; and
the environment they set yields a valid config that points at the compose database."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp.test_utils import TestClient, TestServer

from adapters.base import AdapterStatus
from core.api.testing import RecordingAdapter
from core.config import load_config
from core.edge.http.server import build_app
from tests.conftest import RuntimeFactory
from tests.gateway_process import free_port

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
SECRETS = {"POSTGRES_PASSWORD": "pg-secret", "CROSSTALK_GATEWAY_TOKEN": "gw-secret"}


def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith("#")]
    joined = re.sub(r"\\\n\s*", " ", "\n".join(lines))
    out = []
    for line in joined.splitlines():
        if line.strip():
            word, _, rest = line.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def docker_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for word, rest in dockerfile():
        if word == "ENV":
            env.update(dict(pair.split("=", 1) for pair in shlex.split(rest)))
    return env


def interpolate(value: str, env: dict[str, str]) -> str:
    """Compose's `${VAR}`, `${VAR:-default}` and `${VAR:?error}`."""

    def one(m: re.Match[str]) -> str:
        name, op, arg = m.group(1), m.group(2), m.group(3)
        if name in env:
            return env[name]
        if op == ":?":
            raise AssertionError(f"compose requires {name}: {arg}")
        return arg or ""

    return re.sub(r"\$\{(\w+)(?:(:-|:\?)([^}]*))?\}", one, value)


def compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((DEPLOY / "compose.yaml").read_text(encoding="utf-8"))
    return data


def test_image_runs_as_non_root_with_a_healthcheck_and_binds_all_interfaces() -> None:
    steps = dockerfile()
    users = [rest for word, rest in steps if word == "USER"]
    assert users and users[-1] not in ("root", "0"), "the gateway must not run as root"
    assert any(word == "RUN" and "useradd" in rest and users[-1] in rest for word, rest in steps), (
        "the user is created in the image"
    )
    (health,) = [rest for word, rest in steps if word == "HEALTHCHECK"]
    assert "/healthz" in health and "CROSSTALK_GATEWAY_PORT" in health
    env = docker_env()
    assert env["CROSSTALK_GATEWAY_BIND"] == "0.0.0.0"
    assert [rest for word, rest in steps if word == "EXPOSE"] == [env["CROSSTALK_GATEWAY_PORT"]]
    assert [rest for word, rest in steps if word == "CMD"][-1] == '["crosstalk", "gateway"]'
    # the ENV the image sets is what the config loader reads
    config = load_config(env=env)
    assert (config.gateway.bind, config.gateway.port) == ("0.0.0.0", 18789)
    assert config.gateway.state_dir == env["CROSSTALK_STATE_DIR"]


def test_compose_runs_postgres_and_two_replicas_behind_one_port() -> None:
    services = compose()["services"]
    assert services["postgres"]["image"].startswith("postgres:")
    assert "pg_isready" in " ".join(services["postgres"]["healthcheck"]["test"])
    gw = services["gateway"]
    assert gw["deploy"]["replicas"] == 2
    assert "ports" not in gw, "replicas are reached only through the proxy"
    assert (DEPLOY / gw["build"]["context"] / gw["build"]["dockerfile"]).resolve() == (
        DEPLOY / "Dockerfile"
    ).resolve()
    assert gw["environment"]["CROSSTALK_GATEWAY_BIND"] == "0.0.0.0"
    assert gw["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert services["migrate"]["command"] == ["crosstalk", "db", "upgrade"]
    assert services["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    published = [s for s in services.values() if "ports" in s]
    assert published == [services["proxy"]], "exactly one service is published"
    (port,) = services["proxy"]["ports"]
    assert interpolate(port, {}) == "18789:8080"
    for name, svc in services.items():
        deps = svc.get("depends_on", {})
        assert set(deps) <= set(services), name
        for mount in svc.get("volumes", []):
            source = interpolate(mount.split(":")[0], {})
            if source.startswith("."):
                assert (DEPLOY / source).is_file(), f"{name} mounts a missing {source}"


def test_compose_environment_gives_a_valid_config_on_the_compose_database() -> None:
    services = compose()["services"]
    env = {k: interpolate(str(v), SECRETS) for k, v in services["gateway"]["environment"].items()}
    assert services["migrate"]["environment"] == services["gateway"]["environment"]
    with pytest.raises(AssertionError, match="POSTGRES_PASSWORD"):
        interpolate(services["gateway"]["environment"]["CROSSTALK_DATABASE_URL"], {})
    mount = interpolate(services["gateway"]["volumes"][0], {})
    source, target, _ = mount.split(":")
    assert target == env["CROSSTALK_CONFIG"]
    config = load_config(DEPLOY / source, env={**docker_env(), **env})
    assert config.database_url() == (
        "postgresql+asyncpg://crosstalk:pg-secret@postgres:5432/crosstalk"
    )
    assert (config.gateway.bind, config.gateway.port) == ("0.0.0.0", 18789)
    assert config.gateway.auth.token is not None
    assert config.gateway.auth.token.get_secret_value() == "gw-secret"
    assert config.logging.format == "json"


def test_proxy_balances_over_the_gateway_service() -> None:
    cfg = (DEPLOY / "haproxy.cfg").read_text(encoding="utf-8")
    services = compose()["services"]
    assert "balance roundrobin" in cfg
    assert "option httpchk GET /healthz" in cfg
    m = re.search(r"^\s*server-template \S+ \d+-(\d+) (\w+):(\d+) ", cfg, re.M)
    assert m is not None and int(m.group(1)) >= 2
    assert m.group(2) in services and m.group(3) == "18789"
    container_port = interpolate(services["proxy"]["ports"][0], {}).split(":")[1]
    assert re.search(rf"^\s*bind :{container_port}$", cfg, re.M)


async def test_the_healthcheck_command_passes_on_a_healthy_gateway_only(
    make_runtime: RuntimeFactory,
) -> None:
    (health,) = [rest for word, rest in dockerfile() if word == "HEALTHCHECK"]
    argv = json.loads(health[health.index("CMD ") + 4 :])
    argv[0] = sys.executable  # the image's `python`

    async def check(port: int) -> int:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            env={**os.environ, "CROSSTALK_GATEWAY_PORT": str(port)},
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        return await asyncio.wait_for(proc.wait(), 30)

    class Breakable(RecordingAdapter):
        broken = False

        def status(self) -> AdapterStatus:
            return AdapterStatus(
                self.channel, self.account_id, "failed" if self.broken else "connected"
            )

    adapter = Breakable("testchat")
    rt = await make_runtime(adapters=[adapter])
    async with TestClient(TestServer(build_app(rt, "test-token", []))) as c:
        assert c.port is not None
        assert await check(c.port) == 0
        adapter.broken = True
        assert await check(c.port) != 0  # /healthz answers 503
    assert await check(free_port()) != 0  # nothing listening


@pytest.mark.skipif(shutil.which("haproxy") is None, reason="haproxy is not installed")
def test_haproxy_accepts_the_config() -> None:
    done = subprocess.run(
        ["haproxy", "-c", "-f", str(DEPLOY / "haproxy.cfg")],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
