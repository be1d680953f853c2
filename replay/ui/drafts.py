"""Annotation drafts: a label picked or a note typed at a stop and not saved yet, kept per
stop while the reviewer looks elsewhere, until saved or discarded.

Leaving a session with drafts keeps them beside the journal (`drafts_path`): quitting, going
back to the session list, or the app ended by a signal (SIGTERM, SIGHUP when the terminal
closes: `replay.ui.hangup`). The next time the session is opened it offers them again at
their stops, as drafts: what was typed is never lost, and never saved as an annotation
without enter."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from replay.core.annotate.annotations import Annotation
from replay.core.atomic import write_text_atomically
from replay.core.session.text import one_line, plural

if TYPE_CHECKING:
    from replay.ui.screens.replay_screen import ReplayScreen

DraftKey = tuple[str, str]
"""(session id, stop id): stop ids repeat across the sessions of a review queue."""


@dataclass(frozen=True, slots=True)
class Draft:
    """What the reviewer had picked and typed at one stop."""

    name: str
    """The stop as the header names it: `#12`, or `#12+` for a missing reply."""
    label: str | None
    """The label picked (None: only a note was typed)."""
    note: str
    confidence: str
    overrule: str
    kept: str = ""
    """When it was last kept in the drafts file (ISO 8601 UTC, as annotations' `time`),
    for a draft read back from it; "" for one made in this run."""

    def differs_from(self, saved: Annotation | None) -> bool:
        """True when saving it would change what is saved (a label or a note)."""
        label = saved.label if saved is not None else None
        note = saved.note if saved is not None else ""
        return (self.label is not None and self.label != label) or self.note != note

    def describe(self) -> str:
        """`#12 approval, note "draft note"`, for the question asked before leaving."""
        said = [self.label] if self.label else []
        if self.note:
            said.append(f'note "{one_line(self.note, 40)}"')
        return f"{self.name} {', '.join(said)}"


class Drafts:
    """The drafts of one screen, by stop."""

    def __init__(self) -> None:
        self._by_key: dict[DraftKey, Draft] = {}
        self._restored: set[str] = set()

    def keep(self, key: DraftKey, draft: Draft, saved: Annotation | None) -> None:
        """Keep `draft` for the stop, or forget the stop's draft when it saves nothing new."""
        if draft.differs_from(saved):
            self._by_key[key] = draft
        else:
            self._by_key.pop(key, None)

    def get(self, key: DraftKey | None) -> Draft | None:
        """The stop's draft, if it has one."""
        return self._by_key.get(key) if key is not None else None

    def drop(self, key: DraftKey | None) -> None:
        """Forget the stop's draft (saved or discarded)."""
        if key is not None:
            self._by_key.pop(key, None)

    def items(self) -> list[tuple[DraftKey, Draft]]:
        """Every draft kept, by stop."""
        return list(self._by_key.items())

    def restore(self, journal: Path, session: str,
                saved: Callable[[str], Annotation | None]) -> int:
        """Take back the drafts the last run kept for `session` beside `journal`, once per
        session (a stop keeps the draft it has now); how many came back. `saved`: the saved
        annotation of a stop id, so a draft since saved some other way is not offered."""
        if session in self._restored:
            return 0
        self._restored.add(session)
        path = drafts_path(journal)
        back = 0
        for key, draft in read_kept(path).items():
            if key[0] != session or key in self._by_key:
                continue
            here = saved(key[1])
            if draft.differs_from(here) and not saved_since(draft, here):
                self._by_key[key] = draft
                back += 1
        return back


def saved_since(draft: Draft, saved: Annotation | None) -> bool:
    """True when the stop was saved after the draft was last kept: the draft is what was
    being typed before that save (kept by the autosave, then the app ended before the next
    one could drop it), not work to offer again."""
    if saved is None or not saved.time or not draft.kept:
        return False
    from datetime import datetime

    try:
        return datetime.fromisoformat(saved.time) >= datetime.fromisoformat(draft.kept)
    except (TypeError, ValueError):
        return False  # a time of another form: offered, as before


DRAFTS_SUFFIX = ".drafts.json"
"""Beside a journal, the drafts left when the app quit (`journal.jsonl.drafts.json`)."""


def drafts_path(journal: Path) -> Path:
    """Where the drafts of sessions annotated in `journal` are kept between runs."""
    return journal.with_name(journal.name + DRAFTS_SUFFIX)


def read_kept(path: Path) -> dict[DraftKey, Draft]:
    """The drafts kept in `path` (none when it is missing or unreadable: a draft is never
    worth a refusal to start)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        return {(str(item["session"]), str(item["stop"])): Draft(
                    str(item["name"]), item["label"] if isinstance(item["label"], str) else None,
                    str(item["note"]), str(item["confidence"]), str(item["overrule"]),
                    str(item.get("kept_at", "")))
                for item in document["drafts"]}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def keep_drafts(path: Path, drafts: list[tuple[DraftKey, Draft]],
                sessions: set[str]) -> None:
    """Keep `drafts` in `path` for the next run, in place of what it held for `sessions`
    (the drafts of other sessions stay). Removes the file when nothing is left.

    Raises:
        OSError: the file cannot be written.
    """
    from replay.core.annotate.annotations import now_iso

    kept = {key: draft for key, draft in read_kept(path).items() if key[0] not in sessions}
    now = now_iso()  # (the drafts of `sessions` are as they are now; the others keep theirs)
    kept.update((key, replace(draft, kept=now)) for key, draft in drafts)
    if not kept:
        path.unlink(missing_ok=True)
        return
    items = [{"session": key[0], "stop": key[1], "name": draft.name, "label": draft.label,
              "note": draft.note, "confidence": draft.confidence, "overrule": draft.overrule,
              "kept_at": draft.kept}
             for key, draft in kept.items()]
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomically(path, json.dumps({"drafts": items}, ensure_ascii=False, indent=1))


def keep_screen_drafts(screens: Iterable[ReplayScreen],
                       until: str = "for the next run") -> list[str]:
    """Keep each screen's drafts beside its journal for the next time its session is opened
    (`drafts_path`), in place of what was kept for its session before; the lines to say
    (where they were kept, or why they could not be)."""
    by_file: dict[Path, tuple[list[tuple[DraftKey, Draft]], set[str]]] = {}
    for screen in screens:
        screen.annotation.unsaved_drafts()  # (the stop's own, as it is now, counts too)
        items, sessions = by_file.setdefault(drafts_path(screen.store.journal.path),
                                             ([], set()))
        items.extend(screen.annotation.drafts.items())
        sessions.add(screen.store.session_id)
    said = []
    for path, (items, sessions) in by_file.items():
        try:
            keep_drafts(path, items, sessions)
        except OSError as error:
            if not items:
                continue  # nothing to keep: nothing lost (a folder that is not one)
            said.append(f"replay: {plural(len(items), 'draft')} could not be kept in "
                        f"{path}: {error.strerror or error}")
            continue
        if items:
            said.append(f"replay: {plural(len(items), 'draft')} not saved (a label or "
                        f"note typed and not entered) kept {until} in {path}")
    return [one_line(line) for line in said]
