"""How a concern owner's bindings become the screen's: keys reach a screen's bindings when
nothing is focused (the reviewer's usual state), so the screen lists each owner's bindings
under their own ids and runs the action on the owner."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, ClassVar, cast

from textual.binding import Binding, BindingType
from textual.widget import Widget

if TYPE_CHECKING:
    from replay.ui.screens.replay_screen import ReplayScreen

ROUTE = "route"
"""The screen's action that runs an owner's action: `route('playback', 'step(1)')`."""


def routed(owner: str, bindings: list[BindingType]) -> list[Binding]:
    """The owner's bindings, as the screen lists them: same keys, ids, descriptions and
    tooltips (user keymaps remap by id), each running the owner's own action."""
    return [replace(binding, action=f"{ROUTE}({owner!r}, {binding.action!r})")
            for binding in bindings if isinstance(binding, Binding)]


def owner_action(binding: Binding) -> str:
    """The action a routed binding runs on its owner (the binding's own action otherwise)."""
    from textual.actions import parse

    _namespace, name, params = parse(binding.action)
    if name == ROUTE and len(params) == 2:
        return str(params[1])
    return binding.action


class Concern(Widget):
    """A hidden owner of one concern of the replay screen, with its bindings and actions."""

    DEFAULT_CSS = "Concern { display: none; }"
    OWNER: ClassVar[str] = ""
    """The name the screen routes this owner's bindings by (also its widget id)."""

    def __init__(self) -> None:
        super().__init__(id=self.OWNER)

    @property
    def host(self) -> ReplayScreen:
        """The replay screen this owner serves (typed; imported for type checking only)."""
        return cast("ReplayScreen", self.screen)
