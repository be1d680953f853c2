"""Where a reviewer stopped in a review queue, kept in the user data directory by the queue's
definition, so the same command reopens the queue there."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from replay.core.annotate.annotations import now_iso
from replay.core.paths import data_dir

__all__ = ["QueueDefinition", "QueuePosition", "forget_position", "load_position",
           "position_file", "save_position"]


@dataclass(frozen=True, slots=True)
class QueueDefinition:
    """What makes two queues the same queue: its paths, filters, sample and reviewer."""

    paths: tuple[str, ...]
    """The real paths, in the order given."""
    format: str | None = None
    """Format filter."""
    reasons: tuple[str, ...] = ()
    """Reason filter, sorted."""
    suggestion: str | None = None
    """Suggestion filter."""
    sample: int | None = None
    """Sample size."""
    seed: int = 0
    """Sample seed."""
    tool_only: bool = False
    """Tool-only assistant turns count as empty."""
    missing_replies: bool = False
    """A request that got no reply counts as an empty turn."""
    reviewer: str = ""
    """Whose position this is: two reviewers of one queue each resume where they stopped."""

    @classmethod
    def of(cls, paths: list[Path], **options: Any) -> QueueDefinition:
        """A definition over paths as given (made real, so `./x` and `x` are one queue)."""
        reasons = tuple(sorted(set(options.pop("reasons", ()) or ())))
        return cls(paths=tuple(os.path.realpath(p) for p in paths), reasons=reasons, **options)

    @property
    def key(self) -> str:
        """A short digest naming this definition."""
        text = json.dumps(asdict(self), sort_keys=True)
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:20]


@dataclass(frozen=True, slots=True)
class QueuePosition:
    """The entry the reviewer was at."""

    session: str
    """The session's reference name (`SessionRef.name`)."""
    turn_id: str
    """The turn's id."""
    ordinal: int
    """Its 0-based queue position then (a fallback when the turn is gone)."""


def position_file(definition: QueueDefinition) -> Path:
    """The file holding a queue's position."""
    return data_dir() / "queues" / f"{definition.key}.json"


def load_position(definition: QueueDefinition) -> QueuePosition | None:
    """The saved position, or None when there is none or it cannot be read (a lost position
    only means starting at the first unannotated turn)."""
    try:
        data = json.loads(position_file(definition).read_text(encoding="utf-8"))
        where = data["position"]
        return QueuePosition(str(where["session"]), str(where["turn_id"]),
                             int(where["ordinal"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def save_position(definition: QueueDefinition, position: QueuePosition) -> str | None:
    """Write the position (atomically); returns a problem to show, or None."""
    path = position_file(definition)
    document = {"definition": asdict(definition), "position": asdict(position),
                "time": now_iso()}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(json.dumps(document, indent=1), encoding="utf-8")
        os.replace(temporary, path)
    except OSError as error:
        return f"could not save the queue position to {path}: {error.strerror or error}"
    return None


def forget_position(definition: QueueDefinition) -> None:
    """Remove a saved position (start the queue afresh)."""
    try:
        position_file(definition).unlink()
    except FileNotFoundError:
        pass
    except OSError:
        pass
