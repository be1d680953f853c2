"""Keys typed ahead of a focus change go where the reviewer meant them.

A terminal hands the app every key typed within a few milliseconds at once. The app hands
each key to whatever has focus *then*, and a widget's bindings run only once the key has
come back up to the app: so `tab` (which focuses the note field) and the letters typed right
after it all reach the replay screen first, and, by the time they come back up, the note has
focus but the letters would run the replayer's keys (`o` folds, `c` cycles the confidence).
"""

from __future__ import annotations

from textual import events

from replay.ui.widgets.annotation_bar import NoteInput


class TypedAhead:
    """Mixed into the app: a key that comes up to the app while the note field has focus,
    but that the field never saw (it was handed on before tab gave the field focus), is
    handed to the field, in the order it was typed."""

    async def _on_key(self, event: events.Key) -> None:
        focused = self.focused  # type: ignore[attr-defined]
        if isinstance(focused, NoteInput) and not focused.took(event):
            event.stop()
            event.prevent_default()  # not the app's bindings: the note is being written
            focused.post_message(events.Key(event.key, event.character))
