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

from core.features.models.openai_fast import KNOWN_PLAIN, forget

if TYPE_CHECKING:
    from pydantic_ai.models import Model, ModelRequestParameters
    from pydantic_ai.tools import ToolDefinition

MAX_SCHEMAS = 512


@dataclasses.dataclass(slots=True)
class _Adapted:
    schema: dict[str, Any]
    """The tool's own schema, held so its id is never reused while the entry lives."""
    adapted: dict[str, Any]
    strict: bool
    last: tuple[ToolDefinition, ToolDefinition] | None = None
    """The definition last adapted, and what it became."""


class SchemaMemo:
    """The adapted definition of each tool schema seen, most recent last.

    pydantic-ai hands over a new but equal definition of each tool at every request; comparing
    it with the one last adapted (a generated `__eq__`, the schema compared by identity first)
    costs far less than copying it again (D147)."""

    def __init__(self, transformer: Any, limit: int = MAX_SCHEMAS) -> None:
        self.transformer = transformer
        self.limit = limit
        self._memo: OrderedDict[tuple[int, bool | None], _Adapted] = OrderedDict()

    def tool(self, tool_def: ToolDefinition) -> ToolDefinition:
        schema = tool_def.parameters_json_schema
        key = (id(schema), tool_def.strict)
        hit = self._memo.get(key)
        if hit is None or hit.schema is not schema:
            walker = self.transformer(schema, strict=tool_def.strict)
            hit = _Adapted(schema, walker.walk(), walker.is_strict_compatible)
            self._forget(self._memo.pop(key, None))
            self._memo[key] = hit
            KNOWN_PLAIN[id(hit.adapted)] = hit.adapted  # the request body walk may skip it (D40)
            if len(self._memo) > self.limit:
                self._forget(self._memo.popitem(last=False)[1])
        else:
            self._memo.move_to_end(key)
            if hit.last is not None and hit.last[0] == tool_def:
                return hit.last[1]
        adapted = dataclasses.replace(
            tool_def,
            parameters_json_schema=hit.adapted,
            strict=hit.strict if tool_def.strict is None else tool_def.strict,
        )
        hit.last = (tool_def, adapted)
        return adapted

    def __len__(self) -> int:
        return len(self._memo)

    @staticmethod
    def _forget(entry: _Adapted | None) -> None:
        if entry is not None:
            forget(entry.adapted)


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
