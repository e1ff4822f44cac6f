"""JSON log lines (`logging.format: json`): every line emitted while a turn runs carries its
`runId` and `sessionKey`, whichever library logged it; lines outside a turn carry nulls."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from core.engine.observability.logs import configure_logging
from core.engine.runs import RunRequest
from tests.conftest import RuntimeFactory
from tests.fakes.model import FakeModelServer
from tests.fakes.model_script import ErrorReply

log = logging.getLogger("tests.observability")


@pytest.fixture
def json_log() -> Iterator[io.StringIO]:
    """The process logging configured as `crosstalk gateway` does, into a buffer, at DEBUG
    (so the model client's own lines are there too); the test runner's handlers restored."""
    root = logging.getLogger()
    saved, level = list(root.handlers), root.level
    stream = io.StringIO()
    configure_logging("json", level=logging.DEBUG, stream=stream)
    yield stream
    for h in list(root.handlers):
        root.removeHandler(h)
    for h in saved:
        root.addHandler(h)
    root.setLevel(level)


def lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


async def test_every_line_of_a_turn_carries_run_id_and_session_key(
    json_log: io.StringIO, make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    rt = await make_runtime()
    if rt.warmup is not None:
        await rt.warmup
    entry = await rt.services.ensure_session("agent:main:main")
    log.info("before any turn")
    fake_model.script(ErrorReply(500, "model broke", "server_error"))  # so the turn logs a warning
    start = len(json_log.getvalue())
    run = await rt.runs.submit(RunRequest(entry.key, "hello", rt.services.context_for(entry)))
    assert (await rt.runs.wait(run.id, 10)).status == "error"
    during = [
        r for r in lines(json_log.getvalue()[start:]) if not r["logger"].startswith("aiohttp")
    ]  # the fake model server's own lines
    before = lines(json_log.getvalue()[:start])

    assert any(
        r["logger"] == "core.engine.runs.manager" and r["level"] == "WARNING" for r in during
    )
    assert any(r["logger"].startswith("openai") for r in during), "library lines are covered"
    for record in during:
        assert (record["runId"], record["sessionKey"]) == (run.id, entry.key), record
        assert set(record) >= {"time", "level", "logger", "message"}
    mine = [r for r in before if r["message"] == "before any turn"]
    assert mine and mine[0]["runId"] is None and mine[0]["sessionKey"] is None


def test_text_format_stays_the_default() -> None:
    root = logging.getLogger()
    saved, level = list(root.handlers), root.level
    stream = io.StringIO()
    try:
        configure_logging(stream=stream)
        log.warning("plain")
    finally:
        for h in list(root.handlers):
            root.removeHandler(h)
        for h in saved:
            root.addHandler(h)
        root.setLevel(level)
    assert stream.getvalue().rstrip().endswith("WARNING tests.observability: plain")
