"""The headless scan: one report per session, as `replay scan --json` prints it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from replay.core.detect import DEFAULT_RULES, DetectionRules, EmptyTurn, Suggester, find_empty_turns
from replay.core.model import Session


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
            "path": session.path,
            "format": session.format,
            "session_id": session.session_id,
            "turns": len(session.turns),
            "skipped": session.skipped,
            "warnings": list(session.warnings),
            "empty_turns": [empty.to_json() for empty in self.empty_turns],
        }


def scan_session(
    session: Session, rules: DetectionRules = DEFAULT_RULES, suggester: Suggester | None = None
) -> ScanReport:
    """Find the empty turns of one session."""
    return ScanReport(session, find_empty_turns(session, rules, suggester))
