"""`replay share --as html`: the whole session as one self-contained page with a player.

Everything is in the file: the style sheet and the player script are inline, fonts are the
reader's own system fonts, and the Content-Security-Policy allows only that style and that
script (by their digests): no request of any kind leaves the page, so it opens the same from
a mail attachment. Without scripts the page is a complete transcript; with them, a small
player steps and plays it as the app does and pauses by itself at every empty turn.

Every turn is an `<article data-turn="N" id="N">` (`page.html#N` opens there); an empty one
also has `data-empty="<reason>"` and its banner: evidence, suggestion, every annotation.
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib import resources

from replay.core.detection.empty import format_duration
from replay.core.index.navigation import SPEEDS
from replay.core.publish.casestudy import empty_facts_html, html_head, script_digest
from replay.core.publish.escaping import html_text as _e
from replay.core.publish.share_model import (
    SharedPart,
    SharedSession,
    SharedTurn,
    TimelineCell,
    clock,
    gap_text,
)
from replay.core.session.text import one_line, plural

KEYS = "keys: space play · ←/→ h/l step · [ ] empty turns · + − speed · Home End"
"""The player's keys, as the app's."""


def _resource(name: str) -> str:
    return resources.files("replay.core.publish").joinpath(name).read_text(encoding="utf-8")


def player_script() -> str:
    """The player's code, inlined in every page."""
    return _resource("share_player.js")


def page_style() -> str:
    """The page's style sheet."""
    return _resource("share_page.css")


def html_chunks(shared: SharedSession) -> Iterator[str]:
    """The page, a piece at a time (a big session is never one string in memory)."""
    script = player_script()
    title = f"{shared.title} · replay share"
    attributes = (f'class="share" data-turns="{shared.count}" '
                  f'data-empty-turns="{len(shared.empties)}" '
                  f'data-idle-cap="{shared.idle_cap:g}"'
                  + (' data-big="folded"' if shared.big else ""))
    yield from html_head(title, style=page_style(), script_hashes=[script_digest(script)],
                         body_attributes=attributes)
    yield _header(shared)
    yield '<main id="turns">\n'
    for turn in shared.turns():
        yield turn_html(turn, shared)
    yield "</main>\n"
    if not shared.count:
        yield '<p class="muted">This session has no turns.</p>\n'
    yield f"<script>{script}</script>\n</body></html>\n"


def _header(shared: SharedSession) -> str:
    session = shared.session
    facts = [_e(session.format), plural(shared.count, "turn"),
             plural(len(shared.empties), "empty turn"),
             f"{shared.annotated:,} annotated", _e(shared.path)]
    if session.session_id:
        facts.append(f"session {_e(shared.clean(session.session_id))}")
    span = _span(shared)
    if span:
        facts.insert(2, span)
    notice = f'<p class="notice" id="notice">{_e(shared.notice)}</p>' if shared.notice else ""
    speeds = "–".join(f"{speed:g}x" for speed in (SPEEDS[0], SPEEDS[-1]))
    buttons = "".join(
        f'<button type="button" id="player-{action}" data-action="{action}" '
        f'title="{_e(tip)}">{_e(text)}</button>'
        for action, text, tip in (
            ("first", "first", "First turn (Home)"), ("previous-empty", "[", "Previous empty turn"),
            ("previous", "◀", "Previous turn (← h)"), ("play", "play", "Play/pause (space)"),
            ("next", "▶", "Next turn (→ l)"), ("next-empty", "]", "Next empty turn"),
            ("last", "last", "Last turn (End)"), ("slower", "−", "Slower (-)"),
            ("faster", "+", "Faster (+)")))
    return (f'<header id="top"><h1>{_e(shared.title)}</h1>'
            f'<p class="meta">{" · ".join(facts)}</p>{notice}'
            f'<nav id="timeline" aria-label="Timeline: text per turn, empty turns marked">'
            f'{"".join(_cell(cell) for cell in shared.timeline())}</nav>'
            f'<div id="player" hidden>{buttons}'
            f'<span id="player-status" aria-live="polite"></span>'
            f'<span class="keys" title="plays at {speeds} on the real clock, pauses over '
            f'{shared.idle_cap:g} s cut to {shared.idle_cap:g} s; stops at every empty turn">'
            f"{_e(KEYS)}</span></div></header>\n")


def _span(shared: SharedSession) -> str:
    turns = shared.session.turns
    if not turns:
        return ""
    first, last = shared.session.started, None
    for index in range(len(turns) - 1, max(-1, len(turns) - 50), -1):
        last = turns[index].time
        if last is not None:
            break
    if first is None or last is None or last <= first:
        return ""
    return f"{format_duration(last - first)} long"


def _cell(cell: TimelineCell) -> str:
    classes = [f"l{cell.level}"]
    span = f"#{cell.first}" if cell.first == cell.last else f"#{cell.first}–#{cell.last}"
    target = cell.first
    if cell.empty:
        classes.append("mark")
        if cell.annotated:
            classes.append("done")
        target = cell.empty[0]
        span += " · empty " + ", ".join(f"#{number}" for number in cell.empty[:5]) + \
            ("…" if len(cell.empty) > 5 else "")
    return (f'<a href="#{target}" class="{" ".join(classes)}" data-first="{cell.first}" '
            f'data-last="{cell.last}" title="{_e(span)}"></a>')


def turn_html(turn: SharedTurn, shared: SharedSession) -> str:
    """One turn as an `<article>`."""
    classes = ["turn", _e(turn.role)] + (["placeholder"] if turn.placeholder else [])
    attributes = [f'id="{turn.name}"', f'data-turn="{turn.name}"',
                  f'data-delay="{turn.delay:.3f}"', f'data-role="{_e(turn.role)}"']
    banner = ""
    if turn.empty is not None:
        classes.append("empty")
        attributes.append(f'data-empty="{_e(turn.empty.reason)}"')
        attributes.append(f'data-ordinal="{turn.ordinal}"')
        banner = _banner(turn, shared)
    heading = [f'<a href="#{turn.name}">#{turn.name}</a>',
               f'<span class="role">{_e(turn.role)}</span>',
               "<i>not in the file</i>" if turn.placeholder else _e(clock(turn))]
    if turn.gap is not None and turn.gap >= 1:
        heading.append(_e(gap_text(turn)))
    if turn.model:
        heading.append(_e(shared.clean(turn.model)))
    content = "".join(part_html(part) for part in turn.parts)
    if not content and turn.empty is None:
        content = '<p class="marker">(nothing)</p>'
    if shared.big and content and turn.empty is None:
        content = (f'<details class="fold"><summary>{_e(_preview(turn))}</summary>'
                   f"{content}</details>")
    return (f'<article class="{" ".join(classes)}" {" ".join(attributes)}>'
            f"<header>{' · '.join(heading)}</header>{banner}{content}</article>\n")


def _preview(turn: SharedTurn) -> str:
    """The fold line of a big session's turn: its first words, or what it holds."""
    for part in turn.parts:
        if part.kind == "text" and part.body.strip():
            return one_line(part.body, 140)
    tools = [part.title for part in turn.parts if part.kind == "tool"]
    if tools:
        return "tools: " + one_line(", ".join(tools), 140)
    return f"{len(turn.parts)} parts"


def _banner(turn: SharedTurn, shared: SharedSession) -> str:
    empty = turn.empty
    assert empty is not None
    gap = f" · {gap_text(turn)}" if gap_text(turn) else ""
    rows = empty_facts_html(empty, turn.annotations, shared.label_titles)
    if empty.suggestion and empty.suggestion_reasons:
        why = _e("; ".join(empty.suggestion_reasons))
        rows = [(name, value + (f" <span class=muted>({_e(empty.suggestion_confidence or '')}"
                                f": {why})</span>" if name == "Suggestion" else ""))
                for name, value in rows]
    facts = "".join(f"<dt>{name}</dt><dd>{value}</dd>" for name, value in rows)
    return (f'<section class="banner"><p class="headline"><b>EMPTY TURN {turn.ordinal} / '
            f"{len(shared.empties)}</b> {_e(turn.headline)} ({_e(empty.reason)}){_e(gap)}</p>"
            f"<dl>{facts}</dl></section>")


def part_html(part: SharedPart) -> str:
    """One part: prose as text, reasoning and tool calls folded, markers on one line."""
    cut = (f'<p class="cut">… {part.cut:,} more characters not in this page (the transcript '
           f"holds them)</p>") if part.cut else ""
    if part.kind == "text":
        if not part.body.strip():
            return ""
        css = "text synthetic" if part.synthetic else "text"
        return f'<div class="{css}">{_e(part.body)}</div>{cut}'
    if part.kind == "reasoning":
        return (f'<details class="reasoning"><summary>{_e(part.title)}</summary>'
                f"<pre>{_e(part.body)}</pre>{cut}</details>")
    if part.kind == "tool":
        inner = ""
        if part.body:
            inner += f'<div class="label">input</div><pre>{_e(part.body)}</pre>'
        if part.output:
            inner += f'<div class="label">output</div><pre>{_e(part.output)}</pre>'
        return (f'<details class="tool"><summary>{_e(part.title)}</summary>{inner}{cut}'
                "</details>")
    return f'<p class="marker">{_e(part.title)}</p>'
