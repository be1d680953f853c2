"""Measuring the suggestion rules against a hand-labelled journal of empty turns."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from replay.core.detection.empty import DEFAULT_RULES, DetectionRules, find_empty_turns, is_empty
from replay.core.readers import ReaderError, load_sessions
from replay.core.session.model import Session
from replay.core.suggest.rules import suggest


@dataclass(frozen=True, slots=True)
class GoldLabel:
    """One hand label: which empty turn, which label, and the reviewer's written reason."""

    path: str
    """Session file, relative to the repository or to the shared real-data folder."""
    session_id: str | None
    """The source's session id."""
    turn_id: str
    """The empty turn's own id."""
    label: str
    """The label a person chose by reading the turns around it."""
    reason: str
    """Why, in a sentence."""
    split: str = "dev"
    """`dev` (rules may be written against it) or `test` (fixed, never tuned on)."""
    rules: str = "default"
    """Detection rules under which the turn is empty: `default`, `tool-only` or
    `missing-replies` (the optional rules widen the set beyond the default empty turns)."""


@dataclass(frozen=True, slots=True)
class Miss:
    """An empty turn where the suggestion differs from the hand label."""

    path: str
    turn_id: str
    index: int
    gold: str
    predicted: str | None
    reasons: list[str]


@dataclass(slots=True)
class EvalResult:
    """How often the rules agree with the hand labels, and where they do not."""

    accuracy: float
    """Share of labelled empty turns whose suggestion equals the hand label."""
    n: int
    """Labelled empty turns that were found and compared."""
    confusion: dict[tuple[str, str], int] = field(default_factory=dict)
    """(gold, predicted) -> count; predicted is `none` when no rule applied."""
    misses: list[Miss] = field(default_factory=list)
    """Every disagreement, for reading."""
    not_found: list[GoldLabel] = field(default_factory=list)
    """Labels whose turn is not an empty turn of the session any more."""
    unlabelled: list[tuple[str, str]] = field(default_factory=list)
    """(path, turn id) of default empty turns in labelled sessions that have no label."""
    by_session: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Session (its label path) -> (hits, labelled turns compared)."""
    missing: list[GoldLabel] = field(default_factory=list)
    """Labels whose file is not on this machine (an external file not in the cache): left
    out of every figure and counted apart, never taken for a turn that is gone."""

    def labels(self) -> list[str]:
        """Every label that occurs as gold or as suggestion, sorted."""
        return sorted({name for pair in self.confusion for name in pair})

    def precision(self, label: str) -> float | None:
        """Of the turns suggested `label`, the share whose hand label is `label`."""
        suggested = sum(n for (_, p), n in self.confusion.items() if p == label)
        hits = self.confusion.get((label, label), 0)
        return hits / suggested if suggested else None

    def recall(self, label: str) -> float | None:
        """Of the turns hand-labelled `label`, the share the rules suggest as `label`."""
        gold = sum(n for (g, _), n in self.confusion.items() if g == label)
        hits = self.confusion.get((label, label), 0)
        return hits / gold if gold else None

    def support(self, label: str) -> int:
        """Hand labels of `label` in this part."""
        return sum(n for (g, _), n in self.confusion.items() if g == label)


SPLITS = ("dev", "test")
"""The development part (rules may be fitted to it) and the test part (never)."""

RULE_OPTIONS: dict[str, dict[str, bool]] = {
    "default": {},
    "tool-only": {"tool_only_is_empty": True},
    "missing-replies": {"missing_replies": True},
}
"""Detection options under which a labelled turn is an empty turn."""


def rules_for(name: str) -> DetectionRules:
    """The detection rules a label's `rules` field names (unknown options are ignored, so a
    label set written ahead of a detection option still loads)."""
    known = {key: value for key, value in RULE_OPTIONS[name].items()
             if hasattr(DEFAULT_RULES, key)}
    return DEFAULT_RULES.with_options(**known)


def read_labels(labels_path: Path | str) -> list[GoldLabel]:
    """Read the journal; a later line for the same turn replaces an earlier one."""
    latest: dict[tuple[str, str], GoldLabel] = {}
    for number, line in enumerate(Path(labels_path).read_bytes().splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = orjson.loads(line)
            gold = GoldLabel(str(record["path"]), record.get("session_id"),
                             str(record["turn_id"]), str(record["label"]),
                             str(record.get("reason", "")), str(record.get("split", "dev")),
                             str(record.get("rules", "default")))
            if gold.split not in SPLITS or gold.rules not in RULE_OPTIONS:
                raise TypeError(f"split must be one of {SPLITS}, rules one of "
                                f"{tuple(RULE_OPTIONS)}")
        except (orjson.JSONDecodeError, KeyError, TypeError) as error:
            raise ValueError(f"{labels_path}:{number}: not a label record ({error})") from None
        latest[(gold.path, gold.turn_id)] = gold
    return list(latest.values())


CACHE_ENV = "REPLAY_EVAL_CACHE"
"""Names the folder holding the external files the labels point at (other people's files
are never copied into the repository)."""


def cache_root(labels_path: Path) -> Path:
    """The cache of external files: `$REPLAY_EVAL_CACHE`, else `eval-cache` beside the
    repository. Files sit at `<owner>__<repo>/<commit>/<path in the repo>`."""
    named = os.environ.get(CACHE_ENV)
    if named:
        return Path(named).expanduser()
    return labels_path.resolve().parent.parent.parent / "eval-cache"


def default_roots(labels_path: Path) -> tuple[Path, ...]:
    """Where label paths are resolved: the repository, the shared real-data folder, then the
    cache of external files."""
    repo = labels_path.resolve().parent.parent
    return (repo, repo.parent / "shared" / "realdata", cache_root(labels_path))


@dataclass(frozen=True, slots=True)
class ExternalSource:
    """A public file the labels point at, recorded by repository, path and commit."""

    name: str
    """Its path under the cache (`<owner>__<repo>/<commit>/<path>`), as labels name it."""
    format: str
    """The reader that should take it."""
    repo: str
    source_path: str
    commit: str


def read_sources(sources_path: Path | str) -> list[ExternalSource]:
    """The external files listed beside the labels (one JSON object a line)."""
    found: list[ExternalSource] = []
    for number, line in enumerate(Path(sources_path).read_bytes().splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = orjson.loads(line)
            found.append(ExternalSource(str(row["name"]), str(row["format"]), str(row["repo"]),
                                        str(row["source_path"]), str(row["commit"])))
        except (orjson.JSONDecodeError, KeyError, TypeError) as error:
            raise ValueError(f"{sources_path}:{number}: not a source record ({error})") from None
    return found


@dataclass(slots=True)
class SourceHealth:
    """How the external files of one format read on this machine."""

    listed: int = 0
    present: int = 0
    clean: int = 0
    """Read by the expected reader with no warning and nothing skipped."""
    problems: list[str] = field(default_factory=list)


def source_health(sources: Iterable[ExternalSource], roots: Iterable[Path]
                  ) -> dict[str, SourceHealth]:
    """Per format: how many listed files are here, and how many read without a warning."""
    from replay.core.readers import detect_reader

    health: dict[str, SourceHealth] = {}
    search = tuple(roots)
    for source in sources:
        entry = health.setdefault(source.format, SourceHealth())
        entry.listed += 1
        path = _resolve(source.name, search)
        if path is None:
            continue
        entry.present += 1
        try:
            reader = detect_reader(path).name
            sessions = load_sessions(path)
        except ReaderError as error:
            entry.problems.append(f"{source.name}: {error}")
            continue
        warnings = [w for s in sessions for w in s.warnings]
        skipped = sum(s.skipped for s in sessions)
        if reader != source.format:
            entry.problems.append(f"{source.name}: read as {reader}")
        elif warnings or skipped:
            entry.problems.append(f"{source.name}: {'; '.join(warnings) or f'{skipped} skipped'}")
        else:
            entry.clean += 1
    return health


def _resolve(path: str, roots: Iterable[Path]) -> Path | None:
    for root in roots:
        candidate = root / path
        if candidate.exists():
            return candidate
    return None


def _sessions(path: Path) -> list[Session]:
    try:
        return load_sessions(path)
    except ReaderError:
        return []


def held_out_sessions(labels_path: Path | str) -> set[str]:
    """Sessions (label paths) with test labels and no development label: whole sessions the
    rules were never written against, not only turns."""
    splits: dict[str, set[str]] = {}
    for gold in read_labels(labels_path):
        splits.setdefault(gold.path, set()).add(gold.split)
    return {path for path, found in splits.items() if found == {"test"}}


def session_accuracy(result: EvalResult, sessions: Collection[str] | None = None,
                     ) -> tuple[float, int, int]:
    """(accuracy, hits, turns) over the turns of `sessions` (every session when None)."""
    chosen = [value for path, value in result.by_session.items()
              if sessions is None or path in sessions]
    hits, count = sum(h for h, _ in chosen), sum(n for _, n in chosen)
    return (hits / count if count else 0.0), hits, count


def session_macro(result: EvalResult) -> tuple[float, int]:
    """(mean of the per-session accuracies, sessions): each session weighs one, however many
    of its turns are labelled."""
    shares = [hits / count for hits, count in result.by_session.values() if count]
    return (sum(shares) / len(shares) if shares else 0.0), len(shares)


def wilson_lower(successes: float, n: int, z: float = 1.96) -> float:
    """The lower end of the 95 % Wilson interval of a share (0 when n is 0)."""
    if n == 0:
        return 0.0
    share = successes / n
    centre = share + z * z / (2 * n)
    spread = z * ((share * (1 - share) + z * z / (4 * n)) / n) ** 0.5
    return max(0.0, (centre - spread) / (1 + z * z / n))


def evaluate(labels_path: Path | str, roots: Iterable[Path] | None = None,
             labels: Collection[str] | None = None, split: str | None = None) -> EvalResult:
    """Run the rules on every labelled empty turn (of one part when `split` is given) and
    compare with the hand labels."""
    labels_path = Path(labels_path)
    search = tuple(roots) if roots is not None else default_roots(labels_path)
    by_path: dict[str, list[GoldLabel]] = {}
    for gold in read_labels(labels_path):
        if split is None or gold.split == split:
            by_path.setdefault(gold.path, []).append(gold)
    confusion: Counter[tuple[str, str]] = Counter()
    result = EvalResult(0.0, 0)
    for path, golds in by_path.items():
        resolved = _resolve(path, search)
        if resolved is None:
            result.missing.extend(golds)
            continue
        sessions = _sessions(resolved)
        wanted = {gold.turn_id: gold for gold in golds}
        found: set[str] = set()
        for session in sessions:
            for option in sorted({gold.rules for gold in golds} | {"default"}):
                for empty in find_empty_turns(session, rules_for(option)):
                    gold = wanted.get(empty.id)
                    if gold is None or gold.rules != option or (
                            gold.session_id and session.session_id
                            and gold.session_id != session.session_id):
                        # Optional rules are sampled; only default empty turns must all
                        # be labelled.
                        if option == "default" and gold is None and split is None:
                            result.unlabelled.append((path, empty.id))
                        continue
                    if option != "default" and is_empty(session.turns[empty.index]):
                        continue  # a default empty turn is labelled under "default"
                    found.add(empty.id)
                    suggestion = suggest(session, empty, labels)
                    predicted = suggestion.label if suggestion else "none"
                    confusion[(gold.label, predicted)] += 1
                    hits, count = result.by_session.get(path, (0, 0))
                    result.by_session[path] = (hits + (predicted == gold.label), count + 1)
                    if predicted != gold.label:
                        result.misses.append(Miss(path, empty.id, empty.index, gold.label,
                                                  predicted,
                                                  suggestion.reasons if suggestion else []))
        result.not_found.extend(gold for gold in golds if gold.turn_id not in found)
    result.n = sum(confusion.values())
    result.confusion = dict(sorted(confusion.items()))
    hits = sum(count for (gold, predicted), count in confusion.items() if gold == predicted)
    result.accuracy = hits / result.n if result.n else 0.0
    return result
