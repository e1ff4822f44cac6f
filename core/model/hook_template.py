"""Hook message templates, rendered by Jinja2's sandbox: a template written by the operator
reads fields of an untrusted JSON body, so it may not reach attributes or call methods that
the sandbox forbids, and its output is plain text (no HTML escaping). The body also picks the
operands: a template's `+`, `join` or loop meeting a value of the wrong type is the caller's
error (a 400, not a 500), and `*` and `**` are bounded, so `{{ body.s * body.n }}` cannot
allocate gigabytes nor `{{ body.n ** body.m }}` spin a core.

Jinja2 is imported by the first template compiled (D56): a gateway without hook templates
never pays for it."""

from __future__ import annotations

import json
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jinja2 import Template
    from jinja2.sandbox import SandboxedEnvironment

MAX_OUTPUT = 16_000
MAX_REPEAT = 100_000
"""The most items (characters) a `*` of a sequence by a number may make."""
MAX_EXPONENT = 4_096


def _check_binop(operator: str, left: Any, right: Any) -> None:
    """Refuse what would not fit in memory or time before it is computed (ValueError)."""
    if operator == "*":
        for seq, n in ((left, right), (right, left)):
            if isinstance(seq, str | list | tuple) and isinstance(n, int):
                if len(seq) * n > MAX_REPEAT:
                    raise ValueError(f"a repeated text or list is over {MAX_REPEAT} items")
    elif operator == "**" and isinstance(right, int | float) and abs(right) > MAX_EXPONENT:
        if not (isinstance(left, int | float) and abs(left) in (0, 1)):
            raise ValueError(f"an exponent over {MAX_EXPONENT}")


@cache
def _env() -> SandboxedEnvironment:
    from jinja2.runtime import Context
    from jinja2.sandbox import SandboxedEnvironment

    class BoundedEnvironment(SandboxedEnvironment):
        intercepted_binops = frozenset(("*", "**"))

        def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
            _check_binop(operator, left, right)
            return super().call_binop(context, operator, left, right)

    return BoundedEnvironment(autoescape=False, keep_trailing_newline=False)


@lru_cache(maxsize=256)
def compile_template(source: str) -> Template:
    from jinja2 import TemplateError

    try:
        return _env().from_string(source)
    except TemplateError as exc:
        raise ValueError(f"invalid messageTemplate: {exc}") from exc


def render_message(source: str | None, context: dict[str, Any]) -> str:
    """The turn's message; without a template, the JSON body itself. Raises ValueError."""
    if source is None:
        return json.dumps(context.get("body"), ensure_ascii=False)
    from jinja2 import TemplateError

    try:
        text = compile_template(source).render(**context)
    except TemplateError as exc:  # includes the sandbox's SecurityError
        raise ValueError(f"messageTemplate failed: {exc}") from exc
    except (ArithmeticError, TypeError, ValueError, LookupError, MemoryError) as exc:
        # the body's values met the template's operations: `1 + "a"`, `join` of a number
        raise ValueError(f"messageTemplate failed: {type(exc).__name__}: {exc}") from exc
    return text[:MAX_OUTPUT]
