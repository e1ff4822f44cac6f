"""A cheaper request-body transform for the openai SDK's `chat.completions.create` (D40).

The SDK walks every request body against its TypedDict annotations to apply key aliases and
value formats (`PropertyInfo(alias=…, format=…)`). The chat-completion parameters declare
none, so for them the walk only drops omitted values and turns iterables into lists, yet it
cost a quarter of the gateway's CPU per turn (it recurses through the whole history and every
tool schema, importing a module at each step). This module installs, once per process, a
transform that does exactly that for the chat-completion parameter types and defers to the
SDK's own for everything else. It installs only after checking that the annotations of those
types still declare no alias or format, so an SDK version that adds one keeps the SDK's walk.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, get_args, get_type_hints

log = logging.getLogger(__name__)

_installed = False


def _declares_transform(tp: Any, seen: set[int]) -> bool:
    """True when `tp` (or any type inside it) carries a `PropertyInfo` alias or format."""
    from openai._utils._compat import is_typeddict
    from openai._utils._transform import PropertyInfo

    if id(tp) in seen:
        return False
    seen.add(id(tp))
    for meta in getattr(tp, "__metadata__", ()):
        if isinstance(meta, PropertyInfo) and (meta.alias is not None or meta.format is not None):
            return True
    if is_typeddict(tp):
        hints = get_type_hints(tp, include_extras=True)
        return any(_declares_transform(h, seen) for h in hints.values())
    return any(_declares_transform(a, seen) for a in get_args(tp) if not isinstance(a, str))


_ATOMS: frozenset[type] = frozenset({str, int, float, bool, type(None)})
_OMITTED: tuple[type, ...] = ()
KNOWN_PLAIN: dict[int, object] = {}
"""Objects known to be plain JSON already (tool schemas adapted by `schema_cache`), by id; the
holder removes an entry before it lets the object go, so an id is never reused here."""
KNOWN_JSON: dict[int, str] = {}
"""The SDK's JSON text of a `KNOWN_PLAIN` object, made at its first request (D197); dropped
with its `KNOWN_PLAIN` entry (`forget`)."""


def forget(data: object) -> None:
    """`data` is no longer known plain (its holder lets it go)."""
    if KNOWN_PLAIN.get(id(data)) is data:
        del KNOWN_PLAIN[id(data)]
        KNOWN_JSON.pop(id(data), None)


def plain(data: Any) -> Any:
    """What the SDK's transform makes of a body whose types declare no alias or format: the
    same data without omitted values, iterables as lists, pydantic models dumped."""
    global _OMITTED
    if not _OMITTED:
        from openai._types import NotGiven, Omit

        _OMITTED = (NotGiven, Omit)
    return _plain(data, _OMITTED)


def _plain(data: Any, omitted: tuple[type, ...]) -> Any:
    kind = type(data)
    if kind in _ATOMS:
        return data
    if kind is dict and KNOWN_PLAIN.get(id(data)) is data:
        return data
    if kind is dict or isinstance(data, Mapping):
        return {k: _plain(v, omitted) for k, v in data.items() if not isinstance(v, omitted)}
    if kind is list or kind is tuple:
        return [_plain(v, omitted) for v in data]
    from pydantic import BaseModel

    if isinstance(data, BaseModel):
        return data.model_dump(
            exclude_unset=True, mode="json", exclude=getattr(data, "__api_exclude__", None)
        )
    if isinstance(data, Iterable) and not isinstance(data, str | bytes | bytearray):
        return [_plain(v, omitted) for v in data]
    return data


def _spliced(data: Any, enc: Callable[[Any], str], text: Callable[[str], str]) -> str:
    """`enc(data)` with the known plain objects inside written from their kept text."""
    kind = type(data)
    if kind is str:
        return text(data)
    if kind is dict:
        if KNOWN_PLAIN.get(id(data)) is data:
            known = KNOWN_JSON.get(id(data))
            if known is None:
                known = KNOWN_JSON[id(data)] = enc(data)
            return known
        if all(type(k) is str for k in data):
            items = (f"{text(k)}:{_spliced(v, enc, text)}" for k, v in data.items())
            return "{" + ",".join(items) + "}"
    elif kind is list:
        return "[" + ",".join(_spliced(v, enc, text) for v in data) + "]"
    return enc(data)


def body_dumps(
    original: Callable[[Any], bytes], enc: Callable[[Any], str]
) -> Callable[[Any], bytes]:
    """The SDK's request-body serialiser, writing each tool schema from the text it was given
    the first time (D197): the schemas are two thirds of a plain turn's body and the same at
    every request, and serialising them again cost ~60 µs a turn. Any other body, and every
    value but `tools`, is the SDK's own `enc` (its encoder, its settings)."""
    from json.encoder import encode_basestring

    def dumps(obj: Any) -> bytes:
        if type(obj) is not dict or type(obj.get("tools")) is not list:
            return original(obj)
        if not all(type(k) is str for k in obj):
            return original(obj)
        text = encode_basestring
        items = (
            f"{text(k)}:{_spliced(v, enc, text) if k == 'tools' else enc(v)}"
            for k, v in obj.items()
        )
        return ("{" + ",".join(items) + "}").encode()

    return dumps


def _install_dumps() -> bool:
    """Serialise chat bodies with :func:`body_dumps` after checking, on a sample body, that it
    writes the very bytes the SDK's serialiser writes (an SDK that changed its settings keeps
    its own)."""
    import json

    from openai import _base_client as client
    from openai._utils import _json

    original = vars(client).get("openapi_dumps")
    encoder_cls = getattr(_json, "_CustomEncoder", None)
    if original is not _json.openapi_dumps or encoder_cls is None:
        return False
    enc = encoder_cls(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
    schema = {"type": "object", "properties": {"q": {"type": "string", "enum": ["ä", "\u2028"]}}}
    sample = {
        "model": "m",
        "messages": [{"role": "user", "content": 'é " \\ \n', "n": [1, 2.5, None, True]}],
        "tools": [{"type": "function", "function": {"name": "q", "parameters": schema}}, {}],
        "tool_choice": "auto",
    }
    ours = body_dumps(original, enc)
    KNOWN_PLAIN[id(schema)] = schema
    try:
        same = (
            ours(sample)
            == original(sample)
            == json.dumps(sample, ensure_ascii=False, separators=(",", ":")).encode()
        )
        same = same and ours(sample) == original(sample)  # the kept text, used
    except Exception as exc:  # an SDK whose serialiser we cannot match keeps its own
        log.debug("openai body serialiser left as is: %s", exc)
        return False
    finally:
        forget(schema)
    if not same:
        log.debug("openai body serialiser writes other bytes: SDK serialiser kept")
        return False
    setattr(client, "openapi_dumps", ours)  # noqa: B010  (imported by name there)
    return True


def url_cache(original: Callable[[Any, str], Any]) -> Callable[[Any, str], Any]:
    """The SDK's `_prepare_url`, answering a (base URL, path) pair seen before from its first
    answer (D200): the SDK parses the path and re-parses base + path into a new `httpx2.URL` at
    every request (~0.3 M instructions a turn), for the same few pairs. URLs are immutable; an
    entry holds its base URL object, so a client whose base URL is replaced misses."""
    cache: dict[tuple[int, str], tuple[object, Any]] = {}

    def prepare_url(self: Any, url: str) -> Any:
        base = self.base_url
        key = (id(base), url)
        hit = cache.get(key)
        if hit is not None and hit[0] is base:
            return hit[1]
        made = original(self, url)
        if len(cache) >= 256:  # paths with ids in them are one-offs: keep the map small
            cache.clear()
        cache[key] = (base, made)
        return made

    return prepare_url


def _install_url_cache() -> bool:
    """Cache :func:`url_cache`'s way after checking on sample URLs that the SDK's answer depends
    on the base URL and the path only, and is an immutable `httpx2.URL` equal at each call."""
    import inspect
    from types import SimpleNamespace

    from httpx2 import URL
    from openai import _base_client as client

    original = vars(client.BaseClient).get("_prepare_url")
    if original is None or list(inspect.signature(original).parameters) != ["self", "url"]:
        return False
    ours = url_cache(original)
    try:
        same = True
        for base in ("http://h:1/v1/", "https://api.example.com/"):
            holder = SimpleNamespace(base_url=URL(base))
            for path in ("/chat/completions", "models", "https://other.example/x?y=1"):
                want, got, again = original(holder, path), ours(holder, path), ours(holder, path)
                same = same and type(got) is URL and str(want) == str(got) == str(again)
                same = same and again is got and want == got
    except Exception as exc:  # an SDK whose URLs we cannot match keeps its own
        log.debug("openai URL preparation left as is: %s", exc)
        return False
    if not same:
        log.debug("openai URL preparation answers otherwise: SDK's kept")
        return False
    setattr(client.BaseClient, "_prepare_url", ours)  # noqa: B010
    return True


def install() -> bool:
    """Install the cheaper transform for chat completions; False when the check refuses."""
    global _installed
    if _installed:
        return True
    from openai.resources.chat.completions import completions as module
    from openai.types.chat import completion_create_params as params

    targets = (
        params.CompletionCreateParamsStreaming,
        params.CompletionCreateParamsNonStreaming,
        params.CompletionCreateParamsBase,
    )
    try:
        declared = any(_declares_transform(t, set()) for t in targets)
    except Exception as exc:  # an SDK whose types we cannot read keeps its own transform
        log.debug("openai chat transform left as is: %s", exc)
        return False
    if declared:
        log.debug("openai chat params declare aliases or formats: SDK transform kept")
        return False
    original: Callable[[object, object], Awaitable[Any]] = vars(module)["async_maybe_transform"]

    async def transform(data: object, expected_type: object) -> Any:
        if expected_type in targets and data is not None:
            return plain(data)
        return await original(data, expected_type)

    setattr(module, "async_maybe_transform", transform)  # noqa: B010  (not re-exported)
    _install_dumps()
    _install_url_cache()
    from core.features.models import openai_construct, openai_request

    openai_construct.install()
    openai_request.install()
    _installed = True
    return True
