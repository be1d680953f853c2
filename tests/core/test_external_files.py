"""The public SpecStory and Aider files the evaluation points at, read like ../shared/realdata.

They are not in the repository (other people's files are referenced, never copied): the
tests read them from the evaluation cache (`$REPLAY_EVAL_CACHE` or `../eval-cache`) and are
skipped for any file not there.
"""

from __future__ import annotations

import pytest

from replay.core.detection.empty import find_empty_turns
from replay.core.readers import detect_reader, load_sessions
from replay.core.suggest.evaluate import default_roots, read_sources
from tests.conftest import REPO

LABELS = REPO / "evaluation" / "labels.jsonl"
SOURCES = read_sources(LABELS.with_name("sources.jsonl"))


def _present(name: str):  # noqa: ANN202 - a path or a skip
    for root in default_roots(LABELS):
        if (root / name).is_file():
            return root / name
    pytest.skip(f"{name} is not in the evaluation cache")


@pytest.mark.parametrize("source", SOURCES, ids=[s.name.split("/")[0] for s in SOURCES])
def test_each_external_file_reads_with_its_reader_and_no_warning(source) -> None:  # noqa: ANN001
    path = _present(source.name)
    assert detect_reader(path).name == source.format
    sessions = load_sessions(path)
    assert sessions
    assert [w for s in sessions for w in s.warnings] == []
    assert sum(s.skipped for s in sessions) == 0


def test_aider_aborted_replies_are_only_the_ones_cut_while_a_request_was_out() -> None:
    """thoth: a ^C pair after a failed request is at the prompt (no reply turn); the ^C during
    a retry cut a request still out (one aborted reply)."""
    path = _present("Awides__thoth/d1fe7912f43f46b8a06826e2bc7defedcb5f0267/"
                    ".aider.chat.history.md")
    aborted = [(s.session_id, e.id) for s in load_sessions(path) for e in find_empty_turns(s)
               if e.reason == "aborted"]
    assert aborted == [("2026-04-25 07:49:13", "4-4")]
