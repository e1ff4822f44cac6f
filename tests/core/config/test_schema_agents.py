"""Schema behaviour: model references, agent ids, the state dir and the database URL."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from core.config import (
    AgentConfig,
    CrosstalkConfig,
    ModelRefSpec,
    model_fallbacks,
    normalize_agent_id,
    primary_model,
)

# --- model references ----------------------------------------------------------------------


def test_model_ref_string_and_object_forms() -> None:
    config = CrosstalkConfig.model_validate(
        {
            "agents": {
                "defaults": {"model": "openai/gpt-x"},
                "list": [{"id": "a", "model": {"primary": "or/meta/llama", "fallbacks": ["o/b"]}}],
            },
        },
    )
    assert primary_model(config.agents.defaults.model) == "openai/gpt-x"
    assert model_fallbacks(config.agents.defaults.model) == []
    entry_model = config.agents.list[0].model
    assert isinstance(entry_model, ModelRefSpec)
    assert primary_model(entry_model) == "or/meta/llama"
    assert model_fallbacks(entry_model) == ["o/b"]
    assert primary_model(None) is None


@pytest.mark.parametrize("bad", ["gpt-4", "/gpt", "openai/", " / ", ""])
def test_model_ref_shape_is_checked(bad: str) -> None:
    with pytest.raises(ValidationError, match="provider/model") as exc:
        CrosstalkConfig.model_validate({"agents": {"defaults": {"model": bad}}})
    assert exc.value.errors()[0]["loc"][:3] == ("agents", "defaults", "model")


def test_model_ref_rejects_other_types_and_checks_fallbacks() -> None:
    with pytest.raises(ValidationError, match="'provider/model' string or an object"):
        CrosstalkConfig.model_validate({"agents": {"defaults": {"model": 5}}})
    with pytest.raises(ValidationError, match="provider/model"):
        CrosstalkConfig.model_validate(
            {
                "agents": {
                    "defaults": {"subagents": {"model": {"primary": "a/b", "fallbacks": ["c"]}}}
                }
            },
        )


def test_models_has_model() -> None:
    config = CrosstalkConfig.model_validate(
        {"models": {"providers": {"p": {"models": [{"id": "m1"}]}, "any": {}}}},
    )
    assert config.models.has_model("p/m1")
    assert not config.models.has_model("p/m2")
    assert not config.models.has_model("q/m1")
    assert config.models.has_model("any/whatever")


def test_provider_base_url_must_be_http() -> None:
    with pytest.raises(ValidationError, match="http"):
        CrosstalkConfig.model_validate({"models": {"providers": {"p": {"baseUrl": "localhost"}}}})


# --- agents --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("Research", "research"), ("My Agent!", "my-agent"), ("  ", "main"), ("a_b-1", "a_b-1")],
)
def test_normalize_agent_id(raw: str, expected: str) -> None:
    assert normalize_agent_id(raw) == expected


def test_agent_ids_are_normalised_and_unique() -> None:
    config = CrosstalkConfig.model_validate({"agents": {"list": [{"id": "Research"}]}})
    assert config.agents.list[0].id == "research"
    with pytest.raises(ValidationError, match="duplicate agent id 'x'"):
        CrosstalkConfig.model_validate({"agents": {"list": [{"id": "x"}, {"id": "X"}]}})
    with pytest.raises(ValidationError, match="must not be empty"):
        AgentConfig.model_validate({"id": " "})


def test_default_agent_id_rules() -> None:
    assert CrosstalkConfig().default_agent_id() == "main"
    first = CrosstalkConfig.model_validate({"agents": {"list": [{"id": "alpha"}, {"id": "beta"}]}})
    assert first.default_agent_id() == "alpha"
    flagged = CrosstalkConfig.model_validate(
        {"agents": {"list": [{"id": "alpha"}, {"id": "beta", "default": True}]}},
    )
    assert flagged.default_agent_id() == "beta"
    assert flagged.agent_ids() == ["alpha", "beta"]
    assert CrosstalkConfig().agent_ids() == ["main"]


def test_agent_lookup_normalises_the_id() -> None:
    config = CrosstalkConfig.model_validate({"agents": {"list": [{"id": "research"}]}})
    found = config.agent("Research")
    assert found is not None and found.id == "research"
    assert config.agent("other") is None


def test_session_main_key_is_normalised() -> None:
    assert (
        CrosstalkConfig.model_validate({"session": {"mainKey": " Home "}}).session.main_key
        == "home"
    )
    assert CrosstalkConfig.model_validate({"session": {"mainKey": ""}}).session.main_key == "main"


# --- state dir and database ----------------------------------------------------------------


def test_state_dir_tilde_is_expanded() -> None:
    config = CrosstalkConfig.model_validate({"gateway": {"stateDir": "~/ct-state"}})
    assert config.resolve_state_dir() == Path.home() / "ct-state"
    assert isinstance(config.resolve_state_dir(), Path)


def test_default_database_url_is_sqlite_in_state_dir() -> None:
    config = CrosstalkConfig.model_validate({"gateway": {"stateDir": "/srv/ct"}})
    assert config.database_url() == "sqlite+aiosqlite:////srv/ct/crosstalk.db"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("postgresql://u:p@db:5432/ct", "postgresql+asyncpg://u:p@db:5432/ct"),
        ("postgres://u@db/ct", "postgresql+asyncpg://u@db/ct"),
        ("postgresql+asyncpg://db/ct", "postgresql+asyncpg://db/ct"),
        ("sqlite:///rel/ct.db", "sqlite+aiosqlite:///rel/ct.db"),
        ("sqlite+aiosqlite:////abs/ct.db", "sqlite+aiosqlite:////abs/ct.db"),
    ],
)
def test_database_url_mapping(url: str, expected: str) -> None:
    config = CrosstalkConfig.model_validate({"gateway": {"database": {"url": url}}})
    assert config.database_url() == expected
