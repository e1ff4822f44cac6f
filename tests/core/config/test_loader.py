"""Loader behaviour: file formats, ${VAR} expansion, env overrides, error lines, masking."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.config import (
    ConfigError,
    CrosstalkConfig,
    dump_masked,
    load_config,
    secret_value,
    validate_config,
)

YAML_CONFIG = """\
gateway:
  port: 19000
  stateDir: /srv/crosstalk
  auth:
    token: file-token
agents:
  list:
    - id: Main
      default: true
      model: openai/gpt-x
session:
  sendPolicy:
    default: deny
    rules:
      - action: allow
        match: {provider: telegram, chatType: direct}
channels:
  telegram:
    owners: [12345]
"""

JSON5_CONFIG = """\
// comments and trailing commas are fine in JSON5
{
  gateway: {port: 19001, stateDir: '/srv/json5',},
  tools: {agentToAgent: {enabled: true, allow: ['*']}},
}
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _problems(raw: dict[str, object]) -> list[str]:
    with pytest.raises(ConfigError) as exc:
        validate_config(raw)
    return str(exc.value).splitlines()


# --- files ---------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".yaml", ".yml"])
def test_yaml_file(tmp_path: Path, suffix: str) -> None:
    config = load_config(_write(tmp_path, f"ct{suffix}", YAML_CONFIG), env={})
    assert config.gateway.port == 19000
    assert config.resolve_state_dir() == Path("/srv/crosstalk")
    assert secret_value(config.gateway.auth.token) == "file-token"
    assert config.default_agent_id() == "main"
    policy = config.session.send_policy
    assert policy is not None and policy.default == "deny"
    assert policy.rules[0].match is not None
    assert policy.rules[0].match.channel == "telegram"
    assert config.channels.telegram is not None
    assert config.channels.telegram.owners == ["12345"]


@pytest.mark.parametrize("suffix", [".json5", ".json"])
def test_json5_file(tmp_path: Path, suffix: str) -> None:
    config = load_config(_write(tmp_path, f"ct{suffix}", JSON5_CONFIG), env={})
    assert config.gateway.port == 19001
    assert config.gateway.state_dir == "/srv/json5"
    assert config.tools.agent_to_agent.enabled is True
    assert config.tools.agent_to_agent.allow == ["*"]


def test_no_path_and_no_env_gives_defaults() -> None:
    assert load_config(env={}) == CrosstalkConfig()


def test_path_from_crosstalk_config_env(tmp_path: Path) -> None:
    path = _write(tmp_path, "ct.yaml", "gateway: {port: 2000}\n")
    assert load_config(env={"CROSSTALK_CONFIG": str(path)}).gateway.port == 2000
    other = _write(tmp_path, "other.yaml", "gateway: {port: 3000}\n")
    # An explicit path wins over the variable.
    assert load_config(other, env={"CROSSTALK_CONFIG": str(path)}).gateway.port == 3000


def test_empty_yaml_file_gives_defaults(tmp_path: Path) -> None:
    assert load_config(_write(tmp_path, "empty.yaml", "# nothing\n"), env={}) == CrosstalkConfig()


def test_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(ConfigError, match="config file not found") as exc:
        load_config(missing, env={})
    assert str(missing) in str(exc.value)
    assert exc.value.source == missing
    with pytest.raises(ConfigError, match="not found"):
        load_config(env={"CROSSTALK_CONFIG": str(missing)})


def test_unsupported_suffix(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"unsupported config file type '\.toml'"):
        load_config(_write(tmp_path, "ct.toml", "x = 1\n"), env={})


def test_yaml_parse_error_names_file_and_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "bad.yaml", "gateway:\n  port: 1\n bad: [\n")
    with pytest.raises(ConfigError) as exc:
        load_config(path, env={})
    message = str(exc.value)
    assert message.startswith(f"{path}:3:")
    assert "YAML parse error" in message


def test_json5_parse_error_names_file_and_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "bad.json5", "{\n  gateway: {port: 1},\n  x: }\n")
    with pytest.raises(ConfigError) as exc:
        load_config(path, env={})
    assert str(exc.value).startswith(f"{path}:3")


def test_a_key_twice_in_one_mapping_is_an_error(tmp_path: Path) -> None:
    """D135: PyYAML would keep the second `owners` silently; a merge may still override."""
    twice = "channels:\n  telegram:\n    owners: ['1']\n    dmPolicy: pairing\n    owners: ['2']\n"
    path = _write(tmp_path, "twice.yaml", twice)
    with pytest.raises(ConfigError) as exc:
        load_config(path, env={})
    assert str(exc.value).startswith(f"{path}:5:5: YAML parse error")
    assert "duplicate key 'owners' (first at line 3)" in str(exc.value)
    merged = "base: &b {owners: ['1'], dmPolicy: open}\nchannels:\n  telegram:\n    <<: *b\n"
    merged += "    owners: ['2']\n"
    path = _write(tmp_path, "merged.yaml", merged.replace("base:", "x-base:"))
    with pytest.raises(ConfigError, match="x-base"):  # unknown key, not a duplicate
        load_config(path, env={})
    json5_twice = _write(tmp_path, "twice.json5", "{gateway: {port: 1, port: 2}}")
    with pytest.raises(ConfigError, match='Duplicate key "port"'):
        load_config(json5_twice, env={})


def test_the_example_config_has_every_key_once() -> None:
    """deploy/crosstalk.example.yaml had `owners:` twice under channels.telegram (issue 24)."""
    from core.config.yaml_unique import load_unique

    example = Path(__file__).resolve().parents[3] / "deploy" / "crosstalk.example.yaml"
    assert load_unique(example.read_text(encoding="utf-8"))["channels"]["telegram"]["owners"]


def test_top_level_must_be_a_mapping(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="top level must be a mapping, not list"):
        load_config(_write(tmp_path, "list.yaml", "- a\n- b\n"), env={})


# --- error lines ---------------------------------------------------------------------------


def test_error_lines_use_dotted_camel_case_paths() -> None:
    problems = _problems(
        {
            "gateway": {"prot": 1},
            "session": {"sendPolicy": {"rules": [{"action": "block"}]}},
        },
    )
    assert "gateway.prot: unknown key" in problems
    assert "session.sendPolicy.rules.0.action: Input should be 'allow' or 'deny'" in problems
    assert len(problems) == 2


def test_error_lines_keep_the_spelling_used_in_the_file() -> None:
    problems = _problems({"gateway": {"max_body_bytes": "big"}})
    assert problems[0].startswith("gateway.max_body_bytes: ")


def test_error_lines_for_model_refs_hide_union_internals() -> None:
    problems = _problems(
        {"agents": {"list": [{"id": "a", "model": {"fallbacks": []}}, {"id": "b", "model": "x"}]}},
    )
    assert "agents.list.0.model.primary: required" in problems
    assert any(
        p.startswith("agents.list.1.model: model must look like 'provider/model'") for p in problems
    )
    assert not any("model-ref" in p for p in problems)


def test_validator_messages_lose_the_pydantic_prefix() -> None:
    problems = _problems({"agents": {"list": [{"id": "x"}, {"id": "X"}]}})
    assert problems == ["agents.list: duplicate agent id 'x' (entries 0 and 1)"]


def test_missing_required_field_line() -> None:
    assert _problems({"agents": {"list": [{"name": "no id"}]}}) == ["agents.list.0.id: required"]


def test_file_validation_errors_are_config_errors(tmp_path: Path) -> None:
    path = _write(tmp_path, "ct.yaml", "gateway:\n  port: 0\nchannels:\n  slack: {mode: rtm}\n")
    with pytest.raises(ConfigError) as exc:
        load_config(path, env={})
    lines = str(exc.value).splitlines()
    assert lines == [
        "gateway.port: Input should be greater than or equal to 1",
        "channels.slack.mode: Input should be 'socket' or 'http'",
    ]
    assert exc.value.problems == lines
    assert exc.value.source == path


# --- ${VAR} expansion ----------------------------------------------------------------------


def test_env_references_are_expanded(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "ct.yaml",
        "gateway:\n  port: ${PORT}\n  auth: {token: 'tok-${SUFFIX}'}\n"
        "models:\n  providers:\n    p: {apiKey: '${KEY}', baseUrl: 'https://x'}\n"
        "tools:\n  deny: ['${TOOL}', literal]\n",
    )
    config = load_config(path, env={"PORT": "2500", "SUFFIX": "abc", "KEY": "sk", "TOOL": "exec"})
    assert config.gateway.port == 2500
    assert secret_value(config.gateway.auth.token) == "tok-abc"
    assert secret_value(config.models.providers["p"].api_key) == "sk"
    assert config.tools.deny == ["exec", "literal"]


def test_escaped_reference_stays_literal(tmp_path: Path) -> None:
    path = _write(tmp_path, "ct.yaml", "agents:\n  defaults: {systemPrompt: 'say $${HOME}'}\n")
    config = load_config(path, env={"HOME": "/root"})
    assert config.agents.defaults.system_prompt == "say ${HOME}"


def test_missing_variables_are_errors_with_path_and_name(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "ct.yaml",
        "gateway:\n  auth: {token: '${GW_TOKEN}'}\n"
        "agents:\n  list:\n    - {id: a, model: '${M}'}\n",
    )
    with pytest.raises(ConfigError) as exc:
        load_config(path, env={})
    lines = str(exc.value).splitlines()
    assert lines[0].startswith("gateway.auth.token: environment variable GW_TOKEN is not set")
    assert lines[1].startswith("agents.list.0.model: environment variable M is not set")
    assert len(lines) == 2


# --- env overrides -------------------------------------------------------------------------


def test_env_overrides_win_over_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path, "ct.yaml", YAML_CONFIG)
    env = {
        "CROSSTALK_STATE_DIR": "/var/ct",
        "CROSSTALK_GATEWAY_TOKEN": "env-token",
        "CROSSTALK_GATEWAY_PORT": "20000",
        "CROSSTALK_DATABASE_URL": "postgres://u:p@db/ct",
    }
    config = load_config(path, env=env)
    assert config.gateway.state_dir == "/var/ct"
    assert secret_value(config.gateway.auth.token) == "env-token"
    assert config.gateway.port == 20000
    assert config.database_url() == "postgresql+asyncpg://u:p@db/ct"


def test_env_overrides_without_a_file_and_snake_case_in_file(tmp_path: Path) -> None:
    assert load_config(env={"CROSSTALK_GATEWAY_PORT": "1234"}).gateway.port == 1234
    path = _write(tmp_path, "ct.yaml", "gateway:\n  state_dir: /from/file\n")
    assert load_config(path, env={"CROSSTALK_STATE_DIR": "/from/env"}).gateway.state_dir == (
        "/from/env"
    )


def test_gateway_bind_env_override(tmp_path: Path) -> None:
    """Containers listen on every interface without editing the config file (deploy/)."""
    assert load_config(env={}).gateway.bind == "127.0.0.1"
    path = _write(tmp_path, "ct.yaml", "gateway: {bind: 127.0.0.1, port: 4000}\n")
    config = load_config(path, env={"CROSSTALK_GATEWAY_BIND": "0.0.0.0"})
    assert (config.gateway.bind, config.gateway.port) == ("0.0.0.0", 4000)
    assert load_config(path, env={"CROSSTALK_GATEWAY_BIND": " "}).gateway.bind == "127.0.0.1"


def test_empty_env_override_is_ignored(tmp_path: Path) -> None:
    path = _write(tmp_path, "ct.yaml", "gateway: {port: 4000}\n")
    assert load_config(path, env={"CROSSTALK_GATEWAY_PORT": " "}).gateway.port == 4000


def test_bad_env_override_names_the_variable() -> None:
    with pytest.raises(ConfigError) as exc:
        load_config(env={"CROSSTALK_GATEWAY_PORT": "eighty"})
    line = str(exc.value)
    assert line.startswith("gateway.port: ")
    assert line.endswith("(from environment variable CROSSTALK_GATEWAY_PORT)")


def test_channel_tokens_fill_only_existing_sections(tmp_path: Path) -> None:
    env = {
        "TELEGRAM_BOT_TOKEN": "tg-env",
        "DISCORD_BOT_TOKEN": "dc-env",
        "SLACK_BOT_TOKEN": "xoxb-env",
        "SLACK_APP_TOKEN": "xapp-env",
        "SLACK_SIGNING_SECRET": "sig-env",
    }
    assert load_config(env=env).channels.telegram is None
    assert load_config(env=env).channels.discord is None

    path = _write(
        tmp_path,
        "ct.yaml",
        "channels:\n  telegram: {}\n  slack:\n    appToken: xapp-file\n",
    )
    config = load_config(path, env=env)
    assert config.channels.discord is None
    telegram = config.channels.telegram
    slack = config.channels.slack
    assert telegram is not None and slack is not None
    assert secret_value(telegram.bot_token) == "tg-env"
    assert secret_value(slack.bot_token) == "xoxb-env"
    assert secret_value(slack.app_token) == "xapp-file"  # set in the file: the file wins
    assert secret_value(slack.signing_secret) == "sig-env"
    assert telegram.account_ids() == ["default"]


def test_channel_token_does_not_replace_file_value_written_in_snake_case(tmp_path: Path) -> None:
    path = _write(
        tmp_path, "ct.yaml", "channels:\n  discord: {token: file}\n  telegram:\n    bot_token: f\n"
    )
    config = load_config(path, env={"DISCORD_BOT_TOKEN": "env", "TELEGRAM_BOT_TOKEN": "env"})
    assert config.channels.discord is not None
    assert secret_value(config.channels.discord.token) == "file"
    assert config.channels.telegram is not None
    assert secret_value(config.channels.telegram.bot_token) == "f"


# --- masking -------------------------------------------------------------------------------


def test_dump_masked_hides_every_secret(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "ct.yaml",
        "gateway:\n  auth: {token: gw-secret}\n  database: {url: 'postgresql://ct:db-pass@h:5432/ct'}\n"
        "models:\n  providers:\n    p: {apiKey: sk-secret}\n"
        "channels:\n  telegram:\n    botToken: tg-secret\n    webhookSecret: wh-secret\n"
        "    accounts: {two: {botToken: tg2-secret}}\n"
        "  slack: {botToken: xoxb-s, appToken: xapp-s, signingSecret: sig-s}\n"
        "  discord: {token: dc-secret}\n",
    )
    dumped = dump_masked(load_config(path, env={}))
    text = json.dumps(dumped)  # must be JSON-serialisable for `crosstalk config check`
    for secret in (
        "gw-secret",
        "db-pass",
        "sk-secret",
        "tg-secret",
        "wh-secret",
        "tg2-secret",
        "xoxb-s",
        "xapp-s",
        "sig-s",
        "dc-secret",
    ):
        assert secret not in text
    assert dumped["gateway"]["auth"]["token"] == "***"
    assert dumped["gateway"]["auth"]["password"] is None  # unset stays visible as unset
    assert dumped["gateway"]["database"]["url"] == "postgresql://ct:***@h:5432/ct"
    assert dumped["models"]["providers"]["p"]["apiKey"] == "***"
    assert dumped["channels"]["telegram"]["accounts"]["two"]["botToken"] == "***"
    assert dumped["channels"]["slack"]["signingSecret"] == "***"
    # Keys are the camelCase aliases and non-secret values are shown.
    assert dumped["gateway"]["maxBodyBytes"] == 2_097_152
    assert dumped["channels"]["telegram"]["webhookListen"] == "127.0.0.1"


def test_dump_masked_round_trips_non_secret_values() -> None:
    config = validate_config({"session": {"dmScope": "per-peer", "mainKey": "Home"}})
    dumped = dump_masked(config)
    assert dumped["session"]["dmScope"] == "per-peer"
    assert dumped["session"]["mainKey"] == "home"
    assert CrosstalkConfig.model_validate(dumped) == config
