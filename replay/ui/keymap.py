"""The keys each binding really has once the user's keymap is applied, and the clashes.

Textual gives a key claimed by the keymap to the keymap's binding and silently drops it from
the binding that had it by default (`next-empty-turn = "n"` took `n` from search-next).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from textual.binding import Binding


def _keys(spec: str) -> list[str]:
    return [key.strip() for key in spec.split(",") if key.strip()]


def effective_keys(bindings: Iterable[Binding], keymap: Mapping[str, str]) -> dict[str, list[str]]:
    """Binding id -> the keys that trigger it with the keymap applied (maybe none)."""
    bindings = [binding for binding in bindings if binding.id]
    ids = {binding.id for binding in bindings}
    claimed = {key for binding_id, spec in keymap.items() if binding_id in ids
               for key in _keys(spec)}
    keys: dict[str, list[str]] = {}
    for binding in bindings:
        assert binding.id is not None
        if binding.id in keymap:
            keys[binding.id] = _keys(keymap[binding.id])
        else:
            keys[binding.id] = [key for key in _keys(binding.key) if key not in claimed]
    return keys


def clashes(bindings: Iterable[Binding], keymap: Mapping[str, str]) -> list[str]:
    """One line per key the keymap binds to an id while another id has it too."""
    bindings = [binding for binding in bindings if binding.id]
    owners: dict[str, list[str]] = {}
    for binding in bindings:
        assert binding.id is not None
        spec = keymap.get(binding.id, binding.key)
        for key in _keys(spec):
            if binding.id not in owners.setdefault(key, []):
                owners[key].append(binding.id)
    lines = []
    for key, ids in owners.items():
        mapped = [binding_id for binding_id in ids if binding_id in keymap]
        if len(ids) > 1 and mapped:
            others = [binding_id for binding_id in ids if binding_id != mapped[0]]
            lines.append(f"Key {key!r} is bound to both {mapped[0]} (keymap) and "
                         f"{' and '.join(others)}; {mapped[0]} takes it. Change one in "
                         "[keymap] of config.toml.")
    return lines
