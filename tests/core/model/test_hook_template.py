"""Hook templates meet bodies chosen by the webhook caller: wrong types are the caller's error
(ValueError, a 400 at the route) and `*`/`**` cannot be made to allocate or compute without
bound (the output cap alone came after the allocation)."""

from __future__ import annotations

import pytest

from core.model.hook_template import MAX_REPEAT, render_message


@pytest.mark.parametrize(
    ("template", "body"),
    [
        ("n={{ body.n + 1 }}", {"n": "a"}),
        ("{{ body.items | join(', ') }}", {"items": 5}),
        ("{% for i in body.items %}{{ i }}{% endfor %}", {"items": None}),
        ("{{ body.n / body.d }}", {"n": 1, "d": 0}),
        ("{{ body.x | round }}", {"x": "a"}),
        ("{{ body.s * body.n }}", {"s": "x", "n": 10**12}),
        ("{{ body.n * body.s }}", {"s": ["x"], "n": MAX_REPEAT + 1}),
        ("{{ body.n ** body.m }}", {"n": 10, "m": 10**12}),
        ("{{ body.n ** body.m }}", {"n": 2.0, "m": 5000}),
    ],
)
def test_a_body_that_breaks_the_template_is_a_value_error(
    template: str, body: dict[str, object]
) -> None:
    with pytest.raises(ValueError, match=r"^messageTemplate failed: "):
        render_message(template, {"body": body})


def test_bounded_operators_still_work() -> None:
    body = {"s": "ab", "n": 3, "e": 10, "one": 1, "big": 10**9}
    out = render_message(
        "{{ body.s * body.n }} {{ body.n * body.s }} {{ 2 ** body.e }} {{ body.one ** body.big }}"
        " {{ body.n * body.e }}",
        {"body": body},
    )
    assert out == "ababab ababab 1024 1 30"
