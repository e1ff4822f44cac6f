"""The cheaper chat-completions body transform gives what the SDK's own gives (D40)."""

from __future__ import annotations

from typing import Any

from openai import NOT_GIVEN, omit
from openai._utils._transform import async_maybe_transform
from openai.types.beta import response_create_params
from openai.types.chat import completion_create_params

from core.engine.runs import RunRequest
from core.features.models import openai_fast
from tests.conftest import RuntimeFactory
from tests.fakes.model import FakeModelServer, text

SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "q": {"type": "string", "description": "query"},
        "opts": {"type": "array", "items": {"anyOf": [{"type": "integer"}, {"type": "null"}]}},
    },
    "required": ["q"],
}


def body() -> dict[str, Any]:
    return {
        "model": "m",
        "stream": False,
        "service_tier": omit,
        "temperature": NOT_GIVEN,
        "messages": [
            {"role": "system", "content": "be brief"},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "look"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                ],
            },
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "lookup", "arguments": '{"q": "x"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "found"},
            {"role": "user", "content": "thanks"},
        ],
        "tools": (
            {
                "type": "function",
                "function": {
                    "name": "lookup",
                    "description": "d",
                    "parameters": SCHEMA,
                    "strict": True,
                },
            },
        ),
        "tool_choice": "auto",
        "stream_options": {"include_usage": True},
    }


async def test_plain_body_is_what_the_sdk_transform_gives() -> None:
    for params in (
        completion_create_params.CompletionCreateParamsNonStreaming,
        completion_create_params.CompletionCreateParamsStreaming,
    ):
        expected = await async_maybe_transform(body(), params)
        assert openai_fast.plain(body()) == expected


def test_chat_params_declare_no_alias_but_a_declaring_type_is_seen() -> None:
    assert not openai_fast._declares_transform(
        completion_create_params.CompletionCreateParamsNonStreaming, set()
    )
    assert openai_fast._declares_transform(response_create_params.ResponseCreateParamsBase, set())


async def test_installed_transform_serves_chat_and_defers_otherwise() -> None:
    from openai.resources.chat.completions import completions

    assert openai_fast.install()
    assert openai_fast.install()  # idempotent
    module: Any = completions  # the SDK module whose transform install() replaced
    out = await module.async_maybe_transform(
        body(), completion_create_params.CompletionCreateParamsNonStreaming
    )
    assert "temperature" not in out and isinstance(out["tools"], list)
    other = await module.async_maybe_transform({"metadata": {"a": "b"}, "x": omit}, dict)
    assert other == {"metadata": {"a": "b"}, "x": omit}  # not a chat-params type: SDK's own


def test_body_serialiser_writes_the_sdks_bytes_with_kept_schema_text() -> None:
    """D197: a chat body with known tool schemas is written byte for byte as the SDK writes it,
    each schema from the text kept at its first request; other bodies are the SDK's own."""
    from openai._utils._json import _CustomEncoder, openapi_dumps

    enc = _CustomEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
    dumps = openai_fast.body_dumps(openapi_dumps, enc)
    schema = {**SCHEMA, "description": 'ümlaut \u2028 "quoted"'}
    chat = openai_fast.plain(body())
    chat["tools"][0]["function"]["parameters"] = schema
    chat["messages"].append({"role": "user", "content": "é\n", "n": [1.5, None, False]})
    openai_fast.KNOWN_PLAIN[id(schema)] = schema
    try:
        assert dumps(chat) == openapi_dumps(chat)
        assert openai_fast.KNOWN_JSON[id(schema)] == enc(schema)  # kept at the first body
        assert dumps(chat) == openapi_dumps(chat)  # and written from it
    finally:
        openai_fast.forget(schema)
    assert id(schema) not in openai_fast.KNOWN_JSON
    for other in ({"input": "x"}, [1, 2], {"tools": ({"a": 1},)}, {1: "x", "tools": []}):
        assert dumps(other) == openapi_dumps(other)


def test_installed_serialiser_writes_the_sdks_bytes() -> None:
    from openai import _base_client
    from openai._utils._json import openapi_dumps

    assert openai_fast.install()
    installed = vars(_base_client)["openapi_dumps"]  # the one the SDK calls
    assert installed is not openapi_dumps
    chat = openai_fast.plain(body())
    schema = chat["tools"][0]["function"]["parameters"]
    openai_fast.KNOWN_PLAIN[id(schema)] = schema
    try:
        assert installed(chat) == openapi_dumps(chat)
    finally:
        openai_fast.forget(schema)


async def test_kept_schema_texts_still_match_their_schemas_after_turns(
    make_runtime: RuntimeFactory, fake_model: FakeModelServer
) -> None:
    """D197 holds only while nothing changes an adapted schema after its text was kept: turns
    with tools leave every kept text equal to a fresh encoding of its schema."""
    from openai._utils._json import _CustomEncoder

    rt = await make_runtime()
    entry = await rt.services.ensure_session("agent:main:main")
    fake_model.script(*[text(f"r{i}") for i in range(3)])
    for i in range(3):
        run = await rt.runs.submit(RunRequest(entry.key, f"m{i}", rt.services.context_for(entry)))
        assert (await rt.runs.wait(run.id, 10)).status == "ok"
    enc = _CustomEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
    assert fake_model.requests[-1]["tools"] and openai_fast.KNOWN_JSON
    for key, kept in openai_fast.KNOWN_JSON.items():
        assert enc(openai_fast.KNOWN_PLAIN[key]) == kept
