"""What an idle gateway does not load: the model stack waits for a chat (D54), GC is paused only
while the gateway starts (D55), and optional libraries wait for their first use (D56)."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from core.edge.cli.main import main
from core.edge.http.server import build_app
from core.features.models import heap
from tests.conftest import RuntimeFactory
from tests.fresh_python import run_python

AUTH = {"Authorization": "Bearer test-token"}


async def test_the_model_stack_waits_for_a_chat_to_open(make_runtime: RuntimeFactory) -> None:
    rt = await make_runtime()
    async with TestClient(TestServer(build_app(rt, "test-token", []))) as c:
        assert (await c.get("/healthz")).status == 200
        assert not rt.warm.started  # a monitor polling the gateway does not load it
        await c.get("/ws")  # the web chat's socket (refused here: no web chat mounted)
        assert rt.warm.started
        assert rt.warmup is not None
        await rt.warmup


async def test_the_first_turn_starts_the_model_stack_and_gets_its_reply(
    make_runtime: RuntimeFactory,
) -> None:
    rt = await make_runtime()
    assert not rt.warm.started
    async with TestClient(TestServer(build_app(rt, "test-token", []))) as c:
        resp = await c.post(
            "/v1/chat/completions",
            headers=AUTH,
            json={"messages": [{"role": "user", "content": "hello"}], "user": "u"},
        )
        body = await resp.json()
    assert resp.status == 200, body
    assert body["choices"][0]["message"]["content"] == "echo: hello"
    assert rt.warm.started


def test_a_refused_gateway_start_leaves_gc_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CROSSTALK_STATE_DIR", str(tmp_path / "state"))
    path = tmp_path / "crosstalk.yaml"
    path.write_text("agents:\n  defaults:\n    model: nope/x\n", encoding="utf-8")
    assert gc.isenabled()
    with pytest.raises(SystemExit):
        main(["--config", str(path), "gateway"])
    assert gc.isenabled()


OPTIONAL = [
    "jinja2",
    "json5",
    "pythonjsonlogger",
    "prometheus_client",
    "pydantic_ai",
    "openai",
    "genai_prices",
]


def test_starting_code_does_not_import_optional_libraries(tmp_path: Path) -> None:
    config = tmp_path / "crosstalk.yaml"
    config.write_text(
        "models:\n  providers:\n    local:\n      baseUrl: http://127.0.0.1:9/v1\n"
        "agents:\n  defaults:\n    model: local/m\n",
        encoding="utf-8",
    )
    code = (
        "import sys, json\n"
        "import core.edge.cli.main, core.edge.http.server\n"
        "from core.config import load_config\n"
        "from core.runtime import Runtime\n"
        f"Runtime(load_config({str(config)!r}))\n"
        f"print(json.dumps([m for m in {OPTIONAL!r} if m in sys.modules]))\n"
    )
    out = run_python(code)
    assert json.loads(out.stdout) == []


async def test_the_gateway_process_freezes_the_model_stack_once_imported(
    make_runtime: RuntimeFactory,
) -> None:
    rt = await make_runtime()
    threshold = gc.get_threshold()
    heap.freeze_after_warm_up()  # what the gateway's entry point asks for (D50)
    try:
        frozen = gc.get_freeze_count()
        assert rt.warmup is not None
        await rt.warmup
        assert gc.get_freeze_count() > frozen
    finally:
        gc.unfreeze()  # the test process keeps collecting what it built
        gc.set_threshold(*threshold)


def test_the_gateway_never_loads_httpxs_command_line_client(tmp_path: Path) -> None:
    """D145: httpx imports click, rich and pygments for its CLI when they are installed; the
    gateway process marks that module absent before the model stack imports httpx."""
    config = tmp_path / "crosstalk.yaml"
    config.write_text("agents:\n  defaults:\n    model: nope/x\n", encoding="utf-8")
    code = (
        "import sys, json\n"
        "from core.edge.cli.main import main\n"
        "from core.features.models.resolver import _import_model_stack\n"
        "try:\n"
        f"    main(['--config', {str(config)!r}, 'gateway'])\n"  # refused, after the marking
        "except SystemExit:\n"
        "    pass\n"
        "_import_model_stack(None)\n"
        "import httpx\n"
        "loaded = [m for m in ('click', 'rich', 'pygments', 'httpx._main') if m in sys.modules\n"
        "          and sys.modules[m] is not None]\n"
        "print(json.dumps([loaded, 'pydantic_ai' in sys.modules, callable(httpx.main)]))\n"
    )
    out = run_python(code, env={"CROSSTALK_STATE_DIR": str(tmp_path / "state")})
    assert json.loads(out.stdout.splitlines()[-1]) == [[], True, True], out.stderr


def test_the_warm_up_imports_what_the_first_turns_metrics_need() -> None:
    """D193: the first turn samples a metric, which imports prometheus_client (D56); the
    warm-up that precedes it imports it instead, off the first reply's path."""
    code = (
        "import sys\n"
        "from core.features.models.resolver import warm_up_imports\n"
        "print('prometheus_client' in sys.modules)\n"
        "warm_up_imports(None)\n"
        "print('prometheus_client' in sys.modules)\n"
    )
    out = run_python(code)
    assert out.stdout.split() == ["False", "True"], out.stderr
