"""Who a requester is to the gateway (D60): owner, member or guest.

The runtime sets the role at admission (or from the gateway token) and carries it on the tool
context of every run; the model never names it. A run started by another run carries the
starter's role, never a higher one.
"""

from __future__ import annotations

from typing import Literal, get_args

Role = Literal["owner", "member", "guest"]
ROLES: tuple[Role, ...] = get_args(Role)
_RANK: dict[str, int] = {"guest": 0, "member": 1, "owner": 2}


def lower_role(a: Role, b: Role) -> Role:
    """The lesser of two roles: what a run started by a run of role `a` in a place of `b` gets."""
    return a if _RANK[a] <= _RANK[b] else b


def parse_role(value: object, default: Role = "guest") -> Role:
    """A stored role back from JSON; anything unknown is `default` (least privilege)."""
    return value if isinstance(value, str) and value in _RANK else default  # type: ignore[return-value]


__all__ = ["ROLES", "Role", "lower_role", "parse_role"]
