"""The pydantic-ai model wrapper every request of a turn passes: it times the request for
`/metrics`, asks the cost gate (D64), and answers for the model once the turn has stopped (D69,
D147). Imported lazily: it pulls in the model stack."""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import asynccontextmanager
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models import (
    CompletedStreamedResponse,
    Model,
    ModelRequestParameters,
    StreamedResponse,
)
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings

from core.features.models.cost_gate import COST_GATE
from core.features.models.providers import ANSWERED
from core.features.models.turn_stop import TURN_STOP

if TYPE_CHECKING:
    from core.engine.observability.metrics import Metrics


Price = Callable[[str, int, int], float | None]
"""USD for one request of a `provider/model` ref with these input and output tokens."""


class TimedModel(WrapperModel):
    """Wraps a turn's model (a single model or a fallback chain named `chain`)."""

    def __init__(self, wrapped: Model, chain: str, metrics: Metrics, price: Price) -> None:
        super().__init__(wrapped)
        self.chain = chain
        self.metrics = metrics
        self.price = price

    @classmethod
    def around(cls, model: Model, chain: str, metrics: Metrics, price: Price) -> Model:
        """The cached wrapper of `model` (rebuilt only when the resolver built a new model)."""
        found = metrics.timed_models.get(chain)
        if not isinstance(found, TimedModel) or found.wrapped is not model:
            found = metrics.timed_models[chain] = cls(model, chain, metrics, price)
        return found

    def _priced(self, response: ModelResponse, ref: str) -> None:
        """The gateway prices requests itself (`costs.py`, D64); pydantic-ai prices every
        response again from its own table unless a cost is set, by a scan of the whole table
        (~2.5% of a turn's CPU), and nothing of ours reads it. So the cost is set here: ours,
        or zero where we know none (a local server costs nothing)."""
        usage = response.usage
        if usage.cost is None:
            cost = self.price(ref, usage.input_tokens or 0, usage.output_tokens or 0)
            usage.cost = Decimal(0) if cost is None else Decimal(repr(cost))

    @staticmethod
    def _stand_in() -> ModelResponse | None:
        """The stand-in answer once the turn has stopped (D147): no provider is asked."""
        stop = TURN_STOP.get()
        if stop is None or stop.answer is None:
            return None
        return ModelResponse(parts=[TextPart(stop.answer)])

    @asynccontextmanager
    async def _timed(self) -> AsyncIterator[None]:
        """Observe one request under the ref that answered it (the chain's, on failure)."""
        answered = ANSWERED.get()
        seen = len(answered) if answered is not None else 0
        t0, outcome = time.perf_counter(), "error"
        try:
            yield
            outcome = "ok"
        finally:
            ref = answered[-1] if answered is not None and len(answered) > seen else self.chain
            self.metrics.model_request(ref, outcome, time.perf_counter() - t0)

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        stand_in = self._stand_in()
        if stand_in is not None:
            return stand_in
        gate = COST_GATE.get()
        if gate is not None:  # D64: a cost limit stops the turn before this request
            await gate.before()
        answered = ANSWERED.get()
        seen = len(answered) if answered is not None else 0
        async with self._timed():
            response = await super().request(messages, model_settings, model_request_parameters)
        ref = answered[-1] if answered is not None and len(answered) > seen else self.chain
        self._priced(response, ref)
        if gate is not None:
            usage = response.usage
            await gate.after(ref, usage.input_tokens or 0, usage.output_tokens or 0)
        return response

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: Any = None,
    ) -> AsyncGenerator[StreamedResponse]:
        stand_in = self._stand_in()
        if stand_in is not None:  # no events: nothing of it is previewed
            yield CompletedStreamedResponse(
                stand_in, model_request_parameters=model_request_parameters
            )
            return
        gate = COST_GATE.get()
        if gate is not None:  # D64
            await gate.before()
        answered = ANSWERED.get()
        seen = len(answered) if answered is not None else 0
        async with (
            self._timed(),
            super().request_stream(
                messages, model_settings, model_request_parameters, run_context
            ) as stream,
        ):
            yield stream
        if gate is not None:
            ref = answered[-1] if answered is not None and len(answered) > seen else self.chain
            usage = stream.usage
            await gate.after(ref, usage.input_tokens or 0, usage.output_tokens or 0)
