"""Who may run a command or call a tool, declared on the spec and enforced by the registry.

Handlers never check roles themselves (NoneBot2's ``permission=SUPERUSER``): the command and tool
registries ask the spec's :class:`Permission` before the handler runs, so a third-party command
declared ``permission=OWNER`` cannot forget the check. Permissions compose with ``&``, ``|``, ``~``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from core.model.roles import Role

DEFAULT_REFUSAL = "⚙️ /{name} is not allowed here."


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is asking, as the runtime (never the model) knows it."""

    is_owner: bool
    session_key: str
    channel: str | None = None
    sender_id: str | None = None
    role: Role | None = None
    """The requester's role (D60); None: owner when `is_owner`, else guest."""
    person_id: str | None = None
    """The sender's linked person (D65)."""
    group: str | None = None
    """`<channel>:<groupId>` when the chain of runs started in a group (D63)."""

    @property
    def effective_role(self) -> Role:
        if self.role is not None:
            return self.role
        return "owner" if self.is_owner else "guest"


Check = Callable[[Caller], bool]
Refuse = Callable[[Caller], "str | None"]


class Permission:
    """A named test of the caller with the refusal text to show when it fails.

    ``refusal`` is a template where ``{name}`` is the command's name; the owner permission's is
    decision D4's ``⚙️ /<name> is owner-only.``. A composed permission refuses with the text of
    the part that failed.
    """

    __slots__ = ("_refuse", "name")

    def __init__(self, name: str, check: Check, refusal: str = DEFAULT_REFUSAL) -> None:
        self.name = name
        self._refuse: Refuse = lambda c: None if check(c) else refusal

    @classmethod
    def predicate(cls, name: str, check: Check, refusal: str = DEFAULT_REFUSAL) -> Permission:
        """A permission from any test of the caller (channel, sender id, …)."""
        return cls(name, check, refusal)

    @classmethod
    def _of(cls, name: str, refuse: Refuse) -> Permission:
        perm = cls(name, lambda c: True)
        perm._refuse = refuse
        return perm

    def refusal_template(self, caller: Caller) -> str | None:
        """None when `caller` is allowed, else the refusal template."""
        return self._refuse(caller)

    def allows(self, caller: Caller) -> bool:
        return self._refuse(caller) is None

    def refusal(self, caller: Caller, name: str) -> str | None:
        """None when allowed, else the text to reply for command (or tool) `name`."""
        template = self._refuse(caller)
        return None if template is None else template.format(name=name)

    def __and__(self, other: Permission) -> Permission:
        a, b = self, other
        return Permission._of(
            f"({a.name} & {b.name})", lambda c: a.refusal_template(c) or b.refusal_template(c)
        )

    def __or__(self, other: Permission) -> Permission:
        a, b = self, other
        return Permission._of(
            f"({a.name} | {b.name})", lambda c: None if a.allows(c) else b.refusal_template(c)
        )

    def __invert__(self) -> Permission:
        a = self
        return Permission._of(f"~{a.name}", lambda c: DEFAULT_REFUSAL if a.allows(c) else None)

    def __repr__(self) -> str:
        return f"Permission({self.name})"


OWNER = Permission("owner", lambda c: c.is_owner, "⚙️ /{name} is owner-only.")
EVERYONE = Permission("everyone", lambda c: True)

__all__ = ["DEFAULT_REFUSAL", "EVERYONE", "OWNER", "Caller", "Check", "Permission"]
