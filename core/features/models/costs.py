"""What a model request cost in USD, when the price is known.

A model's `cost` in the config (USD per million tokens) wins; otherwise the `genai-prices`
data that pydantic-ai installs, but only for a provider on its vendor's own endpoint (no
`baseUrl`): a local server serving a model under a famous name costs nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from core.config import CrosstalkConfig

log = logging.getLogger(__name__)

_VENDOR_OF_API = {
    "openai-completions": "openai",
    "openai-responses": "openai",
    "anthropic-messages": "anthropic",
    "google-gemini": "google",
}


def request_cost(
    config: CrosstalkConfig, ref: str, input_tokens: int, output_tokens: int
) -> float | None:
    """USD for one request of `ref` (`provider/model`), or None when no price is known."""
    provider_id, _, model_id = ref.partition("/")
    provider = config.models.providers.get(provider_id)
    if provider is None:
        return None
    entry = next((m for m in provider.models if m.id == model_id), None)
    if entry is not None and entry.cost is not None:
        return (input_tokens * entry.cost.input + output_tokens * entry.cost.output) / 1e6
    vendor = _VENDOR_OF_API.get(provider.api)
    if vendor is None or provider.base_url is not None:
        return None
    try:
        from genai_prices import Usage, calc_price

        price = calc_price(
            Usage(input_tokens=input_tokens, output_tokens=output_tokens),
            model_ref=model_id,
            provider_id=vendor,
        )
    except (LookupError, ImportError, ValueError) as exc:
        log.debug("no price for %s: %s", ref, exc)
        return None
    return float(price.total_price)


def run_cost(
    config: CrosstalkConfig, messages: Sequence[Any], answered: list[str], last_ref: str
) -> float | None:
    """Sum of the run's request costs; each model response is priced for the model that gave
    it (`answered`, in order), or `last_ref` when that record is incomplete."""
    from pydantic_ai.messages import ModelResponse

    responses = [m for m in messages if isinstance(m, ModelResponse)]
    refs = answered if len(answered) == len(responses) else [last_ref] * len(responses)
    total: float | None = None
    for response, ref in zip(responses, refs, strict=True):
        cost = request_cost(
            config, ref, response.usage.input_tokens or 0, response.usage.output_tokens or 0
        )
        if cost is None:
            return None
        total = (total or 0.0) + cost
    return total
