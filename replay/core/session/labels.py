"""Interpretation labels: the default set and user sets read from TOML."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replay.core.files import FileRefused, read_capped


class LabelSetError(Exception):
    """A label file that cannot be used; the message is one line naming the file."""


@dataclass(frozen=True, slots=True)
class Label:
    """One interpretation a reviewer can give an empty turn."""

    name: str
    """Stable identifier written to journals and CSV (`approval`)."""
    key: str
    """The single key that applies it in the app (`2`)."""
    title: str
    """Short human name (`Tacit approval`)."""
    description: str
    """One line saying when to use it."""


@dataclass(frozen=True, slots=True)
class LabelSet:
    """An ordered set of labels with unique names and keys."""

    labels: tuple[Label, ...]
    """The labels in display order."""

    def get(self, name: str) -> Label | None:
        """The label called `name`, if any."""
        for label in self.labels:
            if label.name == name:
                return label
        return None

    def by_key(self, key: str) -> Label | None:
        """The label bound to `key`, if any."""
        for label in self.labels:
            if label.key == key:
                return label
        return None

    @property
    def names(self) -> tuple[str, ...]:
        """Label names in display order."""
        return tuple(label.name for label in self.labels)

    def __iter__(self) -> Iterator[Label]:
        return iter(self.labels)

    def __len__(self) -> int:
        return len(self.labels)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None


DEFAULT_LABELS = LabelSet(
    (
        Label("continue", "1", "Continue",
              "A bare nudge to keep going, as if the person had typed \"go on\"."),
        Label("approval", "2", "Tacit approval",
              "Silent consent to a plan or proposal the agent had just laid out."),
        Label("resumption", "3", "Resumption",
              "Coming back after a break, a reconnection or a restarted client."),
        Label("reflect", "4", "Reflection",
              "A deliberate pause by the person to take stock before steering."),
        Label("artifact", "5", "Artifact",
              "Produced by the tooling (recording glitch, truncation, abort), not a human act."),
        Label("thinking", "6", "Silent thinking",
              "The model reasoned during this round but showed nothing."),
        Label("context-reset", "7", "Context reset",
              "A compaction, or a trigger that made the agent dump or rebuild its context."),
        Label("breakdown", "8", "Breakdown",
              "Communication failed: followed by a repeated instruction or by confusion."),
        Label("other", "9", "Other", "None of the above; say why in the note."),
    )
)
"""The product's default interpretations, keyed 1 to 9."""


def _text_field(path: Path, number: int, entry: dict[str, Any], name: str) -> str | None:
    value = entry.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise LabelSetError(f"{path}: label {number}: `{name}` must be a string")
    return value.strip()


def _label_from_entry(path: Path, number: int, entry: object) -> Label:
    if not isinstance(entry, dict):
        raise LabelSetError(f"{path}: label {number} must be a table ([[label]])")
    name = _text_field(path, number, entry, "name")
    if not name:
        raise LabelSetError(f"{path}: label {number}: expected a non-empty `name`")
    if any(char.isspace() or not char.isprintable() for char in name):
        raise LabelSetError(
            f"{path}: label {name!r}: a name cannot hold spaces or control characters")
    key = _text_field(path, number, entry, "key")
    if key is None or len(key) != 1 or not key.isprintable():
        raise LabelSetError(f"{path}: label {name!r}: expected `key` to be one printable character")
    title = _text_field(path, number, entry, "title") or name
    description = " ".join((_text_field(path, number, entry, "description") or "").split())
    return Label(name, key, title, description)


def load_label_set(path: str | Path) -> LabelSet:
    """Read a label set from TOML: one `[[label]]` table (name, key, title, description) each.

    Raises:
        LabelSetError: the file cannot be read, is not TOML, or breaks a rule (names and keys
            unique, name non-empty, key one character).
    """
    path = Path(path)
    try:
        data = tomllib.loads(read_capped(path, "a label file").decode("utf-8"))
    except FileRefused as error:
        raise LabelSetError(str(error)) from None
    except OSError as error:
        raise LabelSetError(f"{path}: cannot read label file: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise LabelSetError(f"{path}: label file is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as error:
        raise LabelSetError(f"{path}: not valid TOML: {error}") from None
    entries = data.get("label")
    if not isinstance(entries, list) or not entries:
        raise LabelSetError(f"{path}: expected one or more [[label]] tables with name, key, title")
    labels = [_label_from_entry(path, number, entry) for number, entry in enumerate(entries, 1)]
    seen_names: set[str] = set()
    seen_keys: dict[str, str] = {}
    for label in labels:
        if label.name in seen_names:
            raise LabelSetError(
                f"{path}: label name {label.name!r} appears twice; names must be unique")
        if label.key in seen_keys:
            raise LabelSetError(
                f"{path}: key {label.key!r} is used by both {seen_keys[label.key]!r} and "
                f"{label.name!r}; keys must be unique"
            )
        seen_names.add(label.name)
        seen_keys[label.key] = label.name
    return LabelSet(tuple(labels))
