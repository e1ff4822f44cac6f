"""Tool schemas adapted to a model once, not at every request (D40).

pydantic-ai adapts each tool's JSON schema to the model's profile (strict-mode checks, `$ref`
inlining) at every request: deep copies and walks that cost about a tenth of a turn's CPU and
give the same answer each time, since a tool's schema object is built once (turn.py caches the
Tool objects). The adapted schema is remembered per (schema object, strict) in a bounded LRU
that holds the schema itself, so an id is never reused while its entry lives.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from core.features.models.openai_fast import KNOWN_PLAIN

if TYPE_CHECKING:
    from pydantic_ai.models import Model, ModelRequestParameters
    from pydantic_ai.tools import ToolDefinition

MAX_SCHEMAS = 512


class SchemaMemo:
    """The adapted schema and strictness of each tool schema seen, most recent last."""

    def __init__(self, transformer: Any, limit: int = MAX_SCHEMAS) -> None:
        self.transformer = transformer
        self.limit = limit
        self._memo: OrderedDict[
            tuple[int, bool | None], tuple[dict[str, Any], dict[str, Any], bool]
        ] = OrderedDict()

    def tool(self, tool_def: ToolDefinition) -> ToolDefinition:
        schema = tool_def.parameters_json_schema
        key = (id(schema), tool_def.strict)
        hit = self._memo.get(key)
        if hit is None or hit[0] is not schema:
            walker = self.transformer(schema, strict=tool_def.strict)
            hit = (schema, walker.walk(), walker.is_strict_compatible)
            self._forget(self._memo.pop(key, None))
            self._memo[key] = hit
            KNOWN_PLAIN[id(hit[1])] = hit[1]  # the request body walk may skip it (D40)
            if len(self._memo) > self.limit:
                self._forget(self._memo.popitem(last=False)[1])
        else:
            self._memo.move_to_end(key)
        return dataclasses.replace(
            tool_def,
            parameters_json_schema=hit[1],
            strict=hit[2] if tool_def.strict is None else tool_def.strict,
        )

    def __len__(self) -> int:
        return len(self._memo)

    @staticmethod
    def _forget(entry: tuple[dict[str, Any], dict[str, Any], bool] | None) -> None:
        if entry is not None and KNOWN_PLAIN.get(id(entry[1])) is entry[1]:
            del KNOWN_PLAIN[id(entry[1])]


def memoize_tool_schemas(model: Model) -> Model:
    """Make `model` adapt each distinct tool schema once (pydantic-ai's own path when the model
    has no schema transformer, the request carries an output object, or adapting fails)."""
    transformer = model.profile.get("json_schema_transformer")
    if transformer is None:
        return model
    memo = SchemaMemo(transformer)
    original = model.customize_request_parameters

    def customize(params: ModelRequestParameters) -> ModelRequestParameters:
        if params.output_object is not None:
            return original(params)
        try:
            return dataclasses.replace(
                params,
                function_tools=[memo.tool(t) for t in params.function_tools],
                output_tools=[memo.tool(t) for t in params.output_tools],
            )
        except Exception:  # pydantic-ai's own path words the error (which tool, what to do)
            return original(params)

    model.customize_request_parameters = customize  # type: ignore[method-assign,assignment]
    model.schema_memo = memo  # type: ignore[attr-defined]
    return model
