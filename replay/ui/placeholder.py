"""The placeholder the app shows for a reply that never came (the `missing_replies` rule).

It is drawn where the reply should be, between the request and what followed, and is never
a turn of the session: it has no number of its own (`#12+`, after request #12), no source
record and no time, and it says so.
"""

from __future__ import annotations

from rich.text import Text

from replay.core.detection.empty import EmptyTurn, missing_reply, no_reply_headline
from replay.core.session.model import Session
from replay.core.session.turn_ref import placeholder_name
from replay.ui.render import clean


def headline(session: Session, index: int, *, live: bool = False) -> str:
    """`no reply — info: Request cancelled. 3 s later` for the request at `index`."""
    found = missing_reply(session, index, live=live)
    return no_reply_headline(session, index, found) if found is not None else "no reply"


def placeholder_text(session: Session, empty: EmptyTurn, *, live: bool = False) -> Text:
    """The current pane at a missing reply: a heading marked as not in the file, then why."""
    text = Text(no_wrap=False)
    text.append(f"{placeholder_name(empty.index)} assistant", style="bold")
    text.append(" · not in the file", style="italic")
    text.append("  ∅ no reply ", style="bold reverse")
    text.append("\n ")
    text.append(clean(headline(session, empty.index, live=live)), style="bold")
    text.append(f"\n replay shows this placeholder where the reply to #{empty.index + 1} "
                "should be: the file holds no reply to it.", style="italic")
    return text


def banner_text(session: Session, empty: EmptyTurn, ordinal: int, total: int) -> Text:
    """The alarm line above a missing reply, with its evidence."""
    banner = Text()
    banner.append(f" EMPTY TURN {ordinal} / {total}: ", style="bold reverse")
    banner.append(f" {placeholder_name(empty.index)} the reply to #{empty.index + 1} never "
                  "came (no-reply, a placeholder: not in the file)", style="bold")
    if empty.evidence:
        banner.append("\n evidence: ", style="bold")
        banner.append(clean(" · ".join(empty.evidence)))
    return banner
