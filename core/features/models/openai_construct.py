"""The openai SDK's response construction without its per-value type inspection (D201).

The SDK builds a response model (`ChatCompletion`, its choices, message, usage) by
`construct_type`, which at every value re-inspects the expected type (type alias? Annotated?
union? dict? model class? list? float? date?) and, in `BaseModel.construct`, re-reads each
class's config, fields and extra-field type: ~0.1 M instructions a turn. This module installs,
beside `openai_fast` (D40) and only after a sample constructs identically, versions that decide
that once per type and class and then do what the SDK does; every case but plain values, model
classes, lists and dicts (unions, Annotated, aliases of types, floats, dates) is the SDK's own
function, as is any field whose type is unknown.
"""

from __future__ import annotations

import copy
import inspect
import logging
from collections.abc import Callable, Mapping
from datetime import date, datetime
from typing import Any

log = logging.getLogger(__name__)

_SDK, _PLAIN, _MODEL, _LIST, _DICT = range(5)
Plan = tuple[int, Any]
Row = tuple[str, str | None, Any, Any, list[Any]]
Rows = tuple[dict[str, Any], bool, list[Row], object]


def _plan(type_: Any) -> Plan:
    """What the SDK's `construct_type` does with a value of `type_` (no metadata given)."""
    from openai import _models as sdk
    from openai._utils._compat import get_args, get_origin, is_literal_type, is_union
    from openai._utils._typing import is_annotated_type, is_type_alias_type

    if is_type_alias_type(type_) or is_annotated_type(type_):
        return _SDK, None
    origin = get_origin(type_) or type_
    args = get_args(type_)
    if is_union(origin):
        return _SDK, None
    if origin == dict:  # noqa: E721  (the SDK compares with ==)
        return _DICT, args[1] if len(args) > 1 else object
    if (
        not is_literal_type(type_)
        and inspect.isclass(origin)
        and (issubclass(origin, sdk.BaseModel) or issubclass(origin, sdk.GenericModel))
    ):
        return (_MODEL, type_) if origin is type_ else (_SDK, None)
    if origin == list:  # noqa: E721
        return _LIST, args[0] if args else object
    if origin == float or type_ == datetime or type_ == date:  # noqa: E721
        return _SDK, None
    return _PLAIN, None


def make(
    sdk_construct_type: Callable[..., object], sdk_construct_field: Callable[..., object]
) -> tuple[Callable[..., object], Callable[..., Any]]:
    """`construct_type` and `BaseModel.construct` as the SDK's, each type decided once."""
    from openai import _models as sdk
    from openai._compat import field_get_default, get_model_config, get_model_fields

    plans: dict[int, tuple[object, int, Any]] = {}
    classes: dict[type, Rows] = {}

    def construct_type(*, value: object, type_: object, metadata: list[Any] | None = None) -> Any:
        if metadata:
            return sdk_construct_type(value=value, type_=type_, metadata=metadata)
        known = plans.get(id(type_))  # by id: typing's generic aliases hash slowly
        if known is None or known[0] is not type_:
            known = plans[id(type_)] = (type_, *_plan(type_))  # holds `type_`: its id stays
        _, kind, arg = known
        if kind == _PLAIN:
            return value
        if kind == _MODEL:
            if isinstance(value, list):
                return [arg.construct(**e) if isinstance(e, Mapping) else e for e in value]
            return arg.construct(**value) if isinstance(value, Mapping) else value
        if kind == _LIST:
            if not isinstance(value, list):
                return value
            return [construct_type(value=e, type_=arg) for e in value]
        if kind == _DICT:
            if not isinstance(value, Mapping):
                return value
            return {k: construct_type(value=v, type_=arg) for k, v in value.items()}
        return sdk_construct_type(value=value, type_=type_)

    def rows(cls: type) -> Rows:
        fields = get_model_fields(cls)
        known = classes.get(cls)
        if known is not None and known[0] is fields:  # a rebuilt model has new fields
            return known
        config = get_model_config(cls)
        by_name = (
            config.allow_population_by_field_name
            if isinstance(config, sdk._ConfigProtocol)
            else config.get("populate_by_name")
        )
        listed = [(n, f.alias, f, f.annotation, f.metadata) for n, f in fields.items()]
        made = classes[cls] = (fields, bool(by_name), listed, sdk._get_extra_fields_type(cls))
        return made

    def construct(cls: Any, _fields_set: set[str] | None = None, **values: object) -> Any:
        fields, by_name, listed, extra_type = rows(cls)
        m = cls.__new__(cls)
        kept: dict[str, object] = {}
        if _fields_set is None:
            _fields_set = set()
        for name, alias, field, annotation, metadata in listed:
            key = alias
            if key is None or (by_name and key not in values):
                key = name
            if key in values:
                value = values[key]
                if value is None:
                    kept[name] = field_get_default(field)
                elif annotation is None:
                    kept[name] = sdk_construct_field(value=value, field=field, key=key)
                else:
                    kept[name] = construct_type(value=value, type_=annotation, metadata=metadata)
                _fields_set.add(name)
            else:
                kept[name] = field_get_default(field)
        extra: dict[str, object] = {}
        for key, value in values.items():
            if key not in fields:
                extra[key] = (
                    value if extra_type is None else construct_type(value=value, type_=extra_type)
                )
        object.__setattr__(m, "__dict__", kept)
        object.__setattr__(m, "__pydantic_private__", None)
        object.__setattr__(m, "__pydantic_extra__", extra)
        object.__setattr__(m, "__pydantic_fields_set__", _fields_set)
        return m

    return construct_type, construct


SAMPLE: dict[str, Any] = {
    "id": "c-1",
    "object": "chat.completion",
    "created": 1700000000,
    "model": "m",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "hi",
                "refusal": None,
                "tool_calls": [
                    {"id": "t1", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                    {"id": "t2", "type": "custom", "custom": {"name": "g", "input": "x"}},
                ],
                "annotations": [{"type": "url_citation", "url_citation": {"url": "u"}}],
                "odd": {"k": [1, 2]},
            },
            "logprobs": {"content": [{"token": "a", "logprob": -1, "bytes": [97]}]},
            "finish_reason": "stop",
        },
        "not a mapping",
    ],
    "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
    "system_fingerprint": None,
    "service_tier": "default",
    "extra_key": {"nested": True},
}


def same(a: object, b: object) -> bool:
    """`a` and `b` are equal down to types, set fields, extras and private state."""
    if type(a) is not type(b):
        return False
    if hasattr(a, "__pydantic_fields_set__"):
        parts = ("__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")
        if any(getattr(a, p) != getattr(b, p) for p in parts) or vars(a).keys() != vars(b).keys():
            return False
        return all(same(vars(a)[k], vars(b)[k]) for k in vars(a))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


ORIGINALS: dict[str, Any] = {}
"""The SDK's own `construct_type` and `BaseModel.construct`, once ours are installed."""


def install() -> bool:
    """Install :func:`make`'s versions after checking that they construct the sample response
    as the SDK does (an SDK that builds it otherwise keeps its own)."""
    from openai import _base_client as client
    from openai import _models as sdk
    from openai._compat import PYDANTIC_V1
    from openai.types.chat import ChatCompletion

    found = vars(sdk).get("construct_type")
    sdk_construct = vars(sdk.BaseModel).get("construct")
    if ORIGINALS and found is ORIGINALS.get("ours"):
        return True
    if PYDANTIC_V1 or not callable(found):
        return False
    sdk_construct_type: Callable[..., object] = found
    if vars(client).get("construct_type") is not sdk_construct_type:
        return False
    if (
        not isinstance(sdk_construct, classmethod)
        or vars(sdk.BaseModel).get("model_construct") is not sdk_construct
    ):
        return False
    construct_type, construct = make(sdk_construct_type, sdk._construct_field)
    try:
        want = sdk_construct_type(value=copy.deepcopy(SAMPLE), type_=ChatCompletion)
        setattr(sdk, "construct_type", construct_type)  # noqa: B010  (module global, recursed)
        setattr(sdk.BaseModel, "construct", classmethod(construct))  # noqa: B010
        got = construct_type(value=copy.deepcopy(SAMPLE), type_=ChatCompletion)
        again = construct_type(value=copy.deepcopy(SAMPLE), type_=ChatCompletion)
        ok = same(want, got) and same(want, again)
    except Exception as exc:  # an SDK we cannot match keeps its own
        log.debug("openai response construction left as is: %s", exc)
        ok = False
    if not ok:
        setattr(sdk, "construct_type", sdk_construct_type)  # noqa: B010
        setattr(sdk.BaseModel, "construct", sdk_construct)  # noqa: B010
        log.debug("openai response construction differs: SDK's kept")
        return False
    setattr(sdk.BaseModel, "model_construct", classmethod(construct))  # noqa: B010
    setattr(client, "construct_type", construct_type)  # noqa: B010  (imported by name there)
    ORIGINALS.update(
        construct_type=sdk_construct_type, construct=sdk_construct, ours=construct_type
    )
    return True
