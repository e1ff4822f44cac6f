"""A pydantic-ai model wrapper that times every request for `/metrics` (imported lazily:
it pulls in the model stack)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings

if TYPE_CHECKING:
    from core.observability.metrics import Metrics


class TimedModel(WrapperModel):
    def __init__(self, wrapped: Model, ref: str, metrics: Metrics) -> None:
        super().__init__(wrapped)
        self.ref = ref
        self.metrics = metrics

    @classmethod
    def around(cls, model: Model, ref: str, metrics: Metrics) -> Model:
        """The cached wrapper of `model` (rebuilt only when the resolver built a new model)."""
        found = metrics.timed_models.get(ref)
        if not isinstance(found, TimedModel) or found.wrapped is not model:
            found = metrics.timed_models[ref] = cls(model, ref, metrics)
        return found

    async def request(self, messages: list[ModelMessage], model_settings: ModelSettings | None,
                      model_request_parameters: ModelRequestParameters) -> ModelResponse:
        async with self.metrics.model_request(self.ref):
            return await super().request(messages, model_settings, model_request_parameters)

    @asynccontextmanager
    async def request_stream(self, messages: list[ModelMessage],
                             model_settings: ModelSettings | None,
                             model_request_parameters: ModelRequestParameters,
                             run_context: Any = None) -> AsyncGenerator[StreamedResponse]:
        async with (self.metrics.model_request(self.ref),
                    super().request_stream(messages, model_settings, model_request_parameters,
                                           run_context) as stream):
            yield stream
