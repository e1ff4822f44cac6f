"""Reading the config file: parse, expand ``${VAR}``, apply env overrides, validate.

Every problem becomes one ``<dotted.path>: <reason>`` line of a ``ConfigError``, with the
path spelled as in the file, so ``crosstalk config check`` can print it as is.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from pydantic import SecretStr, ValidationError

from core.config.checks import alias_cycle
from core.config.schema import CrosstalkConfig
from core.config.schema_base import SYNTHETIC_LOC_TAGS
from core.model.errors import CrosstalkError

if TYPE_CHECKING:
    import yaml

__all__ = ["CONFIG_ENV_VAR", "ConfigError", "dump_masked", "load_config", "validate_config"]

logger = logging.getLogger(__name__)

CONFIG_ENV_VAR = "CROSSTALK_CONFIG"
MASK = "***"

# (env var, path as aliases, snake_case name of the leaf) — always override the file.
_OVERRIDES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("CROSSTALK_STATE_DIR", ("gateway", "stateDir"), "state_dir"),
    ("CROSSTALK_GATEWAY_TOKEN", ("gateway", "auth", "token"), "token"),
    ("CROSSTALK_GATEWAY_PORT", ("gateway", "port"), "port"),
    ("CROSSTALK_GATEWAY_BIND", ("gateway", "bind"), "bind"),
    ("CROSSTALK_DATABASE_URL", ("gateway", "database", "url"), "url"),
)

# ``$${X}`` is an escaped literal ``${X}``; ``${X}`` is a reference.
_ENV_REF = re.compile(r"\$(\$?)\{([A-Za-z_][A-Za-z0-9_]*)\}")


class ConfigError(CrosstalkError):
    """Invalid or unreadable configuration; ``str()`` is one ``path: reason`` line per problem."""

    def __init__(self, problems: list[str], source: Path | None = None) -> None:
        self.problems = list(problems)
        self.source = source
        super().__init__("\n".join(self.problems))


# --- reading -------------------------------------------------------------------------------


def _parse_file(path: Path) -> dict[str, Any]:
    """Parse YAML or JSON5 by suffix; errors name the file and, when known, the line."""
    suffix = path.suffix.lower()
    if suffix not in (".yaml", ".yml", ".json", ".json5"):
        raise ConfigError(
            [
                f"{path}: unsupported config file type {suffix or '(none)'!r} "
                "(use .yaml, .yml, .json or .json5)"
            ],
            path,
        )
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError([f"{path}: config file not found"], path) from None
    except UnicodeDecodeError:
        raise ConfigError([f"{path}: config file is not valid UTF-8"], path) from None
    except OSError as exc:
        raise ConfigError([f"{path}: cannot read config file ({exc.strerror})"], path) from None

    data: Any
    if suffix in (".yaml", ".yml"):
        import yaml  # parsers imported for the format in use (D56)

        from core.config.yaml_unique import load_unique

        try:
            data = load_unique(text)  # a key twice in one mapping is an error (D135)
        except yaml.YAMLError as exc:
            raise ConfigError([_yaml_error(path, exc)], path) from None
        cycle = alias_cycle(data)
        if cycle is not None:
            raise ConfigError(
                [f"{cycle}: recursive YAML alias (the value contains itself) in {path}"], path
            )
    else:
        import json5

        try:
            data = json5.loads(text, allow_duplicate_keys=False)  # D135
        except ValueError as exc:
            message = str(exc).replace("<string>:", f"{path}:", 1)
            if not message.startswith(str(path)):
                message = f"{path}: {message}"
            raise ConfigError([f"{message} (JSON5 parse error)"], path) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            [f"{path}: the top level must be a mapping, not {type(data).__name__}"],
            path,
        )
    return data


def _yaml_error(path: Path, exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    reason = f"{context}; {problem}" if context else problem
    if mark is not None:
        return f"{path}:{mark.line + 1}:{mark.column + 1}: YAML parse error: {reason}"
    return f"{path}: YAML parse error: {reason}"


# --- ${VAR} expansion and env overrides ------------------------------------------------------


def _expand(value: Any, env: Mapping[str, str], path: tuple[str, ...], problems: list[str]) -> Any:
    """Replace ``${VAR}`` in every string value; missing variables are collected as problems."""
    if isinstance(value, dict):
        return {k: _expand(v, env, (*path, str(k)), problems) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(v, env, (*path, str(i)), problems) for i, v in enumerate(value)]
    if not isinstance(value, str) or "${" not in value:
        return value

    def replace(match: re.Match[str]) -> str:
        escaped, name = match.group(1), match.group(2)
        if escaped:
            return "${" + name + "}"
        if name not in env:
            problems.append(
                f"{_dotted(path)}: environment variable {name} is not set (referenced as "
                f"${{{name}}})",
            )
            return ""
        return env[name]

    return _ENV_REF.sub(replace, value)


def _child_dict(parent: dict[str, Any], key: str) -> dict[str, Any] | None:
    """The mapping at ``parent[key]``, created when absent/null; ``None`` if it is not one."""
    child = parent.get(key)
    if child is None:
        child = parent[key] = {}
    return child if isinstance(child, dict) else None


def _apply_env_overrides(raw: dict[str, Any], env: Mapping[str, str]) -> dict[tuple[str, ...], str]:
    """Apply env overrides in place; returns which paths came from which variable."""
    sources: dict[tuple[str, ...], str] = {}
    for var, path, snake in _OVERRIDES:
        value = env.get(var, "").strip()
        if not value:
            continue
        node: dict[str, Any] | None = raw
        for key in path[:-1]:
            node = _child_dict(node, key) if node is not None else None
        if node is None:
            continue  # the file has a non-mapping there; validation reports it
        node.pop(snake, None)
        node[path[-1]] = value
        sources[path] = var

    channels = raw.get("channels")
    for var, channel, alias, snake in _channel_fills():
        value = env.get(var, "").strip()
        section = channels.get(channel) if isinstance(channels, dict) else None
        if not value or not isinstance(section, dict):
            continue
        if section.get(alias) or section.get(snake):
            continue  # the file sets it; the file wins
        section.pop(snake, None)
        section[alias] = value
        sources[("channels", channel, alias)] = var
    return sources


def _channel_fills() -> list[tuple[str, str, str, str]]:
    """(env var, channel, field alias, snake_case name) from the installed channels' specs
    (D94): each fills only an existing section's gaps."""
    from core.config.channel_registry import installed_channels

    out: list[tuple[str, str, str, str]] = []
    for name, spec in installed_channels().items():
        for var, snake in spec.env:
            field = spec.config_model.model_fields.get(snake)
            alias = field.alias if field is not None and field.alias else snake
            out.append((var, name, alias, snake))
    return out


# --- validation ----------------------------------------------------------------------------


def _dotted(path: tuple[str, ...] | tuple[int | str, ...]) -> str:
    return ".".join(str(p) for p in path) if path else "(root)"


def _error_lines(exc: ValidationError, sources: Mapping[tuple[str, ...], str]) -> list[str]:
    lines: list[str] = []
    for error in exc.errors(include_url=False):
        raw_loc = error["loc"]
        loc = tuple(str(p) for p in raw_loc if p not in SYNTHETIC_LOC_TAGS and p != "[key]")
        kind = error["type"]
        if "[key]" in raw_loc:
            reason = f"invalid key: {error['msg']}"
        elif kind == "extra_forbidden":
            reason = "unknown key"
        elif kind == "missing":
            reason = "required"
        else:
            reason = error["msg"].removeprefix("Value error, ")
        for path, var in sources.items():
            if loc[: len(path)] == path:
                reason += f" (from environment variable {var})"
                break
        line = f"{_dotted(loc)}: {reason}"
        if line not in lines:
            lines.append(line)
    return lines


def validate_config(raw: Mapping[str, Any]) -> CrosstalkConfig:
    """Validate an already parsed mapping (no env handling) into a config or a ConfigError."""
    return _validate(raw, {})


def _validate(raw: Mapping[str, Any], sources: Mapping[tuple[str, ...], str]) -> CrosstalkConfig:
    try:
        return CrosstalkConfig.model_validate(dict(raw))
    except ValidationError as exc:
        raise ConfigError(_error_lines(exc, sources)) from None


def load_config(
    path: str | Path | None = None,
    env: Mapping[str, str] = os.environ,
) -> CrosstalkConfig:
    """Load the effective config: file (argument, else ``$CROSSTALK_CONFIG``, else none),
    ``${VAR}`` expansion, env overrides, validation. Raises ``ConfigError``.
    """
    if path is None and env.get(CONFIG_ENV_VAR, "").strip():
        path = env[CONFIG_ENV_VAR].strip()
    source = Path(path).expanduser() if path is not None else None
    raw: dict[str, Any] = _parse_file(source) if source is not None else {}

    problems: list[str] = []
    expanded = _expand(raw, env, (), problems)
    if problems:
        raise ConfigError(problems, source)
    sources = _apply_env_overrides(expanded, env)
    try:
        config = _validate(expanded, sources)
    except ConfigError as exc:
        raise ConfigError(exc.problems, source) from None
    logger.debug("loaded config from %s", source or "defaults")
    return config


# --- masking -------------------------------------------------------------------------------


def _mask_url_password(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{parts.username or ''}:{MASK}@{parts.hostname or ''}"
    if parts.port is not None:
        netloc += f":{parts.port}"
    return urlunsplit(parts._replace(netloc=netloc))


def _mask(value: Any) -> Any:
    if isinstance(value, SecretStr):
        return MASK
    if isinstance(value, dict):
        return {k: _mask(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v) for v in value]
    return value


def config_secrets(config: CrosstalkConfig) -> list[str]:
    """Every secret in the config (tokens, keys, passwords, the database URL's password), for
    the log filter that keeps them out of every line at every level (D143)."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, SecretStr):
            found.append(value.get_secret_value())
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(config.model_dump(mode="python"))
    url = config.gateway.database.url
    if isinstance(url, str) and urlsplit(url).password:
        found.append(str(urlsplit(url).password))
    return sorted({s for s in found if len(s) >= 6}, key=len, reverse=True)


def dump_masked(config: CrosstalkConfig) -> dict[str, Any]:
    """The effective config by alias, secrets shown as ``***`` (unset ones stay ``None``).

    A password inside ``gateway.database.url`` is masked too.
    """
    dumped: dict[str, Any] = _mask(config.model_dump(by_alias=True, mode="python"))
    database = dumped["gateway"]["database"]
    if isinstance(database.get("url"), str):
        database["url"] = _mask_url_password(database["url"])
    return dumped
