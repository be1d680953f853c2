"""Repainting without a layout pass: after a layout Textual repaints the whole screen, which
cost two thirds of a step, so text that keeps its height only repaints its own widget."""

from __future__ import annotations

from textual.visual import VisualType
from textual.widgets import Static


def update_static(widget: Static, content: VisualType) -> None:
    """`Static.update`, asking for a layout only when the widget's height would change."""
    widget.update(content, layout=False)
    height = widget.styles.height
    if height is None or not height.is_auto or not widget.display:
        return
    width = widget.content_size.width
    if width <= 0:
        widget.refresh(layout=True)
        return
    needed = widget.get_content_height(widget.container_size, widget.app.size, width)
    limit = widget.styles.max_height
    if limit is not None and limit.is_cells:
        needed = min(needed, int(limit.value))
    if needed != widget.content_size.height:
        widget.refresh(layout=True)
