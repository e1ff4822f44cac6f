"""Crosstalk configuration: one strict pydantic tree (``CrosstalkConfig``) and its loader.

Secrets are ``pydantic.SecretStr``: read them with ``secret_value(x)`` or
``x.get_secret_value()`` at the point of use, so reprs and logs never leak them.

The package itself is light (PEP 562, D92): a name is imported from its module on first use. So a
channel's spec module, which is loaded while the channel sections are being built (inside
``core.config.schema``), can import ``core.config.schema_base`` or ``core.api.channels``
without starting that build a second time.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.config.loader import (
        CONFIG_ENV_VAR,
        ConfigError,
        config_secrets,
        dump_masked,
        load_config,
        validate_config,
    )
    from core.config.schema import (
        AgentToAgentSessionConfig,
        CrosstalkConfig,
        SendPolicyConfig,
        SendPolicyMatch,
        SendPolicyRule,
        SessionConfig,
    )
    from core.config.schema_agents import (
        AgentConfig,
        AgentDefaultsConfig,
        AgentsConfig,
        AgentSubagentsConfig,
        DefaultSubagentsConfig,
        ModelCost,
        ModelEntry,
        ModelsConfig,
        ProviderConfig,
        SandboxConfig,
        ToolPolicyConfig,
    )
    from core.config.schema_base import (
        ModelRef,
        ModelRefSpec,
        model_fallbacks,
        normalize_account_id,
        normalize_agent_id,
        primary_model,
        secret_value,
    )
    from core.config.schema_channels import (
        AccountConfig,
        ChannelsConfig,
        GroupsConfig,
    )
    from core.config.schema_gateway import DatabaseConfig, GatewayAuthConfig, GatewayConfig
    from core.config.schema_tools import (
        SessionToolsConfig,
        SubagentToolsConfig,
        ToolsAgentToAgentConfig,
        ToolsConfig,
    )

_WHERE: dict[str, str] = {
    "AccountConfig": "core.config.schema_channels",
    "AgentConfig": "core.config.schema_agents",
    "AgentDefaultsConfig": "core.config.schema_agents",
    "AgentSubagentsConfig": "core.config.schema_agents",
    "AgentToAgentSessionConfig": "core.config.schema",
    "AgentsConfig": "core.config.schema_agents",
    "CONFIG_ENV_VAR": "core.config.loader",
    "ChannelsConfig": "core.config.schema_channels",
    "ConfigError": "core.config.loader",
    "CrosstalkConfig": "core.config.schema",
    "DatabaseConfig": "core.config.schema_gateway",
    "DefaultSubagentsConfig": "core.config.schema_agents",
    "GatewayAuthConfig": "core.config.schema_gateway",
    "GatewayConfig": "core.config.schema_gateway",
    "GroupsConfig": "core.config.schema_channels",
    "ModelCost": "core.config.schema_agents",
    "ModelEntry": "core.config.schema_agents",
    "ModelRef": "core.config.schema_base",
    "ModelRefSpec": "core.config.schema_base",
    "ModelsConfig": "core.config.schema_agents",
    "ProviderConfig": "core.config.schema_agents",
    "SandboxConfig": "core.config.schema_agents",
    "SendPolicyConfig": "core.config.schema",
    "SendPolicyMatch": "core.config.schema",
    "SendPolicyRule": "core.config.schema",
    "SessionConfig": "core.config.schema",
    "SessionToolsConfig": "core.config.schema_tools",
    "SubagentToolsConfig": "core.config.schema_tools",
    "ToolPolicyConfig": "core.config.schema_agents",
    "ToolsAgentToAgentConfig": "core.config.schema_tools",
    "ToolsConfig": "core.config.schema_tools",
    "config_secrets": "core.config.loader",
    "dump_masked": "core.config.loader",
    "load_config": "core.config.loader",
    "model_fallbacks": "core.config.schema_base",
    "normalize_account_id": "core.config.schema_base",
    "normalize_agent_id": "core.config.schema_base",
    "primary_model": "core.config.schema_base",
    "secret_value": "core.config.schema_base",
    "validate_config": "core.config.loader",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "CONFIG_ENV_VAR",
    "AccountConfig",
    "AgentConfig",
    "AgentDefaultsConfig",
    "AgentSubagentsConfig",
    "AgentToAgentSessionConfig",
    "AgentsConfig",
    "ChannelsConfig",
    "ConfigError",
    "CrosstalkConfig",
    "DatabaseConfig",
    "DefaultSubagentsConfig",
    "GatewayAuthConfig",
    "GatewayConfig",
    "GroupsConfig",
    "ModelCost",
    "ModelEntry",
    "ModelRef",
    "ModelRefSpec",
    "ModelsConfig",
    "ProviderConfig",
    "SandboxConfig",
    "SendPolicyConfig",
    "SendPolicyMatch",
    "SendPolicyRule",
    "SessionConfig",
    "SessionToolsConfig",
    "SubagentToolsConfig",
    "ToolPolicyConfig",
    "ToolsAgentToAgentConfig",
    "ToolsConfig",
    "config_secrets",
    "dump_masked",
    "load_config",
    "model_fallbacks",
    "normalize_account_id",
    "normalize_agent_id",
    "primary_model",
    "secret_value",
    "validate_config",
]
