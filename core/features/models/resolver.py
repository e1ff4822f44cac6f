"""Resolve `provider/model` references to pydantic-ai models, lazily.

pydantic-ai and the OpenAI client take about half a second and ~40 MiB to import, so they are
imported in a thread started by the first turn (D54), never at gateway start.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.config import CrosstalkConfig, ModelRefSpec, model_fallbacks, primary_model
from core.features.models.providers import MissingExtra, build_model, fallback_chain, tagged
from core.model.errors import CrosstalkError

if TYPE_CHECKING:
    from pydantic_ai.models import Model

log = logging.getLogger(__name__)

PROBE_PORTS = ((11434, "ollama"), (8080, "llamacpp"), (1234, "lmstudio"))

NO_MODEL_TEXT = (
    "⚠️ No model is configured, so I can't answer yet. Put a provider in a config file, e.g. "
    "`crosstalk.yaml` for a local Ollama:\n\n"
    "```yaml\n"
    "models:\n  providers:\n    local:\n      baseUrl: http://127.0.0.1:11434/v1\n"
    "agents:\n  defaults:\n    model: local/llama3.2\n"
    "```\n\n"
    "and restart with `./scripts/run --config crosstalk.yaml`; or start an OpenAI-compatible "
    "server (Ollama, llama.cpp, LM Studio) on this machine and restart the gateway. Commands "
    "such as /status and /send keep working meanwhile."
)
"""Markdown: the YAML in a fenced block, so every channel shows it as it must be typed (D132).
Stored as a notice that no model ever reads as history."""


class ModelNotAvailable(CrosstalkError):
    """The reference names no configured provider or model."""


@dataclass(frozen=True, slots=True)
class ProbedProvider:
    name: str
    base_url: str
    model: str


class ModelResolver:
    def __init__(self, config: CrosstalkConfig) -> None:
        self.config = config
        self._cache: dict[str, Model] = {}
        self._clients: list[Any] = []  # the SDK clients of the cached models, closed at the end
        self.probed: ProbedProvider | None = None

    def _spec(self, agent_id: str) -> str | ModelRefSpec | None:
        agent = self.config.agent(agent_id)
        return agent.model if agent and agent.model else self.config.agents.defaults.model

    def default_ref(self, agent_id: str) -> str | None:
        ref = primary_model(self._spec(agent_id))
        if ref is None and self.probed is not None:
            ref = f"{self.probed.name}/{self.probed.model}"
        return ref

    def refs_for(self, agent_id: str, override: str | None = None) -> list[str]:
        """The models a turn tries, in order: an explicit (session/spawn) model alone, else the
        agent's `{primary, fallbacks}` chain. Empty when nothing is configured."""
        if override:
            return [override]
        primary = self.default_ref(agent_id)
        if primary is None:
            return []
        return [primary, *model_fallbacks(self._spec(agent_id))]

    def chain(self, refs: list[str]) -> Model:
        """One model for `refs`: the first, falling back to the next on a provider error."""
        return fallback_chain([self.get(r, fail_fast=len(refs) > 1) for r in refs])

    def is_known(self, ref: str) -> bool:
        """True when `ref` names a configured provider (and a listed model, if it lists any)."""
        provider_id, _, model_id = ref.partition("/")
        if self.probed is not None and provider_id == self.probed.name:
            return bool(model_id)
        provider = self.config.models.providers.get(provider_id)
        if provider is None or not model_id:
            return False
        return not provider.models or any(m.id == model_id for m in provider.models)

    def get(self, ref: str, *, fail_fast: bool = False) -> Model:
        key = f"{ref}|fallback" if fail_fast else ref
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        if not self.is_known(ref):
            raise ModelNotAvailable(f"invalid model: {ref}")
        provider_id, _, model_id = ref.partition("/")
        if self.probed is not None and provider_id == self.probed.name:
            from core.config import ProviderConfig

            cfg = ProviderConfig(base_url=self.probed.base_url)
            api_key: str | None = "local"
        else:
            cfg = self.config.models.providers[provider_id]
            api_key = _secret(cfg.api_key)
        try:
            model = tagged(
                build_model(model_id, cfg, api_key, fail_fast=fail_fast, clients=self._clients), ref
            )
        except MissingExtra as exc:
            raise ModelNotAvailable(str(exc)) from exc
        self._cache[key] = model
        return model

    async def aclose(self) -> None:
        """Close the models' HTTP clients (their connection pools); the models are dropped,
        so a later turn builds new ones."""
        clients, self._clients = self._clients, []
        self._cache.clear()
        for client in clients:
            try:
                await client.close()
            except Exception:  # a pool that fails to close must not stop the shutdown
                log.exception("closing a model client failed")

    async def probe_loopback(self, timeout: float = 0.4) -> ProbedProvider | None:
        """Look for a local OpenAI-compatible server when no provider is configured."""
        if self.config.models.providers:
            return None
        import aiohttp

        async def one(port: int, name: str) -> ProbedProvider | None:
            url = f"http://127.0.0.1:{port}/v1"
            try:
                async with (
                    aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as http,
                    http.get(f"{url}/models") as resp,
                ):
                    if resp.status != 200:
                        return None
                    data = await resp.json(content_type=None)
                    models = [m.get("id") for m in data.get("data", []) if m.get("id")]
                    return ProbedProvider(name, url, models[0]) if models else None
            except (OSError, TimeoutError, ValueError, aiohttp.ClientError):
                return None

        found = await asyncio.gather(*(one(p, n) for p, n in PROBE_PORTS))
        self.probed = next((f for f in found if f), None)
        if self.probed:
            log.info("using local model server %s (%s)", self.probed.base_url, self.probed.model)
        return self.probed


OPENAI_CLIENT_APIS = frozenset({"openai-completions", "openai-responses", "ollama"})
"""Provider APIs whose models talk through the OpenAI SDK's client (D51)."""


def _uses_openai_clients(config: CrosstalkConfig | None) -> bool:
    """Whether a model of `config` may need the OpenAI clients' TLS context: a provider on
    the SDK's client, or none at all (a probed local server speaks the OpenAI API)."""
    if config is None or not config.models.providers:
        return True
    return any(p.api in OPENAI_CLIENT_APIS for p in config.models.providers.values())


def _secret(value: Any) -> str | None:
    if value is None:
        return None
    getter = getattr(value, "get_secret_value", None)
    return str(getter()) if getter else str(value)


def warm_up_imports(config: CrosstalkConfig | None = None) -> None:
    """Import the model stack (in a thread, started by the first turn: D54).

    Turns wait for this to finish: two threads importing the same package can see each
    other's half-initialised modules.
    """
    import gc

    collecting = gc.isenabled()
    gc.disable()  # D55: an import only allocates; collections would scan it all again and again
    try:
        _import_model_stack(config)
    finally:
        if collecting:
            gc.enable()


def _import_model_stack(config: CrosstalkConfig | None) -> None:
    from core.features.models import tls

    beside = tls.build_beside() if _uses_openai_clients(config) else None  # D193
    import pydantic_ai.models.fallback
    import pydantic_ai.models.openai
    import pydantic_ai.models.wrapper
    import pydantic_ai.providers.openai  # noqa: F401
    from anyio._backends import _asyncio  # noqa: F401  (the first task group would import it)
    from genai_prices.data_snapshot import get_snapshot

    from core.features.models import openai_fast

    openai_fast.install()
    get_snapshot()  # the price table (~0.15 s) that the first model built would load on the loop
    import prometheus_client  # noqa: F401  (the first turn's first metric sample would: D56, D193)

    apis = {p.api for p in config.models.providers.values()} if config else set()
    for api, module in (
        ("anthropic-messages", "pydantic_ai.models.anthropic"),
        ("google-gemini", "pydantic_ai.models.google"),
        ("ollama", "pydantic_ai.models.ollama"),
    ):
        if api in apis:
            try:
                __import__(module)
            except ImportError:
                log.warning("provider api %s: its optional extra is not installed", api)
    if beside is not None:
        beside.join()  # long done: it takes ~0.05 s, the imports ~0.6 s
    from core.features.models import heap

    heap.settle()  # D50: the gateway's start-up objects leave the collector's walk
