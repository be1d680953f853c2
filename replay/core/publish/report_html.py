"""The corpus report as one self-contained HTML file: tables, SVG charts, session list.

Charts are drawn by matplotlib (the optional extra `replay[report]`) as SVG and embedded as
`data:` images: the file needs no network and no script to be read, and an SVG shown as an
image cannot run anything. Without matplotlib the page has the same numbers as tables.
"""

from __future__ import annotations

import base64
import io
import logging
import warnings
from collections.abc import Sequence
from pathlib import Path

from replay.core.atomic import write_text_atomically
from replay.core.corpus.report import CorpusReport, SessionRow
from replay.core.publish.casestudy import anchor_for, html_page
from replay.core.publish.escaping import html_text as _e
from replay.core.safe import escape_controls
from replay.core.session.text import one_line, plural

Bars = Sequence[tuple[str, int | float]]


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "—"


def bar_chart_svg(title: str, bars: Bars, *, horizontal: bool = True,
                  unit: str = "empty turns") -> str | None:
    """One bar chart as an SVG document, or None when matplotlib is not installed.

    Nothing matplotlib says reaches stderr (the report's own lines are all that may): its log
    (a first import under load says "Matplotlib is building the font cache" after 5 s) has a
    handler that drops it unless the caller set up logging, and its warnings while drawing
    (a glyph missing from DejaVu Sans, for CJK text) are ignored: the SVG keeps its text as
    text (`svg.fonttype` none), drawn by the browser's fonts. A control character in a name
    is shown escaped, as on the terminal (raw, a NUL would make the SVG unreadable XML)."""
    _quiet_matplotlib_log()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _draw(title, bars, horizontal=horizontal, unit=unit)


def _quiet_matplotlib_log() -> None:
    """A do-nothing handler on the "matplotlib" logger (once): without one, logging's last
    resort prints its warnings bare on stderr; a handler of the caller's own on the root
    logger still gets them."""
    log = logging.getLogger("matplotlib")
    if not any(isinstance(handler, logging.NullHandler) for handler in log.handlers):
        log.addHandler(logging.NullHandler())


def _draw(title: str, bars: Bars, *, horizontal: bool, unit: str) -> str | None:
    try:
        from matplotlib.figure import Figure
    except ImportError:
        return None
    import matplotlib
    from matplotlib.ticker import MaxNLocator

    names = [escape_controls(name) for name, _ in bars]
    values = [value for _, value in bars]
    height = max(2.2, 0.9 + 0.32 * len(bars)) if horizontal else 3.2
    # Figure directly, not pyplot: no global state, no GUI backend, safe in any thread.
    figure = Figure(figsize=(5.4, height), layout="constrained")
    axes = figure.subplots()
    positions = list(range(len(bars)))
    with matplotlib.rc_context({"svg.hashsalt": title, "svg.fonttype": "none"}):
        if horizontal:
            axes.barh(positions, values, color="#4a78a8")
            axes.set_yticks(positions, names, parse_math=False)
            axes.invert_yaxis()
            axes.set_xlabel(unit)
            for position, value in zip(positions, values, strict=True):
                axes.text(value, position, f" {value:,}", va="center", fontsize=8)
        else:
            axes.bar(positions, values, color="#4a78a8")
            axes.set_xticks(positions, names, parse_math=False, rotation=30, ha="right")
            axes.set_ylabel(unit)
        figure.suptitle(title, x=0.02, ha="left", fontsize=11, parse_math=False)
        axes.spines[["top", "right"]].set_visible(False)
        # Counts are whole numbers: no 0.5 ticks.
        (axes.xaxis if horizontal else axes.yaxis).set_major_locator(MaxNLocator(integer=True))
        buffer = io.StringIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()


def _chart(title: str, bars: Bars, **options: object) -> str:
    svg = bar_chart_svg(title, bars, **options)  # type: ignore[arg-type]
    if svg is None:
        return ""
    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return (f'<figure><img alt="{_e(title)}: chart" '
            f'src="data:image/svg+xml;base64,{data}"></figure>')


def _table(column: str, counts: Sequence[tuple[str, int]], whole: int,
           unit: str = "empty turns") -> str:
    rows = "".join(f"<tr><td>{_e(name)}</td><td class=n>{count:,}</td>"
                   f"<td class=n>{_share(count, whole)}</td></tr>" for name, count in counts)
    return (f"<table><tr><th>{_e(column)}</th>"
            f"<th class=n>{_e(unit)}</th><th class=n>share</th></tr>{rows}</table>")


def _session_link(row: SessionRow) -> str:
    return f'<a href="#{_e(row.key)}">{_e(row.label)}</a>'


def _sessions_table(report: CorpusReport) -> str:
    rows = []
    for row in report.sessions:
        annotated = sum(1 for empty in row.empty_turns if empty["id"] in row.annotations)
        name = _session_link(row) if row.empty_turns else _e(row.label)
        rows.append(f"<tr><td>{name}</td><td>{_e(row.format)}</td>"
                    f"<td class=n>{row.turns:,}</td><td class=n>{len(row.empty_turns):,}</td>"
                    f"<td class=n>{_share(len(row.empty_turns), row.turns)}</td>"
                    f"<td class=n>{annotated:,}</td></tr>")
    return ("<table id=session-list><tr><th>session</th><th>format</th><th class=n>turns</th>"
            "<th class=n>empty</th><th class=n>rate</th><th class=n>annotated</th></tr>"
            + "".join(rows) + "</table>")


def _session_cases(row: SessionRow) -> str:
    """A session's empty turns: its case studies in brief, each with its own anchor."""
    items = []
    for empty in row.empty_turns:
        number = empty["index"] + 1
        notes = row.annotations.get(empty["id"], [])
        labels = "".join(
            f"<li><b>{_e(note.label)}</b> · {_e(note.reviewer or 'unknown')} · "
            f"{_e(note.confidence)}{' · ' + _e(note.note) if note.note else ''}</li>"
            for note in notes) or "<li class=muted>not annotated</li>"
        items.append(
            f'<div class="turn empty" id="{_e(anchor_for(row.key, number))}"><header>'
            f"#{number} {_e(empty['role'])} · {_e((empty['timestamp'] or 'no time')[:19])}"
            f"</header><dl><dt>Reason</dt><dd>{_e(empty['reason'])}</dd>"
            f"<dt>Evidence</dt><dd>{_e(' · '.join(empty['evidence']) or 'none')}</dd>"
            f"<dt>Suggestion</dt><dd>{_e(empty['suggestion'] or 'none')}</dd>"
            f"<dt>Labels</dt><dd><ul>{labels}</ul></dd></dl></div>")
    return (f'<section id="{_e(row.key)}"><h3>{_e(row.label)}</h3>'
            f"<p class=muted>{_e(row.format)} · {row.turns:,} turns · {_e(row.path)}</p>"
            f"{''.join(items)}<p class=muted>Turns before and after, as excerpts: "
            f"<code>replay export {_e(row.path)} --format html --all-empty</code></p>"
            "</section>")


def render_report_html(report: CorpusReport, top: int = 10) -> tuple[str, bool]:
    """The page, and whether it has charts."""
    empty = report.empty
    parts: list[str] = [
        "<h1>Corpus report</h1>",
        f"<p id=summary><b>{len(report.sessions):,} sessions</b> · {report.turns:,} turns · "
        f"<b>{empty:,} empty turns</b> ({_share(empty, report.turns)} of turns)"
        + (f" · {report.skipped_records:,} records skipped" if report.skipped_records else "")
        + "</p>",
    ]
    charts: list[str] = []
    formats = sorted(report.formats.items())
    format_rows = "".join(
        f"<tr><td>{_e(name)}</td><td class=n>{count.sessions:,}</td>"
        f"<td class=n>{count.turns:,}</td><td class=n>{count.empty:,}</td></tr>"
        for name, count in formats)
    parts.append("<h2>By format</h2><table><tr><th>format</th><th class=n>sessions</th>"
                 f"<th class=n>turns</th><th class=n>empty turns</th></tr>{format_rows}</table>")
    charts.append(_chart("Empty turns by format", [(n, c.empty) for n, c in formats]))
    if empty:
        sections = [
            ("By role", "role", report.roles.most_common()),
            ("By reason", "reason", report.reasons.most_common()),
            ("By suggestion", "suggestion", report.suggestions.most_common()),
        ]
        for title, column, counts in sections:
            parts.append(f"<h2>{_e(title)}</h2>" + _table(column, counts, empty))
            charts.append(_chart(f"Empty turns {title.lower()}", counts))
        gaps = report.gap_rows()
        parts.append("<h2>Gap before the empty turn</h2>"
                     + _table("gap", gaps, empty))
        charts.append(_chart("Gap before the empty turn", gaps, horizontal=False))
        silent = report.silent_sessions(top)
        silent_rows = "".join(
            f"<tr><td>{_session_link(row)}</td><td>{_e(row.format)}</td>"
            f"<td class=n>{row.turns:,}</td><td class=n>{len(row.empty_turns):,}</td>"
            f"<td class=n>{_share(len(row.empty_turns), row.turns)}</td></tr>" for row in silent)
        parts.append(f"<h2>Most silent sessions (top {top})</h2><table><tr><th>session</th>"
                     "<th>format</th><th class=n>turns</th><th class=n>empty</th>"
                     f"<th class=n>rate</th></tr>{silent_rows}</table>")
        charts.append(_chart("Most silent sessions: share of empty turns",
                             [(one_line(row.label, 36), round(100 * row.rate, 1))
                              for row in silent],
                             unit="% of turns"))
    if report.labels:
        total = sum(report.labels.values())
        title = f"Labels ({report.annotated_turns:,} of {empty:,} empty turns annotated)"
        parts.append(f"<h2>{_e(title)}</h2>"
                     + _table("label", report.labels.most_common(), total, "annotations"))
        charts.append(_chart("Labels", report.labels.most_common(), unit="annotations"))
        parts.append(_agreement_html(report))
    drawn = [chart for chart in charts if chart]
    if drawn:
        parts.insert(2, "<h2>Charts</h2><div class=charts>" + "".join(drawn) + "</div>")
    parts.append("<h2>Sessions</h2>" + _sessions_table(report))
    cases = [_session_cases(row) for row in report.sessions if row.empty_turns]
    if cases:
        parts.append("<h2>Empty turns by session</h2>" + "".join(cases))
    title = f"replay report · {len(report.sessions):,} sessions"
    return html_page(title, "\n".join(parts)), bool(drawn)


def _agreement_html(report: CorpusReport) -> str:
    agreement = report.agreement
    if agreement is None:
        return "<h2>Agreement</h2><p class=muted>Only one reviewer annotated.</p>"

    def number(value: float | None) -> str:
        return "—" if value is None else f"{value:.3f}"

    rows = "".join(f"<tr><td>{_e(pair.first)} · {_e(pair.second)}</td><td class=n>{pair.n:,}"
                   f"</td><td class=n>{number(pair.observed)}</td>"
                   f"<td class=n>{number(pair.kappa)}</td></tr>" for pair in agreement.pairs)
    reason = f" ({_e(agreement.alpha_reason)})" if agreement.alpha_reason else ""
    return ("<h2>Agreement</h2><table><tr><th>reviewers</th><th class=n>items</th>"
            f"<th class=n>observed</th><th class=n>Cohen's kappa</th></tr>{rows}</table>"
            f"<p>Krippendorff's alpha: <b>{number(agreement.alpha)}</b> over "
            f"{plural(agreement.alpha_items, 'item')}{reason} · "
            f"{plural(len(agreement.disagreements), 'disagreement')}</p>")


def write_report_html(report: CorpusReport, path: str | Path, top: int = 10) -> bool:
    """Write the page atomically; True when it has charts.

    Raises:
        OSError: the file cannot be written.
    """
    page, charted = render_report_html(report, top)
    write_text_atomically(Path(path), page)
    return charted
