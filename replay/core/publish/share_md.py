"""`replay share --as md`: the whole session as Markdown.

Every turn is a heading `#N · role · time`; its words are in fenced blocks (a fence longer
than any backtick run in them), so nothing a transcript holds, HTML or Markdown, becomes
markup in a renderer; tool calls and reasoning are folded into `<details>` whose summary is
HTML-escaped. An empty turn carries its banner, evidence, suggestion and every annotation.
"""

from __future__ import annotations

from collections.abc import Iterator

from replay.core.publish.casestudy import empty_facts_markdown
from replay.core.publish.escaping import html_text, md_fence, md_inline
from replay.core.publish.share_model import SharedPart, SharedSession, SharedTurn, clock, gap_text
from replay.core.safe import escape_controls
from replay.core.session.text import plural


def markdown_chunks(shared: SharedSession) -> Iterator[str]:
    """The document, a turn at a time."""
    session = shared.session
    yield f"# {md_inline(shared.title)}\n\n"
    facts = [md_inline(session.format), plural(shared.count, "turn"),
             plural(len(shared.empties), "empty turn"), f"{shared.annotated:,} annotated"]
    yield f"- **Session:** {' · '.join(facts)}\n"
    yield f"- **Source:** {md_inline(shared.path)}\n"
    if session.session_id:
        yield f"- **Id:** {md_inline(shared.clean(session.session_id))}\n"
    if shared.empties:
        listed = ", ".join(f"#{empty.index + 1}{'+' if empty.is_placeholder else ''} "
                           f"({md_inline(empty.reason)})"
                           for empty in shared.empties[:200])
        more = f" and {len(shared.empties) - 200:,} more" if len(shared.empties) > 200 else ""
        yield f"- **Empty turns:** {listed}{more}\n"
    if shared.notice:
        yield f"\n> {md_inline(shared.notice)}\n"
    yield "\n---\n\n"
    for turn in shared.turns():
        yield turn_markdown(turn, shared)


def turn_markdown(turn: SharedTurn, shared: SharedSession) -> str:
    """One turn: its heading, its banner when empty, its parts."""
    heading = [f"#{turn.name}", md_inline(turn.role),
               "*not in the file*" if turn.placeholder else md_inline(clock(turn))]
    if gap_text(turn):
        heading.append(gap_text(turn))
    if turn.model:
        heading.append(md_inline(shared.clean(turn.model)))
    lines = [f"### {' · '.join(heading)}", ""]
    if turn.empty is not None:
        lines += [f"> **EMPTY TURN {turn.ordinal} / {len(shared.empties)}:** "
                  f"{md_inline(turn.headline)} ({md_inline(turn.empty.reason)})", ""]
        lines += empty_facts_markdown(turn.empty, turn.annotations, shared.label_titles)
        lines.append("")
    for part in turn.parts:
        lines += part_markdown(part)
    return "\n".join(lines) + "\n"


def _block(text: str) -> str:
    return md_fence(escape_controls(text))


def part_markdown(part: SharedPart) -> list[str]:
    """One part as Markdown lines (ending with a blank line)."""
    cut = [f"*… {part.cut:,} more characters not written here (the transcript holds them)*",
           ""] if part.cut else []
    if part.kind == "text":
        if not part.body.strip():
            return []
        note = ["*(injected by the harness)*", ""] if part.synthetic else []
        return [*note, _block(part.body), "", *cut]
    if part.kind == "reasoning":
        return [f"<details><summary>{html_text(part.title)}</summary>", "",
                _block(part.body), "", *cut, "</details>", ""]
    if part.kind == "tool":
        lines = [f"<details><summary>{html_text(part.title)}</summary>", ""]
        if part.body:
            lines += ["input:", "", _block(part.body), ""]
        if part.output:
            lines += ["output:", "", _block(part.output), ""]
        return [*lines, *cut, "</details>", ""]
    return [f"*{md_inline(part.title)}*", ""]
