"""The line above the current turn: its number and role, or the alarm of an empty turn with
its evidence and what the person wrote next."""

from __future__ import annotations

from rich.text import Text

from replay.core.detection.empty import REASON_BY_CODE, EmptyTurn, format_duration, gap_before
from replay.core.index.navigation import Navigator
from replay.core.session.model import Kind, Session, Turn
from replay.core.session.text import one_line
from replay.ui.render import clean, gap_text


def banner_text(session: Session, navigator: Navigator, turn: Turn, empty: EmptyTurn | None,
                sidechains: int) -> Text:
    """The banner for `turn` (`empty`: its report when the view is at its stop;
    `sidechains`: how many subagent sessions it started)."""
    banner = Text()
    gap = gap_text(gap_before(session, turn.index)) if turn.index else ""
    if empty is not None and empty.is_placeholder:
        from replay.ui.placeholder import banner_text as placeholder_banner

        placed = placeholder_banner(session, empty, navigator.empty_ordinal(turn.index) or 0,
                                    len(navigator.empty_indices))
        placed.append_text(next_message_text(session, turn.index))
        return placed
    if empty is None:
        banner.append(f" #{turn.index + 1} {turn.role}", style="bold")
        if gap:
            banner.append(f" · {gap}")
        if navigator.is_placeholder(turn.index):
            banner.append(f" · got no reply: → shows the placeholder #{turn.index + 1}+",
                          style="italic")
        if sidechains:
            banner.append(f" · ↳ {sidechains} subagent session(s) started here: s opens",
                          style="italic")
        return banner
    reason = REASON_BY_CODE.get(empty.reason)
    ordinal = navigator.empty_ordinal(turn.index) or 0
    banner.append(f" EMPTY TURN {ordinal} / {len(navigator.empty_indices)}: ",
                  style="bold reverse")
    phrase = reason.phrase if reason else "sent nothing"
    if empty.reason == "compaction-request" and any(
            part.kind == Kind.COMPACTION and part.name == "auto" for part in turn.parts):
        phrase = "turn is an automatic compaction (nobody asked for it)"
    banner.append(f" the {turn.role} {phrase}", style="bold")
    banner.append(f" ({empty.reason})")
    if gap:
        banner.append(f" · {gap}")
    if empty.evidence:
        banner.append("\n evidence: ", style="bold")
        banner.append(clean(" · ".join(empty.evidence)))
    banner.append_text(next_message_text(session, turn.index))
    return banner


def next_message_text(session: Session, index: int) -> Text:
    """What the person wrote next (how they reacted to the silence), on its own line."""
    from replay.core.suggest.signals import next_message

    found = next_message(session, index)
    line = Text()
    if found is None:
        return line
    line.append("\n next: ", style="bold")
    when = (f" · {format_duration(found.after)} later" if found.after is not None else "")
    line.append(f"#{found.index + 1} user{when}: ")
    line.append(one_line(clean(found.text), 160) or "(nothing)", style="italic")
    return line
