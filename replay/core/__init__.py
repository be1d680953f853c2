"""The UI-free core of replay: what happens to a session, stage by stage.

Nothing in this package imports Textual or Rich; headless commands and tests use it directly.
A session goes through the stages in `STAGES` order, and a stage imports only the stages
before it (and the utilities at the top of this package: `safe`, `escaped_find`, `files`,
`atomic`, `paths`), never a later one; `tests/core/test_layering.py` keeps it so. Each stage package's
docstring says what it holds.

- `session`: the data model of a transcript (turns, parts, references to a turn), the
  harness's wrapper text, the label set.
- `detection`: what an empty turn is, and the evidence beside it.
- `index`: the compact column index of a big session, search over its bytes, moving through
  a session (stops, search, go-to, playback timing).
- `readers`: every transcript format, detection of the format from content, the raw record
  behind a turn, input that can be read only once.
- `suggest`: the suggested interpretation of an empty turn, its signals and evaluation.
- `live`: following a growing session (tailing, when a turn is complete, stalls).
- `annotate`: the annotation journal, annotations, agreement, review queues.
- `corpus`: many sessions at once: the headless scan, tasks, the process pool, the report.
- `publish`: what leaves the machine: CSV/JSONL export, case studies, HTML reports.
- `discovery`: the sessions every agent keeps on this machine, found in their standard
  folders, counted by the corpus scan, opened by id; only the commands and the UI use it.
"""

STAGES: tuple[str, ...] = (
    "session",
    "detection",
    "index",
    "readers",
    "suggest",
    "live",
    "annotate",
    "corpus",
    "publish",
    "discovery",
)
"""The stage packages in the order a session passes through them."""

UTILITIES: tuple[str, ...] = ("safe", "escaped_find", "files", "atomic", "paths")
"""Modules at the top of the core that every stage may import; they import no stage."""
