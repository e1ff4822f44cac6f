"""Shared building blocks of the config schema: the base model, model references, id rules.

Kept apart from the section models so that every section uses the same strictness and
alias rules, and so that ``schema.py`` stays readable.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    SecretStr,
    Tag,
)
from pydantic.alias_generators import to_camel

from core.model.keys import normalize_account_id, normalize_agent_id

__all__ = [
    "SYNTHETIC_LOC_TAGS",
    "BaseUrl",
    "ConfigModel",
    "IdList",
    "ModelRef",
    "ModelRefSpec",
    "model_fallbacks",
    "normalize_account_id",
    "normalize_agent_id",
    "primary_model",
    "secret_value",
]


class ConfigModel(BaseModel):
    """Base of every config model: unknown keys are errors, camelCase in files, snake_case here.

    ``validate_assignment`` keeps a config that a test or command mutates as valid as one
    that was loaded.
    """

    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        validate_assignment=True,
    )


def secret_value(value: SecretStr | None) -> str | None:
    """Plain text of an optional secret (``None`` stays ``None``).

    Secrets are ``SecretStr`` so that logs and reprs never show them; call this (or
    ``.get_secret_value()``) only where the secret is actually sent somewhere.
    """
    return None if value is None else value.get_secret_value()


# --- ids (normalised by the one key module, core.model.keys) -------------------------------------


def _coerce_id(value: Any) -> Any:
    """YAML turns numeric platform user ids into ints; they are strings to us."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str):
        return value.strip()
    return value


def _not_empty(value: str) -> str:
    if not value:
        raise ValueError("must not be empty")
    return value


# A list of platform ids / patterns; numbers from YAML are accepted as strings.
IdList = list[Annotated[str, BeforeValidator(_coerce_id), AfterValidator(_not_empty)]]


def _http_base_url(value: str) -> str:
    """A provider's ``baseUrl``: http(s), trailing slash dropped so paths join cleanly."""
    text = value.strip()
    if not text.startswith(("http://", "https://")):
        raise ValueError(f"must be an http(s) URL (got {value!r})")
    return text.rstrip("/")


BaseUrl = Annotated[str, AfterValidator(_http_base_url)]


# --- model references ----------------------------------------------------------------------


def _check_model_name(value: str) -> str:
    """Require ``provider/model`` so a typo fails at load time, not at the first run."""
    text = value.strip()
    provider, sep, model = text.partition("/")
    if not sep or not provider.strip() or not model.strip():
        raise ValueError(
            f"model must look like 'provider/model' (got {value!r})",
        )
    return text


ModelName = Annotated[str, AfterValidator(_check_model_name)]

# Tags that pydantic puts into error locations for the ModelRef union; the loader drops
# them so that paths read like the file (``agents.defaults.model.primary``).
_TAG_STR = "model-ref:string"
_TAG_OBJ = "model-ref:object"
SYNTHETIC_LOC_TAGS = frozenset({_TAG_STR, _TAG_OBJ})


class ModelRefSpec(ConfigModel):
    """Object form of a model reference; only ``primary`` is used for sub-agents (R4.4)."""

    primary: ModelName
    fallbacks: list[ModelName] = Field(default_factory=list)


def _model_ref_kind(value: Any) -> str | None:
    if isinstance(value, str):
        return _TAG_STR
    if isinstance(value, dict | ModelRefSpec):
        return _TAG_OBJ
    return None


ModelRef = Annotated[
    Annotated[ModelName, Tag(_TAG_STR)] | Annotated[ModelRefSpec, Tag(_TAG_OBJ)],
    Discriminator(
        _model_ref_kind,
        custom_error_type="model_ref",
        custom_error_message=(
            "Input should be a 'provider/model' string or an object {primary, fallbacks}"
        ),
    ),
]
"""``"provider/model"`` or ``{primary: "provider/model", fallbacks: [...]}``."""


def primary_model(ref: str | ModelRefSpec | None) -> str | None:
    """The ``provider/model`` a reference points at first (``None`` when unset)."""
    if ref is None:
        return None
    if isinstance(ref, str):
        return ref
    return ref.primary


def model_fallbacks(ref: str | ModelRefSpec | None) -> list[str]:
    """Fallback models of a reference; a plain string has none."""
    if isinstance(ref, ModelRefSpec):
        return list(ref.fallbacks)
    return []
