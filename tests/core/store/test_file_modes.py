"""D12: the state directory is 0700, every directory in it 0700, every file 0600 (umask 022)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.engine.runs import RunRequest
from tests.conftest import RuntimeFactory
from tests.fakes.model import FakeModelServer, text
from tests.gateway_process import GatewayProcess, write_config


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


def modes(root: Path) -> dict[str, int]:
    out = {".": stat.S_IMODE(root.stat().st_mode)}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = Path(dirpath) / name
            out[str(full.relative_to(root))] = stat.S_IMODE(full.stat().st_mode)
    return out


def assert_private(root: Path) -> None:
    found = modes(root)
    wrong = {p: oct(m) for p, m in found.items() if m != (0o700 if (root / p).is_dir() else 0o600)}
    assert not wrong, wrong


async def test_in_process_runtime_keeps_its_state_private(
    umask_022: None, make_runtime: RuntimeFactory, fake_model: FakeModelServer, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o755)
    (state / "transcripts").mkdir(mode=0o755)
    (state / "transcripts" / "old.jsonl").write_text("{}\n")  # left by an older version: 0644
    rt = await make_runtime()
    entry = await rt.services.ensure_session("agent:main:main")
    fake_model.script(text("hi"))
    run = await rt.runs.submit(RunRequest(entry.key, "hello", rt.services.context_for(entry)))
    assert (await rt.runs.wait(run.id, 10)).status == "ok"
    found = modes(state)
    assert {"crosstalk.db", "crosstalk.db-wal", f"transcripts/{entry.session_id}.jsonl"} <= set(
        found
    )
    assert_private(state)


async def test_gateway_process_keeps_its_state_private(
    umask_022: None, fake_model: FakeModelServer, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    config = write_config(tmp_path / "crosstalk.yaml", state, fake_model)
    fake_model.script(text("hi"))
    async with GatewayProcess(config) as gw:
        status, _ = await gw.request(
            "POST", "/v1/chat/completions", {"messages": [{"role": "user", "content": "hello"}]}
        )
        assert status == 200
        assert any(p.endswith(".jsonl") for p in modes(state))
        assert_private(state)
    assert_private(state)
