"""The store façade plugins get (D49) stays a true view of the store: every call it declares
exists on :class:`core.store.Store` and accepts the arguments the façade promises, so a change
to the store that would break a plugin fails here, not in a plugin at run time."""

from __future__ import annotations

import inspect

from core.features.services import SessionStore
from core.store import Store


def _declared(proto: type) -> list[str]:
    return sorted(
        n for n, v in vars(proto).items() if not n.startswith("_") and inspect.isfunction(v)
    )


def test_every_facade_call_exists_on_the_store_with_its_arguments() -> None:
    names = _declared(SessionStore)
    assert "get_session" in names and "history" in names
    for name in names:
        promised = inspect.signature(getattr(SessionStore, name)).parameters
        real = inspect.signature(getattr(Store, name)).parameters
        for param, spec in promised.items():
            if spec.kind is inspect.Parameter.VAR_KEYWORD:
                assert any(p.kind is spec.kind for p in real.values()), name
                continue
            assert param in real, f"Store.{name} lost the argument {param!r}"
            assert real[param].kind == spec.kind, f"Store.{name}({param}) changed kind"
            assert real[param].default == spec.default, f"Store.{name}({param}) default"
        is_async = inspect.iscoroutinefunction(getattr(SessionStore, name))
        assert inspect.iscoroutinefunction(getattr(Store, name)) == is_async, name
