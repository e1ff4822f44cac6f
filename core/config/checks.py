"""Checks that need the whole config (or the raw file) and run at load time, so that
`crosstalk config check` and the gateway's start refuse what would fail later (D12).

Each problem is one ``<dotted.path>: <reason>`` line, like the schema's own errors.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from core.config.schema import CrosstalkConfig
from core.config.schema_base import ModelRefSpec

# Names the gateway gives a local model server it finds when no provider is configured
# (core.features.models.resolver.PROBE_PORTS); a model may name them only in that case.
PROBED_PROVIDERS = ("ollama", "llamacpp", "lmstudio")


def _refs(path: str, ref: str | ModelRefSpec | None) -> Iterator[tuple[str, str]]:
    if isinstance(ref, ModelRefSpec):
        yield f"{path}.primary", ref.primary
        for i, fallback in enumerate(ref.fallbacks):
            yield f"{path}.fallbacks.{i}", fallback
    elif ref is not None:
        yield path, ref


def _model_refs(config: CrosstalkConfig) -> Iterator[tuple[str, str]]:
    defaults = config.agents.defaults
    yield from _refs("agents.defaults.model", defaults.model)
    yield from _refs("agents.defaults.subagents.model", defaults.subagents.model)
    for i, agent in enumerate(config.agents.list):
        yield from _refs(f"agents.list.{i}.model", agent.model)
        yield from _refs(f"agents.list.{i}.subagents.model", agent.subagents.model)


def model_reference_problems(config: CrosstalkConfig) -> list[str]:
    """Every `model` must name a configured provider (and a model it lists, if it lists any)."""
    providers = config.models.providers
    known = sorted(providers) or list(PROBED_PROVIDERS)
    problems: list[str] = []
    for path, ref in _model_refs(config):
        provider_id, _, model_id = ref.partition("/")
        if provider_id not in known:
            problems.append(
                f"{path}: unknown provider {provider_id!r} in {ref!r} "
                f"(models.providers has: {', '.join(known) if providers else 'none'})"
            )
        elif provider_id in providers and not config.models.has_model(ref):
            problems.append(f"{path}: provider {provider_id!r} lists no model {model_id!r}")
    return problems


def alias_cycle(data: Any) -> str | None:
    """The dotted path at which a parsed YAML value contains itself (a recursive alias).

    Depth-first with an explicit stack, so deep documents cannot exhaust Python's.
    """
    on_path: set[int] = set()
    stack: list[tuple[Any, tuple[str, ...], bool]] = [(data, (), False)]
    while stack:
        node, path, leaving = stack.pop()
        if leaving:
            on_path.discard(id(node))
            continue
        if not isinstance(node, dict | list):
            continue
        if id(node) in on_path:
            return ".".join(path) or "(root)"
        on_path.add(id(node))
        stack.append((node, path, True))
        items = node.items() if isinstance(node, dict) else enumerate(node)
        stack.extend((v, (*path, str(k)), False) for k, v in items)
    return None
