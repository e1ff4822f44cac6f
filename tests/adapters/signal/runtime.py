"""Signal on FakeSignal (signal-cli's JSON-RPC): the person and the group its tests write
from, and a runtime with the Signal channel connected to it."""

from __future__ import annotations

from typing import Any

from adapters.signal.adapter import SignalAdapter
from core.runtime import Runtime
from tests.conftest import RuntimeFactory
from tests.fakes.signal import FakeSignal

ANN = "+15550000001"
GROUP = "R3JvdXBJZEFCQ2RlZg=="


async def signal_runtime(
    make_runtime: RuntimeFactory, fake: FakeSignal, extra: dict[str, Any] | None = None
) -> tuple[Runtime, SignalAdapter]:
    """A runtime with the Signal channel (DMs and groups open), connected to `fake`."""
    channel = {**fake.config(), "dmPolicy": "open", "groupPolicy": "open"}
    rt = await make_runtime({"channels": {"signal": channel}, **(extra or {})})
    section = rt.config.channels.signal
    assert section is not None
    [(account_id, acc)] = section.iter_accounts()
    adapter = SignalAdapter(acc, account_id, retry_initial=0.01)
    await rt.add_adapter(adapter)
    await fake.wait_until(lambda: bool(fake.streams))
    return rt, adapter
