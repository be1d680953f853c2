"""The app's side of labels whose turn is no longer empty (see `replay.core.annotate.outgrown`).

A turn labelled while it looked empty that now shows content (its reply was still being
written) keeps its label: the turn's banner says so, the journal gets the label marked
`turn_has_content` once, and a notification says it the moment it happens.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from replay.core.annotate.journal import JournalError
from replay.core.annotate.outgrown import now_with_content
from replay.core.session.turn_ref import placeholder_id
from replay.ui.literal import shown

if TYPE_CHECKING:
    from replay.core.annotate.annotations import Annotation
    from replay.core.session.model import Turn
    from replay.ui.screens.replay_screen import ReplayScreen


def outgrown_label(screen: ReplayScreen, turn: Turn) -> Annotation | None:
    """This reviewer's label on a turn (or on its missing reply) that is not a stop now."""
    for key in (turn.id, placeholder_id(turn.id)):
        saved = screen.store.get(key)
        if saved is not None:
            return saved
    return None


def outgrown_text(screen: ReplayScreen, saved: Annotation) -> Text:
    """What the banner of such a turn adds."""
    label = screen.labels.get(saved.label)
    title = label.title if label is not None else saved.label
    what = "its missing reply" if saved.turn_id.endswith("+no-reply") else "it"
    return Text(shown(f" · labelled {title} when {what} looked empty; it shows content now: "
                      "the label is kept, export marks it, agree leaves it out"),
                style="italic")


def mark_outgrown(screen: ReplayScreen) -> None:
    """Mark in the journal, once, this reviewer's labels whose turn now shows content."""
    annotated = screen.store.annotated_ids
    if not annotated:
        return
    stops = {screen.stop_id(index) for index in screen.navigator.empty_indices}
    for turn_id in sorted(now_with_content(screen.session, annotated, stops)):
        try:
            marked = screen.store.mark_has_content(turn_id)
        except JournalError as error:
            screen.notify(shown(f"{error}\nThe mark is kept in memory and saved with the "
                                "next annotation."),
                          title="Annotations", severity="error", markup=False)
            continue
        if marked is not None:
            name = f"#{marked.turn_index + 1}" + ("+" if turn_id.endswith("+no-reply") else "")
            screen.notify(shown(f"{name} shows content now: your label {marked.label} is kept "
                                "and marked as such (export says so, agree leaves it out)."),
                          title="Label kept", markup=False, timeout=6)


__all__ = ["mark_outgrown", "outgrown_label", "outgrown_text"]
