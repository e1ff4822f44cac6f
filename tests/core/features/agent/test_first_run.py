"""The first-run reply (D132): YAML in a fenced block, kept for the user, never read by a model."""

from __future__ import annotations

from pathlib import Path

from core.config import validate_config
from core.engine.runs import RunRequest
from core.model.records import NOTICE
from core.runtime import Runtime
from tests.fakes.model import FakeModelServer, messages


async def _turn(rt: Runtime, text: str) -> str:
    entry = await rt.services.ensure_session("agent:main:main")
    run = await rt.runs.submit(RunRequest(entry.key, text, rt.services.context_for(entry)))
    out = await rt.runs.wait(run.id, 30)
    assert out.status == "ok", out
    return out.reply or ""


async def test_the_no_model_reply_is_a_code_block_no_model_ever_reads(
    tmp_path: Path, fake_model: FakeModelServer
) -> None:
    base = {"gateway": {"stateDir": str(tmp_path / "state"), "auth": {"token": "t"}}}
    rt = Runtime(validate_config(base))
    await rt.start(probe_models=False)
    try:
        reply = await _turn(rt, "hi")
        entry = await rt.store.get_session("agent:main:main")
        assert entry is not None
        stored = await rt.store.history(entry.session_id)
    finally:
        await rt.stop()
    fence = "```yaml\nmodels:\n  providers:\n    local:\n      baseUrl: http://127.0.0.1:11434/v1\n"
    assert fence in reply and "    model: local/llama3.2\n```\n" in reply
    assert [(m.role, (m.meta or {}).get(NOTICE)) for m in stored] == [
        ("user", None),
        ("assistant", "gateway"),
    ]

    configured = {
        **base,
        "models": {"providers": {"fake": {"baseUrl": fake_model.base_url, "apiKey": "k"}}},
        "agents": {"defaults": {"model": "fake/fake-model"}},
    }
    rt = Runtime(validate_config(configured))
    await rt.start(probe_models=False)
    try:
        assert await _turn(rt, "now?") == "echo: now?"
    finally:
        await rt.stop()
    said = [m.get("content") for m in messages(fake_model.requests[-1])]
    assert "hi" in str(said) and "No model is configured" not in str(said)
