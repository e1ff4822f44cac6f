"""Tool schemas are adapted to a model once and give what pydantic-ai gives each time (D40)."""

from __future__ import annotations

from typing import Any

from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.tools import ToolDefinition

from core.config import ProviderConfig
from core.features.models.providers import build_model
from core.features.models.schema_cache import SchemaMemo

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "q": {"type": "string"},
        "n": {"type": "integer", "default": 3},
        "tags": {"type": "array", "items": {"$ref": "#/$defs/Tag"}},
    },
    "required": ["q"],
    "$defs": {"Tag": {"type": "object", "properties": {"t": {"type": "string"}}}},
}


def params() -> ModelRequestParameters:
    return ModelRequestParameters(
        function_tools=[
            ToolDefinition(name="lookup", parameters_json_schema=SCHEMA, description="d"),
            ToolDefinition(name="strict", parameters_json_schema=SCHEMA, strict=True),
        ]
    )


def model() -> Model:
    return build_model("m", ProviderConfig(base_url="http://127.0.0.1:9/v1"), "k")


def test_memoized_tools_equal_pydantic_ais_own() -> None:
    memoized = model()
    own = Model.customize_request_parameters(memoized, params())
    for _ in range(3):
        assert memoized.customize_request_parameters(params()).function_tools == own.function_tools
    memo: SchemaMemo = memoized.schema_memo  # type: ignore[attr-defined]
    assert len(memo) == 2  # one per (schema, strict), whatever the number of requests


def test_memo_is_bounded_and_never_serves_another_schema() -> None:
    memo: SchemaMemo = model().schema_memo  # type: ignore[attr-defined]
    memo.limit = 4
    for i in range(10):
        schema = {"type": "object", "properties": {f"p{i}": {"type": "string"}}}
        out = memo.tool(ToolDefinition(name=f"t{i}", parameters_json_schema=schema))
        assert list(out.parameters_json_schema["properties"]) == [f"p{i}"]
    assert len(memo) == 4


def test_adapted_schemas_are_known_plain_while_memoized_only() -> None:
    from core.features.models.openai_fast import KNOWN_PLAIN, plain

    memo: SchemaMemo = model().schema_memo  # type: ignore[attr-defined]
    memo.limit = 2
    first = memo.tool(ToolDefinition(name="a", parameters_json_schema=dict(SCHEMA)))
    walked = first.parameters_json_schema
    assert KNOWN_PLAIN.get(id(walked)) is walked
    assert plain({"parameters": walked})["parameters"] == walked
    for i in range(2):  # evicts the first
        memo.tool(ToolDefinition(name=f"t{i}", parameters_json_schema={"type": "object"}))
    assert id(walked) not in KNOWN_PLAIN or KNOWN_PLAIN[id(walked)] is not walked
