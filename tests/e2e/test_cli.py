"""The `crosstalk` command line, as a user runs it (child processes)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli import crosstalk
from tests.fakes.model import FakeModelServer
from tests.fakes.telegram import FakeTelegram
from tests.gateway_process import GatewayProcess, free_port, write_config


async def test_config_check_masks_secrets_and_rejects_bad_files(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text("gateway:\n  auth:\n    token: ${MY_TOKEN}\n", encoding="utf-8")
    code, out, _ = await crosstalk(
        "--config", str(good), "config", "check", env={"MY_TOKEN": "s3cret"}
    )
    assert code == 0
    assert json.loads(out)["gateway"]["auth"]["token"] == "***"
    assert "s3cret" not in out
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "gateway:\n  prot: 1\nsession:\n  sendPolicy:\n    rules:\n      - action: maybe\n",
        encoding="utf-8",
    )
    code, _, err = await crosstalk("--config", str(bad), "config", "check")
    assert code == 2
    assert "gateway.prot: unknown key" in err
    assert "session.sendPolicy.rules.0.action:" in err


async def test_db_upgrade_creates_the_schema(tmp_path: Path) -> None:
    code, out, err = await crosstalk(
        "db", "upgrade", env={"CROSSTALK_STATE_DIR": str(tmp_path / "state")}
    )
    assert code == 0, err
    assert (tmp_path / "state" / "crosstalk.db").exists()
    assert "database upgraded" in out


async def test_client_commands_against_a_running_gateway(
    tmp_path: Path, fake_model: FakeModelServer
) -> None:
    config = write_config(tmp_path / "crosstalk.yaml", tmp_path / "state", fake_model)
    async with GatewayProcess(config) as gw:
        status, _ = await gw.request(
            "POST",
            "/v1/chat/completions",
            {"messages": [{"role": "user", "content": "hi"}]},
            {"x-crosstalk-session-key": "main"},
        )
        assert status == 200
        common = ("--config", str(config))
        client = ("--url", gw.url, "--token", gw.token)
        code, out, err = await crosstalk(*common, "sessions", "list", "--json", *client)
        assert code == 0, err
        assert [r["key"] for r in json.loads(out)["sessions"]] == ["main"]
        code, out, err = await crosstalk(
            *common,
            "tools",
            "invoke",
            "sessions_history",
            "--args",
            '{"sessionKey": "main"}',
            *client,
        )
        assert code == 0, err
        assert [m["role"] for m in json.loads(out)["messages"]] == ["user", "assistant"]
        code, out, err = await crosstalk(
            *common, "sessions", "patch", "main", "--send-policy", "off", *client
        )
        assert code == 0, err
        assert json.loads(out)["entry"]["sendPolicy"] == "deny"
        status, body = await gw.request(
            "POST",
            "/v1/chat/completions",
            {"messages": [{"role": "user", "content": "again"}]},
            {"x-crosstalk-session-key": "main"},
        )
        assert status == 403 and body["error"]["message"] == "send blocked by session policy"
        code, out, err = await crosstalk(*common, "deliveries", "--session", "main", *client)
        assert code == 0, err
        code, out, err = await crosstalk(*common, "channels", "status", *client)
        assert code == 0 and "webchat/default: connected" in out
        code, _, err = await crosstalk(*common, "tools", "invoke", "nope", *client)
        assert code == 1 and "Tool not available: nope" in err


async def test_rejected_channel_token_stops_the_gateway_with_a_clear_error(
    tmp_path: Path, fake_telegram: FakeTelegram
) -> None:
    config = tmp_path / "crosstalk.yaml"
    config.write_text(
        f"gateway:\n  stateDir: {tmp_path / 'state'}\n"
        f"channels:\n  telegram:\n    botToken: '999:wrong'\n"
        f"    apiBaseUrl: {fake_telegram.base_url}\n",
        encoding="utf-8",
    )
    code, _, err = await crosstalk(
        "--config", str(config), "gateway", env={"CROSSTALK_GATEWAY_PORT": str(free_port())}
    )
    assert code == 1
    assert "crosstalk: the gateway could not start: telegram account default:" in err
    assert "999:wrong" not in err
