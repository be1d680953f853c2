"""Case studies: each empty turn with its reading, its labels and the turns around it.

What a reviewer pastes into a write-up. Rendered as Markdown (excerpts in code fences, so
no transcript text is read as markup) or as one HTML page (everything escaped, and a
Content-Security-Policy that forbids scripts, should anything slip through).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from replay.core.annotate.annotations import Annotation, session_identity, session_key
from replay.core.detection.empty import (
    DEFAULT_RULES,
    EmptyTurn,
    Suggester,
    find_empty_turns,
    is_visible,
)
from replay.core.publish.escaping import html_text as _e
from replay.core.publish.escaping import md_fence as _fence
from replay.core.publish.escaping import md_inline as _md_inline
from replay.core.safe import escape_controls
from replay.core.session.harness import as_shown
from replay.core.session.labels import LabelSet
from replay.core.session.model import Kind, Session, Turn

CONTEXT_TURNS = 2
"""Turns with visible content shown before and after each empty turn."""

EXCERPT_CHARS = 600
"""Length of each excerpt."""

SEARCH_LIMIT = 500
"""How many turns to walk past looking for visible neighbours."""

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
"""The HTML pages' policy: inline styles and data images only, never a script or a fetch."""


@dataclass(frozen=True, slots=True)
class Excerpt:
    """A turn shown beside an empty one."""

    number: int
    """Its `#N`."""
    role: str
    """Who wrote it."""
    timestamp: str | None
    """When."""
    text: str
    """Its visible content, shortened (untrusted: escape it when shown)."""


@dataclass(slots=True)
class CaseStudy:
    """One empty turn, written up."""

    session_label: str
    """The session's title, id or file name."""
    session_id: str
    """The id annotations are keyed by."""
    key: str
    """The session's file-name-safe key (anchors: `KEY-N`)."""
    path: str
    """Where the session was read from."""
    format: str
    """Reader name."""
    empty: EmptyTurn
    """The empty turn as `scan` reports it."""
    annotations: list[Annotation] = field(default_factory=list)
    """Every reviewer's latest annotation of it."""
    label_titles: dict[str, str] = field(default_factory=dict)
    """Title of each label used."""
    before: list[Excerpt] = field(default_factory=list)
    """Visible turns just before it, oldest first."""
    after: list[Excerpt] = field(default_factory=list)
    """Visible turns just after it."""

    @property
    def number(self) -> int:
        """The `#N` a person sees."""
        return self.empty.index + 1

    @property
    def name(self) -> str:
        """`#N`, or `#N+` for the missing reply after request #N."""
        return f"#{self.number}{'+' if self.empty.is_placeholder else ''}"

    @property
    def anchor(self) -> str:
        """Its id in an HTML page: unique across the sessions of a corpus."""
        return anchor_for(self.key, self.number)

    def shown(self, heading: str) -> list[Excerpt | str]:
        """The Before (or After) excerpts in order, with a line such as `#29 not shown: no
        visible content` wherever turns were passed over, so the numbers never jump unsaid."""
        excerpts = self.before if heading == "Before" else self.after
        # The empty turn's own place in the numbering; a missing reply sits after its request.
        here = self.number + (1 if self.empty.is_placeholder else 0) if heading == "Before" \
            else self.number
        numbers = [item.number for item in excerpts]
        bounds = numbers + [here] if heading == "Before" else [here] + numbers
        items: list[Excerpt | str] = []
        for excerpt, (low, high) in zip(excerpts, pairwise(bounds), strict=True):
            gap = _passed_over(low, high)
            if heading == "Before":
                items.append(excerpt)
            if gap:
                items.append(gap)
            if heading == "After":
                items.append(excerpt)
        return items


def _passed_over(low: int, high: int) -> str | None:
    """`#29 not shown: no visible content` for the turns strictly between #low and #high."""
    if high - low <= 1:
        return None
    if high - low == 2:
        return f"#{low + 1} not shown: no visible content"
    return f"#{low + 1}–#{high - 1} not shown: {high - low - 1} turns without visible content"


def anchor_for(key: str, number: int) -> str:
    """The HTML id of the case study of turn #`number` of the session with this key."""
    return f"{key}-{number}"


def _text_of(session: Session, turn: Turn, limit: int) -> str:
    pieces: list[str] = []
    for part in session.full_parts(turn):
        if not is_visible(part):
            continue
        if part.kind == Kind.TEXT:
            pieces.append(as_shown(part.text or "") or part.text or "")
        elif part.kind in (Kind.TOOL_CALL, Kind.TOOL_RESULT):
            pieces.append(f"[{part.name or 'tool'}] {part.input or part.text or ''}")
        else:
            pieces.append(f"[{part.kind}: {part.name or ''}]")
        if sum(len(piece) for piece in pieces) > limit:
            break
    text = "\n".join(piece.strip() for piece in pieces).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _neighbours(session: Session, index: int, step: int, count: int) -> list[Turn]:
    found: list[Turn] = []
    position = index + step
    walked = 0
    while 0 <= position < len(session.turns) and walked < SEARCH_LIMIT and len(found) < count:
        turn = session.turns[position]
        if any(is_visible(part) for part in turn.parts):
            found.append(turn)
        position += step
        walked += 1
    return found if step > 0 else found[::-1]


def _excerpt(session: Session, turn: Turn, limit: int) -> Excerpt:
    return Excerpt(turn.index + 1, turn.role, turn.timestamp, _text_of(session, turn, limit))


def case_studies(
    session: Session,
    annotations: Iterable[Annotation],
    labels: LabelSet,
    *,
    all_empty: bool = False,
    suggester: Suggester | None = None,
    context: int = CONTEXT_TURNS,
    limit: int = EXCERPT_CHARS,
) -> list[CaseStudy]:
    """The case studies of a session's annotated (or, with `all_empty`, every) empty turns."""
    identity = session_identity(session)
    by_turn: dict[str, list[Annotation]] = {}
    for note in annotations:
        if note.session_id == identity and not note.withdrawn:
            by_turn.setdefault(note.turn_id, []).append(note)
    studies: list[CaseStudy] = []
    # A missing reply is written when annotated (the rule that found it was on in the app).
    for empty in find_empty_turns(session, DEFAULT_RULES.with_options(missing_replies=True),
                                  suggester):
        notes = sorted(by_turn.get(empty.id, []), key=lambda note: (note.reviewer, note.time))
        if not notes and (not all_empty or empty.is_placeholder):
            continue
        # Before a missing reply comes its request.
        before_from = empty.index + 1 if empty.is_placeholder else empty.index
        titles = {note.label: label.title for note in notes
                  if (label := labels.get(note.label)) is not None}
        studies.append(CaseStudy(
            session_label=session.label, session_id=identity, key=session_key(session),
            path=session.path,
            format=session.format, empty=empty, annotations=notes, label_titles=titles,
            before=[_excerpt(session, turn, limit)
                    for turn in _neighbours(session, before_from, -1, context)],
            after=[_excerpt(session, turn, limit)
                   for turn in _neighbours(session, empty.index, 1, context)]))
    return studies


def _when(timestamp: str | None) -> str:
    return (timestamp or "no time").replace("T", " ")[:19]


def empty_facts_markdown(empty: EmptyTurn, annotations: Sequence[Annotation],
                         label_titles: dict[str, str]) -> list[str]:
    """An empty turn's reading and every reviewer's label, as Markdown list items (the case
    studies and `share --as md` write the same lines)."""
    evidence = " · ".join(empty.evidence) or "none"
    lines = [f"- **Reason:** {_md_inline(empty.reason)}",
             f"- **Evidence:** {_md_inline(evidence)}",
             f"- **Suggestion:** {_md_inline(empty.suggestion or 'none')}"]
    if not annotations:
        lines.append("- **Label:** not annotated")
    for note in annotations:
        title = label_titles.get(note.label)
        label = f"{note.label} ({title})" if title else note.label
        lines.append(f"- **Label:** {_md_inline(label)} · reviewer "
                     f"{_md_inline(note.reviewer or 'unknown')} · confidence "
                     f"{_md_inline(note.confidence)}")
        if note.note:
            lines.append(f"  - **Note:** {_md_inline(note.note)}")
    return lines


def empty_facts_html(empty: EmptyTurn, annotations: Sequence[Annotation],
                     label_titles: dict[str, str]) -> list[tuple[str, str]]:
    """An empty turn's reading and every reviewer's label as (term, escaped HTML) rows of a
    `<dl>` (the case studies and the `share` page show the same rows)."""
    rows = [("Reason", _e(empty.reason)),
            ("Evidence", _e(" · ".join(empty.evidence) or "none")),
            ("Suggestion", _e(empty.suggestion or "none"))]
    if not annotations:
        rows.append(("Label", "<span class=muted>not annotated</span>"))
    for note in annotations:
        title = label_titles.get(note.label)
        label = f"<b>{_e(note.label)}</b>" + (f" ({_e(title)})" if title else "")
        rows.append(("Label", f"{label} · reviewer {_e(note.reviewer or 'unknown')} · "
                              f"confidence {_e(note.confidence)}"))
        if note.note:
            rows.append(("Note", _e(note.note)))
    return rows


def render_markdown(studies: Sequence[CaseStudy]) -> str:
    """The case studies as Markdown."""
    lines: list[str] = ["# Case studies", ""]
    if not studies:
        lines += ["No annotated empty turns (use --all-empty for every empty turn).", ""]
    for study in studies:
        empty = study.empty
        lines += [f"## {_md_inline(study.session_label)} · {study.name}", ""]
        lines.append(f"- **Session:** {_md_inline(study.session_id)} ({study.format}, "
                     f"{_md_inline(study.path)})")
        lines.append(f"- **Turn:** {study.name} · {empty.role} · {_when(empty.timestamp)}")
        lines += empty_facts_markdown(empty, study.annotations, study.label_titles)
        lines.append("")
        for heading, excerpts in (("Before", study.before), ("After", study.after)):
            lines += [f"### {heading}", ""]
            if not excerpts:
                lines += ["(nothing)", ""]
            for item in study.shown(heading) if excerpts else []:
                if isinstance(item, str):
                    lines += [f"*{item}*", ""]
                    continue
                lines += [f"**#{item.number} {item.role}** · {_when(item.timestamp)}", "",
                          _fence(escape_controls(item.text)), ""]
    return "\n".join(lines).rstrip("\n") + "\n"


STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;
color:#1d2430;background:#fbfbf8}
h1{font-size:1.6rem}h2{font-size:1.25rem;margin-top:2.2rem;border-bottom:1px solid #ccd}
h3{font-size:1.05rem;margin:1rem 0 .3rem}
table{border-collapse:collapse;margin:.5rem 0 1rem}
th,td{padding:.2rem .6rem;text-align:left;vertical-align:top;border-bottom:1px solid #e3e3ea}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.15rem 1rem}dt{font-weight:600}
dd{margin:0}
.turn{border-left:3px solid #9ab;padding:.2rem .8rem;margin:.4rem 0;background:#fff}
.turn header{font-size:.85rem;color:#556}
.turn pre{white-space:pre-wrap;word-break:break-word;margin:.3rem 0;font-size:.85rem}
.empty{border-left-color:#d90;background:#fff8e8}
.muted{color:#667}
.charts{display:flex;flex-wrap:wrap;gap:1rem}.charts figure{margin:0}
.charts img{max-width:100%;background:#fff;border:1px solid #e3e3ea}
"""
"""Shared by the case-study page and the report page."""


def html_page(title: str, body: str) -> str:
    """A complete, self-contained HTML document around an already escaped body."""
    return "".join(html_head(title)) + f"<body>\n{body}\n</body></html>\n"


def html_head(title: str, *, style: str = STYLE, script_hashes: Sequence[str] = (),
              body_attributes: str = "") -> list[str]:
    """The start of a self-contained page, to `<body>`: the policy allows the inline
    `style`, data images, and only the scripts whose SHA-256 digests (base64) are given;
    nothing is ever fetched."""
    policy = CSP
    if script_hashes or style is not STYLE:
        policy = ("default-src 'none'; img-src data:; base-uri 'none'; form-action 'none'; "
                  f"style-src '{_digest(style)}'; script-src "
                  + (" ".join(f"'{digest}'" for digest in script_hashes) or "'none'"))
    return ['<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n',
            f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n',
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
            f"<title>{_e(title)}</title><style>{style}</style></head>\n",
            f"<body{(' ' + body_attributes) if body_attributes else ''}>\n"]


def _digest(text: str) -> str:
    """A CSP hash source for an inline style or script."""
    import base64
    import hashlib

    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()


def script_digest(text: str) -> str:
    """The CSP hash source (`sha256-...`) of an inline script."""
    return _digest(text)


def _turn_html(item: Excerpt | str) -> str:
    if isinstance(item, str):
        return f"<p class=muted>{_e(item)}</p>"
    return (f'<div class="turn"><header>#{item.number} {_e(item.role)} · '
            f"{_e(_when(item.timestamp))}</header><pre>{_e(item.text)}</pre></div>")


def study_html(study: CaseStudy) -> str:
    """One case study as an HTML fragment (an `<article>` whose id is its anchor)."""
    empty = study.empty
    rows = [("Session", f"{_e(study.session_label)} <span class=muted>({_e(study.format)}, "
                        f"{_e(study.path)})</span>"),
            ("Turn", f"{study.name} · {_e(empty.role)} · {_e(_when(empty.timestamp))}"),
            *empty_facts_html(empty, study.annotations, study.label_titles)]
    facts = "".join(f"<dt>{name}</dt><dd>{value}</dd>" for name, value in rows)
    before = "".join(_turn_html(item) for item in study.shown("Before")) if study.before \
        else "<p class=muted>nothing</p>"
    after = "".join(_turn_html(item) for item in study.shown("After")) if study.after \
        else "<p class=muted>nothing</p>"
    marker = (f'<div class="turn empty"><header>{study.name} {_e(empty.role)} · '
              f"{_e(_when(empty.timestamp))}</header><pre>"
              f"{'(no reply: not in the file)' if empty.is_placeholder else '(empty turn)'}"
              "</pre></div>")
    return (f'<article id="{_e(study.anchor)}"><h2>{_e(study.session_label)} · '
            f"{study.name}</h2><dl>{facts}</dl><h3>Before</h3>{before}{marker}"
            f"<h3>After</h3>{after}</article>")


def render_html(studies: Sequence[CaseStudy], title: str = "Case studies") -> str:
    """The case studies as one self-contained HTML page."""
    if studies:
        body = "".join(study_html(study) for study in studies)
    else:
        body = ("<p>No annotated empty turns (use <code>--all-empty</code> for every "
                "empty turn).</p>")
    return html_page(title, f"<h1>{_e(title)}</h1>\n{body}")
