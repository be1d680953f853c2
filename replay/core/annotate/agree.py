"""Agreement between reviewers: Cohen's kappa per pair and Krippendorff's alpha (nominal).

Written out by hand (no numpy at run time); `tests/core/test_agree.py` checks both against
textbook values and alpha against the `krippendorff` package on random data.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from replay.core.annotate.journal import HAS_CONTENT, latest
from replay.core.session.turn_ref import placeholder_request

Item = tuple[str, str]
"""(session_id, turn_id): one thing reviewers label."""


@dataclass(frozen=True, slots=True)
class PairAgreement:
    """Cohen's kappa between two reviewers over the items both rated."""

    first: str
    """One reviewer."""
    second: str
    """The other reviewer."""
    n: int
    """Items both rated."""
    observed: float | None
    """Share of those items with the same label."""
    kappa: float | None
    """Cohen's kappa, or None when undefined (see `reason`)."""
    reason: str | None = None
    """Why kappa is undefined."""

    def to_json(self) -> dict[str, Any]:
        """A JSON object for `replay agree --json`."""
        return {"reviewers": [self.first, self.second], "n": self.n, "observed": self.observed,
                "kappa": self.kappa, "reason": self.reason}


class _AboutATurn:
    """What an agreement item says of the turn it is about (its fields are the item's own)."""

    __slots__ = ()
    session_id: str
    turn_id: str
    turn_index: int | None

    @property
    def number(self) -> int | None:
        """The `#N` a person sees for the turn (1-based), or None when unknown."""
        return self.turn_index + 1 if self.turn_index is not None else None

    @property
    def name(self) -> str:
        """`#N`, `#N+` for a missing reply, or the turn id when no index was recorded."""
        return turn_name(self.turn_id, self.turn_index)

    def turn_json(self) -> dict[str, Any]:
        """The fields that name the turn, as JSON."""
        return {"session_id": self.session_id, "turn_id": self.turn_id,
                "turn_index": self.turn_index, "number": self.number}


@dataclass(frozen=True, slots=True)
class Disagreement(_AboutATurn):
    """An item on which reviewers gave different labels."""

    session_id: str
    """The session."""
    turn_id: str
    """The turn."""
    labels: dict[str, str]
    """Label by reviewer."""
    turn_index: int | None = None
    """The turn's 0-based position as the journal recorded it, or None when it did not."""

    def to_json(self) -> dict[str, Any]:
        """A JSON object for `replay agree --json`."""
        return {**self.turn_json(), "labels": dict(self.labels)}


def turn_name(turn_id: str, turn_index: int | None) -> str:
    """How a person names an annotated turn: `#N`, `#N+` (the missing reply after request #N),
    or its id when the journal recorded no index."""
    if turn_index is None:
        return turn_id
    return f"#{turn_index + 1}{'+' if placeholder_request(turn_id) is not None else ''}"


SUGGESTER = "(suggester)"
"""The rater name the suggestion rules get in agreement tables."""


@dataclass(frozen=True, slots=True)
class Overrule(_AboutATurn):
    """A reviewer's label that differs from the suggestion they were offered (or not shown)."""

    session_id: str
    turn_id: str
    turn_index: int | None
    suggestion: str
    """What the rules suggested."""
    rule: str
    """The rule that suggested it ("" in records written before rules had names)."""
    reviewer: str
    label: str
    """What the reviewer chose instead."""
    reason: str
    """Why, as the reviewer said in one key ("" when they did not say)."""
    blind: bool
    """The reviewer had not seen the suggestion."""

    def to_json(self) -> dict[str, Any]:
        """A JSON object for `replay agree --json`."""
        return {**self.turn_json(), "suggestion": self.suggestion, "rule": self.rule,
                "reviewer": self.reviewer, "label": self.label, "reason": self.reason,
                "blind": self.blind}


@dataclass(slots=True)
class RuleOverrules:
    """How often human reviewers overruled one suggestion rule."""

    rule: str
    """Rule name ("" for records without one)."""
    suggested: str
    """The label the rule suggests."""
    rated: int = 0
    """Human ratings of turns where this rule gave the suggestion."""
    overruled: int = 0
    """Of those, the ones with another label."""
    instead: Counter[str] = field(default_factory=Counter)
    """Labels chosen instead, with counts."""
    reasons: Counter[str] = field(default_factory=Counter)
    """Reasons given for overruling, with counts ("" when none was given)."""

    @property
    def share(self) -> float:
        """Overruled over rated."""
        return self.overruled / self.rated if self.rated else 0.0

    def to_json(self) -> dict[str, Any]:
        """A JSON object for `replay agree --json`."""
        return {"rule": self.rule, "suggested": self.suggested, "rated": self.rated,
                "overruled": self.overruled, "share": self.share,
                "instead": dict(self.instead.most_common()),
                "reasons": dict(self.reasons.most_common())}


@dataclass(slots=True)
class SuggesterReport:
    """The suggestion rules as one more rater: agreement, blind or not, and overrules."""

    rated: int = 0
    """Human ratings whose record names the suggestion offered."""
    agreed: int = 0
    """Of those, the ones equal to the suggestion."""
    blind_rated: int = 0
    """Ratings saved blind (the suggestion unseen)."""
    blind_agreed: int = 0
    """Of those, the ones equal to the suggestion."""
    pairs: list[PairAgreement] = field(default_factory=list)
    """Cohen's kappa of each reviewer against the suggester."""
    overrules: list[Overrule] = field(default_factory=list)
    """Every rating that differs from its suggestion, in journal order."""
    rules: list[RuleOverrules] = field(default_factory=list)
    """Per rule, most often overruled first."""

    @property
    def seen_rated(self) -> int:
        """Ratings saved with the suggestion in view."""
        return self.rated - self.blind_rated

    @property
    def seen_agreed(self) -> int:
        """Of those, the ones equal to the suggestion."""
        return self.agreed - self.blind_agreed

    def to_json(self) -> dict[str, Any]:
        """A JSON object for `replay agree --json`."""
        return {"rated": self.rated, "agreed": self.agreed, "blind_rated": self.blind_rated,
                "blind_agreed": self.blind_agreed, "pairs": [p.to_json() for p in self.pairs],
                "overrules": [item.to_json() for item in self.overrules],
                "rules": [rule.to_json() for rule in self.rules]}


def _text_field(record: Mapping[str, Any], name: str) -> str:
    value = record.get(name, "")
    return value if isinstance(value, str) else ""


def suggester_report(records: Iterable[Mapping[str, Any]]) -> SuggesterReport | None:
    """The suggester as a rater, from the suggestions saved with annotations; None when no
    record names one (journals written before suggestions were saved)."""
    report = SuggesterReport()
    paired: dict[str, list[tuple[str, str]]] = {}
    rules: dict[str, RuleOverrules] = {}
    for record in latest(dict(record) for record in records).values():
        label, suggestion = record["label"], _text_field(record, "suggestion")
        if not label or not suggestion:
            continue
        reviewer = record.get("reviewer", "")
        blind = record.get("blind") is True
        rule_name = _text_field(record, "rule")
        report.rated += 1
        report.blind_rated += blind
        agreed = label == suggestion
        report.agreed += agreed
        report.blind_agreed += blind and agreed
        paired.setdefault(reviewer, []).append((label, suggestion))
        tally = rules.setdefault(rule_name, RuleOverrules(rule_name, suggestion))
        tally.rated += 1
        if agreed:
            continue
        reason = _text_field(record, "overrule")
        tally.overruled += 1
        tally.instead[label] += 1
        tally.reasons[reason] += 1
        index = record.get("turn_index")
        report.overrules.append(Overrule(
            record["session_id"], record["turn_id"],
            index if isinstance(index, int) and not isinstance(index, bool) and index >= 0
            else None, suggestion, rule_name, reviewer, label, reason, blind))
    if not report.rated:
        return None
    for reviewer in sorted(paired):
        kappa, observed, why = cohen_kappa(paired[reviewer])
        report.pairs.append(PairAgreement(reviewer, SUGGESTER, len(paired[reviewer]), observed,
                                          kappa, why))
    report.rules = sorted(rules.values(), key=lambda r: (-r.overruled, -r.share, r.rule))
    return report


@dataclass(slots=True)
class AgreementReport:
    """Everything `replay agree` prints."""

    reviewers: list[str] = field(default_factory=list)
    """Reviewers with at least one rating, sorted."""
    counts: dict[str, int] = field(default_factory=dict)
    """Items rated by each reviewer."""
    items: int = 0
    """Items with at least one rating."""
    pairs: list[PairAgreement] = field(default_factory=list)
    """Cohen's kappa for every pair of reviewers."""
    alpha: float | None = None
    """Krippendorff's alpha (nominal) over all reviewers, or None when undefined."""
    alpha_items: int = 0
    """Items with two or more ratings (the ones alpha uses)."""
    alpha_reason: str | None = None
    """Why alpha is undefined."""
    disagreements: list[Disagreement] = field(default_factory=list)
    """Items with two or more distinct labels, in order of first appearance."""
    suggester: SuggesterReport | None = None
    """The suggestion rules as one more rater, when the records name their suggestions."""
    left_out_with_content: int = 0
    """Labels left out: their turn was found to show content after they were saved
    (`turn_has_content` in the journal), so they rate no empty turn."""

    def to_json(self) -> dict[str, Any]:
        """The object printed by `replay agree --json`."""
        return {
            "left_out_with_content": self.left_out_with_content,
            "reviewers": list(self.reviewers),
            "counts": dict(self.counts),
            "items": self.items,
            "pairs": [pair.to_json() for pair in self.pairs],
            "alpha": self.alpha,
            "alpha_items": self.alpha_items,
            "alpha_reason": self.alpha_reason,
            "disagreements": [item.to_json() for item in self.disagreements],
            "suggester": self.suggester.to_json() if self.suggester else None,
        }


def ratings_by_item(
    records: Iterable[Mapping[str, Any]], positions: dict[Item, int] | None = None
) -> dict[Item, dict[str, str]]:
    """The latest label per reviewer per item; a withdrawn annotation is no rating.

    When `positions` is given it receives each item's recorded 0-based turn index.
    """
    table: dict[Item, dict[str, str]] = {}
    for record in latest(dict(record) for record in records).values():
        if not record["label"]:
            continue
        item = (record["session_id"], record["turn_id"])
        table.setdefault(item, {})[record.get("reviewer", "")] = record["label"]
        index = record.get("turn_index")
        if positions is not None and isinstance(index, int) and not isinstance(index, bool) \
                and index >= 0:
            positions[item] = index
    return table


def cohen_kappa(pairs: list[tuple[str, str]]) -> tuple[float | None, float | None, str | None]:
    """Cohen's kappa of paired labels: (kappa, observed agreement, reason when undefined)."""
    n = len(pairs)
    if n == 0:
        return None, None, "no items rated by both"
    observed = sum(1 for a, b in pairs if a == b) / n
    first = Counter(a for a, _ in pairs)
    second = Counter(b for _, b in pairs)
    # Chance agreement in whole counts, so "total chance agreement" is an exact test.
    chance_count = sum(first[label] * second[label] for label in first)
    if chance_count == n * n:
        only = next(iter(first))
        return None, observed, f"both used only the label {only!r}: chance agreement is total"
    expected = chance_count / (n * n)
    return (observed - expected) / (1.0 - expected), observed, None


def krippendorff_alpha(units: Iterable[Iterable[str]]) -> tuple[float | None, int, str | None]:
    """Krippendorff's alpha for nominal data: (alpha, pairable units, reason when undefined).

    Each unit is the list of labels it received; units with fewer than two are not pairable.
    alpha = 1 - (n - 1) * D / E with D the off-diagonal sum of the coincidence matrix and E
    the sum over distinct label pairs of n_c * n_k.
    """
    coincidences: dict[tuple[str, str], float] = {}
    pairable = 0
    n = 0
    for unit in units:
        values = list(unit)
        m = len(values)
        if m < 2:
            continue
        pairable += 1
        n += m
        counts = Counter(values)
        for c, n_c in counts.items():
            for k, n_k in counts.items():
                # Ordered pairs of distinct ratings within the unit, each weighted 1/(m-1).
                pairs = n_c * (n_c - 1) if c == k else n_c * n_k
                if pairs:
                    coincidences[(c, k)] = coincidences.get((c, k), 0.0) + pairs / (m - 1)
    if pairable == 0:
        return None, 0, "no item was rated by two or more reviewers"
    totals: dict[str, float] = {}
    for (c, _), value in coincidences.items():
        totals[c] = totals.get(c, 0.0) + value
    disagreement = sum(value for (c, k), value in coincidences.items() if c != k)
    chance = sum(totals[c] * totals[k] for c in totals for k in totals if c != k)
    if chance == 0:
        only = next(iter(totals))
        return None, pairable, f"every rating is {only!r}: there is no variation to agree on"
    return 1.0 - (n - 1) * disagreement / chance, pairable, None


def agreement(records: Iterable[Mapping[str, Any]]) -> AgreementReport:
    """Compare reviewers over journal records (from one or more journals, in file order).

    A label whose latest record says its turn now shows content (`turn_has_content`) is
    left out of every figure and counted in `left_out_with_content`.
    """
    records = list(records)
    records, left_out = _without_outgrown(records)
    positions: dict[Item, int] = {}
    table = ratings_by_item(records, positions)
    report = AgreementReport()
    counts: Counter[str] = Counter()
    for ratings in table.values():
        counts.update(ratings.keys())
    report.reviewers = sorted(counts)
    report.counts = {name: counts[name] for name in report.reviewers}
    report.items = len(table)
    for first, second in combinations(report.reviewers, 2):
        paired = [(r[first], r[second]) for r in table.values() if first in r and second in r]
        kappa, observed, reason = cohen_kappa(paired)
        report.pairs.append(PairAgreement(first, second, len(paired), observed, kappa, reason))
    report.alpha, report.alpha_items, report.alpha_reason = krippendorff_alpha(
        ratings.values() for ratings in table.values()
    )
    report.disagreements = [
        Disagreement(session_id, turn_id, dict(sorted(ratings.items())),
                     positions.get((session_id, turn_id)))
        for (session_id, turn_id), ratings in table.items()
        if len(set(ratings.values())) > 1
    ]
    report.suggester = suggester_report(records)
    report.left_out_with_content = left_out
    return report


def _without_outgrown(
    records: list[Mapping[str, Any]],
) -> tuple[list[Mapping[str, Any]], int]:
    """The records of labels still rating an empty turn, and how many labels were left out."""
    current = latest(dict(record) for record in records)
    outgrown = {key for key, record in current.items()
                if record.get(HAS_CONTENT) is True and record["label"]}
    if not outgrown:
        return records, 0
    kept = [record for record in records
            if (record.get("reviewer", ""), record["session_id"], record["turn_id"])
            not in outgrown]
    return kept, len(outgrown)


def labels_of_others(records: Iterable[Mapping[str, Any]], session_id: str,
                     reviewer: str) -> dict[str, dict[str, str]]:
    """Other reviewers' current labels of one session: turn id -> label by reviewer."""
    found: dict[str, dict[str, str]] = {}
    for (item_session, turn_id), ratings in ratings_by_item(records).items():
        if item_session != session_id:
            continue
        others = {name: label for name, label in ratings.items() if name != reviewer}
        if others:
            found[turn_id] = others
    return found
