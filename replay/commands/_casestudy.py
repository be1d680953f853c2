"""Writing case studies (`replay export --format md|html`) to a file or standard output."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from replay.commands._common import EXIT_OK, cannot_write
from replay.core.atomic import write_text_atomically
from replay.core.publish.casestudy import CaseStudy, render_html, render_markdown
from replay.core.safe import show_path


def write_case_studies(studies: Sequence[CaseStudy], kind: str, output: str | None) -> int:
    """Render the studies as `md` or `html` and write them where `-o` says."""
    text = render_markdown(studies) if kind == "md" else render_html(studies)
    if output in (None, "-"):
        sys.stdout.flush()
        sys.stdout.buffer.write(text.encode("utf-8"))
        sys.stdout.flush()
        where = "standard output"
    else:
        try:
            write_text_atomically(Path(output), text)
        except OSError as error:
            return cannot_write(output, error)
        where = show_path(output)
    noun = "case study" if len(studies) == 1 else "case studies"
    print(f"replay: wrote {len(studies)} {noun} ({kind}) to {where}", file=sys.stderr, flush=True)
    return EXIT_OK
