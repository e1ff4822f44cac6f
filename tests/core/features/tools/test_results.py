"""Typed tool results dump to the documented camelCase JSON, exactly as the dicts did (D33)."""

from __future__ import annotations

from core.features.tools.results import DeliveryTarget, SessionRow


def test_nested_models_drop_nones_but_raw_json_keeps_its_nulls() -> None:
    row = SessionRow(
        key="main",
        kind="main",
        channel="webchat",
        session_id="s",
        transcript_path="/t/s.jsonl",
        cost_usd=0,
        total_tokens=0,
        delivery_context=DeliveryTarget(channel="webchat"),
        messages=[{"role": "user", "meta": None}],
    )
    out = row.payload()
    assert out["costUsd"] == 0 and isinstance(out["costUsd"], int)  # 0 stays 0, not 0.0
    assert out["deliveryContext"] == {"channel": "webchat"}
    assert out["messages"] == [{"role": "user", "meta": None}]
    assert "label" not in out and "displayName" not in out
