"""The headless scan: one report per session, as `replay scan --json` prints it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from replay.core.detect import (
    DEFAULT_RULES,
    DetectionRules,
    EmptyTurn,
    Suggester,
    find_empty_turns,
    is_stop,
)
from replay.core.model import Session
from replay.core.safe import json_path


@dataclass(slots=True)
class ScanReport:
    """What a scan found in one session."""

    session: Session
    """The session scanned."""
    empty_turns: list[EmptyTurn]
    """Its empty turns in order."""

    def to_json(self) -> dict[str, Any]:
        """The JSON object of PRODUCT.md's `scan --json` contract."""
        session = self.session
        return {
            # Lossless for any file name: `path` text, plus `path_base64` when not UTF-8.
            **json_path(session.path),
            "format": session.format,
            "title": session.title,
            "session_id": session.session_id,
            "turns": len(session.turns),
            "skipped": session.skipped,
            "warnings": list(session.warnings),
            "empty_turns": [empty.to_json() for empty in self.empty_turns],
        }


def report_label(report: dict[str, Any]) -> str:
    """A session's short name from its `scan --json` object, as `Session.label` names it."""
    return str(report.get("title") or report.get("session_id")
               or str(report["path"]).rsplit("/", 1)[-1])


def scan_session(
    session: Session, rules: DetectionRules = DEFAULT_RULES, suggester: Suggester | None = None
) -> ScanReport:
    """Find the empty turns of one session."""
    return ScanReport(session, find_empty_turns(session, rules, suggester))


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One line about a session for a list of sessions: kept instead of the session."""

    label: str
    """Its title, else its id, else its file name."""
    started: float | None
    """When its first turn was written (epoch seconds)."""
    turns: int
    """Number of turns."""
    empty: int
    """Number of empty turns under the rules it was summarised with."""
    subagents: int
    """Number of subagent sessions linked to it."""
    format: str
    """Reader name."""


def summarize(session: Session, rules: DetectionRules = DEFAULT_RULES) -> SessionSummary:
    """The summary of a session (no suggestions: counting is enough)."""
    return SessionSummary(
        label=session.label, started=session.started, turns=len(session.turns),
        empty=sum(1 for turn in session.turns if is_stop(session, turn.index, rules)),
        subagents=len(session.sidechains), format=session.format)
