"""Build pydantic-ai models for each provider API, and fallback chains that say who answered.

Provider SDKs are imported here only when a provider of that API is used: `anthropic` and
`google-genai` come with the optional extras `crosstalk[anthropic]` / `crosstalk[google]`,
and a missing one gives an error naming the extra.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from core.model.errors import CrosstalkError

if TYPE_CHECKING:
    from pydantic_ai.models import Model

    from core.config import ProviderConfig

EXTRA_OF_API = {"anthropic-messages": "anthropic", "google-gemini": "google"}
OLLAMA_DEFAULT_URL = "http://127.0.0.1:11434/v1"

ANSWERED: ContextVar[list[str] | None] = ContextVar("crosstalk_answered", default=None)
"""Per turn: the refs whose model answered a request, in order (set by `turn.py`)."""


class MissingExtra(CrosstalkError):
    """A provider's API needs an optional dependency that is not installed."""


def build_model(
    model_id: str,
    cfg: ProviderConfig,
    api_key: str | None,
    *,
    fail_fast: bool = False,
    clients: list[Any] | None = None,
) -> Model:
    """A pydantic-ai model for `model_id` on a provider configured as `cfg`.

    `fail_fast` (a model in a fallback chain): no SDK retries, so an error or a timeout moves
    the chain on at once instead of after the SDK's backoff. The OpenAI SDK clients made for
    it are appended to `clients`, for their owner to close.
    """
    from core.features.models.schema_cache import memoize_tool_schemas

    made = clients if clients is not None else []
    try:
        return memoize_tool_schemas(_build(model_id, cfg, api_key, 0 if fail_fast else None, made))
    except ImportError as exc:
        extra = EXTRA_OF_API.get(cfg.api)
        if extra is None:
            raise
        raise MissingExtra(
            f"models.providers api {cfg.api!r} needs the optional extra: "
            f"pip install 'crosstalk[{extra}]' ({exc})"
        ) from exc


def _build(
    model_id: str,
    cfg: ProviderConfig,
    api_key: str | None,
    max_retries: int | None,
    clients: list[Any],
) -> Model:
    from pydantic_ai.settings import ModelSettings

    settings = ModelSettings(timeout=cfg.timeout_seconds) if cfg.timeout_seconds else None
    if cfg.api == "anthropic-messages":
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        from core.features.models.bounded import bounded_anthropic_client

        http = bounded_anthropic_client(cfg.max_response_bytes, cfg.idle_timeout_seconds)  # D142
        if max_retries is None:
            anthropic = AnthropicProvider(
                api_key=api_key or "none", base_url=cfg.base_url, http_client=http
            )
        else:
            from anthropic import AsyncAnthropic

            anthropic = AnthropicProvider(
                anthropic_client=AsyncAnthropic(
                    api_key=api_key or "none",
                    base_url=cfg.base_url,
                    max_retries=max_retries,
                    http_client=http,
                )
            )
        return AnthropicModel(model_id, settings=settings, provider=anthropic)
    if cfg.api == "google-gemini":
        from pydantic_ai.models.google import GoogleModel
        from pydantic_ai.providers.google import GoogleProvider

        from core.features.models.bounded import bounded_google_client

        return GoogleModel(
            model_id,
            settings=settings,
            provider=GoogleProvider(
                api_key=api_key or "none",
                base_url=cfg.base_url,
                http_client=bounded_google_client(cfg.max_response_bytes, cfg.idle_timeout_seconds),
            ),
        )
    if cfg.api == "ollama":
        from pydantic_ai.models.ollama import OllamaModel
        from pydantic_ai.providers.ollama import OllamaProvider

        base = cfg.base_url or OLLAMA_DEFAULT_URL
        base = base if base.endswith("/v1") else f"{base}/v1"
        return OllamaModel(
            model_id,
            settings=settings,
            provider=OllamaProvider(
                openai_client=_openai_client(base, api_key or "ollama", max_retries, clients, cfg)
            ),
        )
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(
        openai_client=_openai_client(cfg.base_url, api_key or "none", max_retries, clients, cfg)
    )
    if cfg.api == "openai-responses":
        from pydantic_ai.models.openai import OpenAIResponsesModel

        return OpenAIResponsesModel(model_id, provider=provider, settings=settings)
    from pydantic_ai.models.openai import OpenAIChatModel

    return OpenAIChatModel(model_id, provider=provider, settings=settings)


def _openai_client(
    base_url: str | None,
    api_key: str,
    max_retries: int | None,
    clients: list[Any],
    cfg: ProviderConfig,
) -> Any:
    """The SDK's own aiohttp-based client (D51): its httpx2 connection pool cost ~1 ms of CPU
    per request more and queued requests under concurrency; its answers bounded in bytes and
    idle time (D142). Closed by `ModelResolver.aclose`."""
    from openai import AsyncOpenAI

    from core.features.models import openai_fast
    from core.features.models.bounded import bounded_http_client

    openai_fast.install()
    http = bounded_http_client(cfg.max_response_bytes, cfg.idle_timeout_seconds)
    if max_retries is None:
        client = AsyncOpenAI(base_url=base_url, api_key=api_key, http_client=http)
    else:
        client = AsyncOpenAI(
            base_url=base_url, api_key=api_key, max_retries=max_retries, http_client=http
        )
    clients.append(client)
    return client


def _mark(ref: str) -> None:
    answered = ANSWERED.get()
    if answered is not None:
        answered.append(ref)


def tagged(model: Model, ref: str) -> Model:
    """`model`, recording `ref` in :data:`ANSWERED` each time it answers a request."""
    from pydantic_ai.models.wrapper import WrapperModel

    class Tagged(WrapperModel):
        async def request(self, *args: Any, **kwargs: Any) -> Any:
            response = await super().request(*args, **kwargs)
            _mark(ref)
            return response

        @asynccontextmanager
        async def request_stream(self, *args: Any, **kwargs: Any) -> AsyncGenerator[Any]:
            async with super().request_stream(*args, **kwargs) as stream:
                _mark(ref)
                yield stream

    return Tagged(model)


def fallback_chain(models: Sequence[Model]) -> Model:
    """One model that moves to the next on any provider error or timeout."""
    if len(models) == 1:
        return models[0]
    from pydantic_ai.models.fallback import FallbackModel

    return FallbackModel(models[0], *models[1:])
