"""Write every bundled sample session into sample_sessions/ (deterministic, standard library only).

Run from anywhere: `python tools/make_samples.py`. Ids, timestamps, hashes and signatures come
from seeded generators, so a rerun rewrites byte-identical files. The stories are modelled on the
case studies in ../shared/seeds/ (situations and figures only; every sentence here is new).

Layout (`tools/samples/`): `common.py` holds the helpers; one builder module per format
(`opencode.py`, `claude_code.py`, `codex.py`) knows how that tool writes its records; one
module per story returns the records of one session (the small ones are plain data).
`SAMPLES` below is the whole list: a new sample is one story module and one line here.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # `samples` beside this file

from samples.cache_expiry import cache_expiry  # noqa: E402
from samples.common import Json, write_json, write_jsonl  # noqa: E402
from samples.deploy_pivot import deploy_pivot  # noqa: E402
from samples.dry_run_flag import dry_run_flag  # noqa: E402
from samples.flaky_test import flaky_test  # noqa: E402
from samples.hidden_state import hidden_state  # noqa: E402
from samples.paginate_fix import paginate_fix  # noqa: E402
from samples.refactor import refactor  # noqa: E402
from samples.support_bot import support_bot  # noqa: E402
from samples.torch_revert import torch_revert  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "sample_sessions"

SAMPLES: tuple[tuple[str, Callable[[], Json | list[Json]]], ...] = (
    ("torch-revert.opencode.json", torch_revert),
    ("hidden-state.opencode.json", hidden_state),
    ("deploy-pivot.opencode.json", deploy_pivot),
    ("refactor.claude-code.jsonl", refactor),
    ("flaky-test.codex.jsonl", flaky_test),
    ("support-bot.chat.json", support_bot),
    ("paginate-fix.mini-swe-agent.traj.json", paginate_fix),
    ("cache-expiry.swe-agent.traj", cache_expiry),
    ("dry-run-flag.opencode-run.jsonl", dry_run_flag),
)
"""Every sample: its file name (`.jsonl` is written a record per line) and its story."""


def write_all(directory: Path = OUT) -> list[Path]:
    """Write every sample into `directory`; returns the paths written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, story in SAMPLES:
        records = story()
        if name.endswith(".jsonl"):
            written.append(write_jsonl(directory, name, records))  # type: ignore[arg-type]
        else:
            written.append(write_json(directory, name, records))  # type: ignore[arg-type]
    return written


def main() -> None:
    """Write every sample into sample_sessions/ and print their sizes."""
    for path in write_all():
        print(f"{path.stat().st_size:>9,}  {path.name}")


if __name__ == "__main__":
    main()
