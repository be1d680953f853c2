"""Reading back what the app drew: the text and the segments of the screen, as a terminal
would receive them (not the widgets' state)."""

from __future__ import annotations

import io

from rich.color import Color as RichColor
from rich.console import Console
from rich.segment import Segment
from textual.app import App


def screen_segments(app: App[object]) -> list[list[Segment]]:
    """The screen as lines of segments, composed the way the driver composes them."""
    width, height = app.size
    update = app.screen._compositor.render_update(  # noqa: SLF001 - as export_screenshot does
        full=True, screen_stack=app._background_screens)  # noqa: SLF001
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True,
                      color_system="truecolor", legacy_windows=False, safe_box=False)
    segments = list(console.render(update))
    return [list(line) for line in Segment.split_lines(segments)]


def screen_text(app: App[object]) -> str:
    """The characters on screen, one line per row."""
    return "\n".join("".join(segment.text for segment in line if not segment.control)
                     for line in screen_segments(app))


def _luminance(color: RichColor) -> float:
    red, green, blue = color.get_truecolor()

    def channel(value: int) -> float:
        scaled = value / 255
        return scaled / 12.92 if scaled <= 0.03928 else ((scaled + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(red) + 0.7152 * channel(green) + 0.0722 * channel(blue)


def contrast(foreground: RichColor, background: RichColor) -> float:
    """WCAG contrast ratio of two colours (1 = invisible, 21 = black on white)."""
    lighter, darker = sorted((_luminance(foreground), _luminance(background)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def text_contrast(app: App[object], text: str) -> float:
    """The lowest contrast of the characters of `text` where it first appears on screen;
    raises AssertionError when it is not on screen."""
    for line in screen_segments(app):
        row = "".join(segment.text for segment in line if not segment.control)
        start = row.find(text)
        if start < 0:
            continue
        lowest = 21.0
        column = 0
        for segment in line:
            if segment.control:
                continue
            end = column + len(segment.text)
            if end > start and column < start + len(text) and segment.text.strip():
                style = segment.style
                assert style is not None and style.color is not None \
                    and style.bgcolor is not None, f"{segment!r} has no colours"
                lowest = min(lowest, contrast(style.color, style.bgcolor))
            column = end
        return lowest
    raise AssertionError(f"{text!r} is not on screen:\n{screen_text(app)}")
