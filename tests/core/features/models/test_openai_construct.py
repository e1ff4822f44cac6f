"""The SDK's URL preparation answered from a cache (D200) and its response construction decided
once per type (D201) give what the SDK's own give; their checks refuse an SDK that differs."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from httpx2 import URL
from openai import AsyncOpenAI, omit
from openai import _base_client as client
from openai import _models as sdk
from openai.types import CreateEmbeddingResponse, Model
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from core.features.models import openai_construct, openai_fast

SAMPLES: list[tuple[object, Any]] = [
    (ChatCompletion, openai_construct.SAMPLE),
    (ChatCompletion, {"id": "x", "choices": [], "created": 1.5, "usage": None, "model": 3}),
    (ChatCompletion, {"choices": [{"message": "not a mapping", "finish_reason": "length"}]}),
    (
        ChatCompletionChunk,
        {"id": "c", "choices": [{"delta": {"content": "h", "tool_calls": [{"index": 0}]}}]},
    ),
    (CreateEmbeddingResponse, {"data": [{"embedding": [1, 0.5], "index": 0}], "usage": {}}),
    (Model, {"id": "m", "created": 1, "owned_by": "o", "extra": [1, {"a": None}]}),
    (list[ChatCompletion], [{"id": "a"}, "b"]),
    (dict[str, Model], {"k": {"id": "m"}, "j": None}),
]


def sdk_built(type_: object, value: object) -> object:
    """What the SDK's own functions make of `value` (ours set aside for the call)."""
    assert openai_fast.install() and openai_construct.ORIGINALS
    ours_type, ours = sdk.construct_type, vars(sdk.BaseModel)["construct"]
    sdk.construct_type = openai_construct.ORIGINALS["construct_type"]
    setattr(sdk.BaseModel, "construct", openai_construct.ORIGINALS["construct"])  # noqa: B010
    try:
        return sdk.construct_type(value=copy.deepcopy(value), type_=type_)
    finally:
        sdk.construct_type = ours_type
        setattr(sdk.BaseModel, "construct", ours)  # noqa: B010


@pytest.mark.parametrize(("type_", "value"), SAMPLES)
def test_responses_are_constructed_as_the_sdk_constructs_them(type_: object, value: Any) -> None:
    want = sdk_built(type_, value)
    got = sdk.construct_type(value=copy.deepcopy(value), type_=type_)
    assert sdk.construct_type is openai_construct.ORIGINALS["ours"]
    assert vars(client)["construct_type"] is sdk.construct_type  # the one responses use
    assert openai_construct.same(want, got)
    if isinstance(want, ChatCompletion) and isinstance(got, ChatCompletion):
        assert want.model_dump() == got.model_dump() and want == got


def test_the_check_refuses_an_sdk_that_constructs_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An SDK whose construction differs on the sample (here: a response's fields all unset)
    keeps its own functions."""
    assert openai_fast.install()
    original = openai_construct.ORIGINALS["construct_type"]

    def changed(*, value: object, type_: object, metadata: Any = None) -> object:
        made = original(value=value, type_=type_, metadata=metadata)
        if isinstance(made, ChatCompletion):
            object.__setattr__(made, "__pydantic_fields_set__", set())
        return made

    monkeypatch.setattr(sdk, "construct_type", changed)
    monkeypatch.setattr(client, "construct_type", changed)
    monkeypatch.setattr(sdk.BaseModel, "construct", openai_construct.ORIGINALS["construct"])
    monkeypatch.setattr(sdk.BaseModel, "model_construct", openai_construct.ORIGINALS["construct"])
    monkeypatch.setattr(openai_construct, "ORIGINALS", {})
    assert not openai_construct.install()
    assert sdk.construct_type is changed and vars(client)["construct_type"] is changed
    assert not openai_construct.ORIGINALS


async def test_prepared_urls_are_the_sdks_and_follow_a_new_base_url() -> None:
    assert openai_fast.install()
    prepare = vars(client.BaseClient)["_prepare_url"]
    assert prepare.__name__ == "prepare_url"  # D200's
    async with AsyncOpenAI(api_key="k", base_url="http://127.0.0.1:9/v1") as api:
        first = api._prepare_url("/chat/completions")
        assert str(first) == "http://127.0.0.1:9/v1/chat/completions"
        assert api._prepare_url("/chat/completions") is first
        assert str(api._prepare_url("https://elsewhere.example/x?q=1")) == (
            "https://elsewhere.example/x?q=1"
        )
        api.base_url = URL("http://127.0.0.1:9/v2/")
        assert str(api._prepare_url("/chat/completions")) == (
            "http://127.0.0.1:9/v2/chat/completions"
        )


def test_the_url_check_refuses_an_sdk_whose_urls_depend_on_more(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An SDK whose `_prepare_url` takes more than the path, or answers a fresh URL that differs
    at each call, keeps its own."""
    calls: list[str] = []

    def more(self: Any, url: str, options: object = None) -> URL:
        return URL(url)

    def drifting(self: Any, url: str) -> URL:
        calls.append(url)
        base: URL = self.base_url
        return base.copy_with(raw_path=f"/{len(calls)}".encode())

    for changed in (more, drifting):
        monkeypatch.setattr(client.BaseClient, "_prepare_url", changed)
        assert not openai_fast._install_url_cache()
        assert vars(client.BaseClient)["_prepare_url"] is changed


def options(**extra: Any) -> Any:
    from openai._models import FinalRequestOptions

    body = {"model": "m", "messages": [{"role": "user", "content": "é \u2028"}], "n": 1.5}
    fields: dict[str, Any] = {
        "method": "post",
        "url": "/chat/completions",
        "json_data": body,
        "headers": {"User-Agent": "x"},
    }
    return FinalRequestOptions.construct(**{**fields, **extra})


async def test_requests_are_built_as_the_sdk_builds_them() -> None:
    """D202: plain JSON POSTs (checked at the first) and every other shape send the very
    request the SDK's own `_build_request` makes."""
    from httpx2 import Timeout

    from core.features.models import openai_request

    sdk_build = vars(client.BaseClient)["_build_request"]
    builder = openai_request.request_builder(sdk_build)
    shapes = [
        options(),
        options(idempotency_key="k1", timeout=Timeout(3.0), headers={"X-A": "b"}),
        options(extra_json={"z": 1}),
        options(params={"q": "1"}),
        options(method="get", json_data=None),
        options(json_data=b"raw"),
        options(headers={"X-Name": "ü"}),
        options(headers={"X-Name": "plain", "X-Gone": omit}),
    ]
    async with AsyncOpenAI(api_key="k", base_url="http://127.0.0.1:9/v1") as api:
        for retries in (0, 2):
            for shape in shapes:
                try:
                    theirs = sdk_build(api, shape, retries_taken=retries)
                except Exception as exc:  # e.g. a header the SDK cannot encode: ours neither
                    with pytest.raises(type(exc)):
                        builder(api, shape, retries_taken=retries)
                    continue
                ours = builder(api, shape, retries_taken=retries)
                assert openai_request.same_request(ours, theirs)
                assert ours.headers.multi_items() == theirs.headers.multi_items()
    closure = dict(zip(builder.__code__.co_freevars, builder.__closure__ or (), strict=True))
    assert closure["state"].cell_contents == {"checked": True, "refused": False}


async def test_request_building_refuses_an_sdk_that_builds_otherwise() -> None:
    """An SDK whose request differs from ours at the first plain POST (here: one more header)
    is answered with its own request then and ever after."""
    from core.features.models import openai_request

    sdk_build = vars(client.BaseClient)["_build_request"]

    def changed(self: Any, options: Any, *, retries_taken: int = 0) -> Any:
        built = sdk_build(self, options, retries_taken=retries_taken)
        built.headers["x-new"] = "1"
        return built

    builder = openai_request.request_builder(changed)
    async with AsyncOpenAI(api_key="k", base_url="http://127.0.0.1:9/v1") as api:
        for _ in range(2):
            assert builder(api, options()).headers["x-new"] == "1"
