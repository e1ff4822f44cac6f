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
    _installed = True
    return True
