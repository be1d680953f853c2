"""Agreement statistics: hand-computed cases, textbook values, and the `krippendorff` package."""

from __future__ import annotations

import math
from typing import Any

import krippendorff
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from replay.core.annotate.agree import SUGGESTER, agreement, cohen_kappa, krippendorff_alpha


def _record(reviewer: str, turn: str, label: str, session: str = "s1") -> dict[str, Any]:
    return {"session_id": session, "turn_id": turn, "label": label, "reviewer": reviewer}


def _pairs(counts: dict[tuple[str, str], int]) -> list[tuple[str, str]]:
    return [pair for pair, count in counts.items() for _ in range(count)]


def test_cohen_kappa_two_by_two_by_hand() -> None:
    # 50 items.        B yes  B no
    #          A yes     20     5    (A yes: 25)
    #          A no      10    15    (A no:  25)
    #                  (30)   (20)
    # observed p_o = (20 + 15) / 50 = 0.70
    # chance   p_e = (25/50)(30/50) + (25/50)(20/50) = 0.30 + 0.20 = 0.50
    # kappa = (0.70 - 0.50) / (1 - 0.50) = 0.40
    kappa, observed, reason = cohen_kappa(_pairs({
        ("yes", "yes"): 20, ("yes", "no"): 5, ("no", "yes"): 10, ("no", "no"): 15}))
    assert kappa == pytest.approx(0.4)
    assert observed == pytest.approx(0.7)
    assert reason is None


def test_cohen_kappa_below_chance_by_hand() -> None:
    # 10 items, A says x on 5, B says x on 5, but they agree on only 1 x and 1 y.
    #          B x  B y
    #   A x     1    4
    #   A y     4    1
    # p_o = 2/10 = 0.2; p_e = 0.5*0.5 + 0.5*0.5 = 0.5; kappa = (0.2 - 0.5) / 0.5 = -0.6
    kappa, observed, _ = cohen_kappa(_pairs({("x", "x"): 1, ("x", "y"): 4, ("y", "x"): 4,
                                            ("y", "y"): 1}))
    assert kappa == pytest.approx(-0.6) and observed == pytest.approx(0.2)


def test_cohen_kappa_three_categories_by_hand() -> None:
    # 6 items: (a,a) (a,a) (b,b) (c,c) (a,b) (c,a)
    # p_o = 4/6; A: a3 b1 c2; B: a3 b2 c1
    # p_e = (3*3 + 1*2 + 2*1) / 36 = 13/36
    # kappa = (24/36 - 13/36) / (23/36) = 11/23
    kappa, _, _ = cohen_kappa([("a", "a"), ("a", "a"), ("b", "b"), ("c", "c"), ("a", "b"),
                               ("c", "a")])
    assert kappa == pytest.approx(11 / 23)


def test_cohen_kappa_degenerate_cases_report_a_reason() -> None:
    assert cohen_kappa([]) == (None, None, "no items rated by both")
    kappa, observed, reason = cohen_kappa([("continue", "continue")] * 4)
    assert kappa is None and observed == 1.0
    assert reason == "both used only the label 'continue': chance agreement is total"
    # One reviewer constant, the other not: defined, and zero.
    kappa, _, reason = cohen_kappa([("a", "a"), ("a", "b")])
    assert kappa == 0.0 and reason is None


# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", example C:
# four observers, twelve units, nominal data with missing values; alpha = 0.743.
PAPER = [
    "1 2 3 3 2 1 4 1 2 . . .",
    "1 2 3 3 2 2 4 1 2 5 . 3",
    ". 3 3 3 2 3 4 2 2 5 1 .",
    "1 2 3 3 2 4 4 1 2 5 1 .",
]


def test_krippendorff_alpha_textbook_value() -> None:
    rows = [line.split() for line in PAPER]
    units = [[value for value in column if value != "."] for column in zip(*rows, strict=True)]
    alpha, pairable, reason = krippendorff_alpha(units)
    assert round(alpha, 3) == 0.743  # type: ignore[arg-type]
    assert pairable == 11 and reason is None


def test_krippendorff_alpha_by_hand() -> None:
    # Two units each rated (a, b) by two raters: o_ab = o_ba = 2, n = 4, n_a = n_b = 2.
    # alpha = 1 - (n - 1) * (o_ab + o_ba) / (n_a n_b + n_b n_a) = 1 - 3 * 4 / 8 = -0.5
    alpha, pairable, _ = krippendorff_alpha([["a", "b"], ["a", "b"]])
    assert alpha == pytest.approx(-0.5) and pairable == 2


def test_krippendorff_alpha_degenerate_cases() -> None:
    assert krippendorff_alpha([["a"], ["b"]]) == (
        None, 0, "no item was rated by two or more reviewers")
    assert krippendorff_alpha([["a", "a"], ["a", "a", "a"]]) == (
        None, 2, "every rating is 'a': there is no variation to agree on")


LABELS = ["continue", "approval", "artifact", "other"]


@settings(max_examples=200, deadline=None)
@given(st.lists(
    st.lists(st.one_of(st.none(), st.sampled_from(LABELS)), min_size=2, max_size=5)
    .map(tuple), min_size=1, max_size=25,
))
def test_alpha_matches_the_krippendorff_package(units: list[tuple[str | None, ...]]) -> None:
    width = max(len(unit) for unit in units)
    matrix = [[unit[r] if r < len(unit) else None for unit in units] for r in range(width)]
    ours, pairable, _ = krippendorff_alpha([[v for v in unit if v is not None] for unit in units])
    assume(ours is not None)
    codes = {label: float(n) for n, label in enumerate(LABELS)}
    data = np.array([[np.nan if v is None else codes[v] for v in row] for row in matrix])
    theirs = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal",
                                value_domain=sorted(codes.values()))
    assert pairable > 0
    assert math.isclose(ours, theirs, rel_tol=1e-9, abs_tol=1e-9)  # type: ignore[arg-type]


def test_agreement_report_over_journal_records() -> None:
    records = [
        _record("ana", "m1", "approval"), _record("bo", "m1", "approval"),
        _record("ana", "m2", "continue"), _record("bo", "m2", "artifact"),
        _record("ana", "m3", "reflect"), _record("bo", "m3", "reflect"),
        _record("ana", "m4", "artifact"), _record("bo", "m4", "continue"),
        _record("bo", "m4", "artifact"),  # bo changed their mind: latest wins
        _record("cy", "m1", "approval"), _record("cy", "m5", "other"),
        _record("cy", "m5", ""),  # withdrawn: no rating
        _record("ana", "m1", "approval", session="s2"),
    ]
    report = agreement(records)
    assert report.reviewers == ["ana", "bo", "cy"]
    assert report.counts == {"ana": 5, "bo": 4, "cy": 1}
    assert report.items == 5
    by_pair = {(p.first, p.second): p for p in report.pairs}
    ana_bo = by_pair[("ana", "bo")]
    # ana/bo on m1..m4: (approval, approval) (continue, artifact) (reflect, reflect)
    # (artifact, artifact)
    # p_o = 3/4; ana: approval1 continue1 reflect1 artifact1; bo: approval1 artifact2 reflect1
    # p_e = (1*1 + 1*0 + 1*1 + 1*2) / 16 = 4/16; kappa = (12/16 - 4/16) / (12/16) = 2/3
    assert ana_bo.n == 4 and ana_bo.kappa == pytest.approx(2 / 3)
    assert by_pair[("ana", "cy")].n == 1 and by_pair[("ana", "cy")].kappa is None
    assert by_pair[("bo", "cy")].reason == (
        "both used only the label 'approval': chance agreement is total")
    assert report.alpha_items == 4
    # Coincidences: m1 approval x3 -> o(approval, approval) = 3*2/2 = 3; m2 -> o(continue,
    # artifact) = o(artifact, continue) = 1; m3 -> o(reflect, reflect) = 2; m4 -> o(artifact,
    # artifact) = 2. n_c: approval 3, continue 1, artifact 3, reflect 2; n = 9.
    # alpha = 1 - (n - 1) * 2 / (n^2 - sum n_c^2) = 1 - 8 * 2 / (81 - 23) = 21/29
    assert report.alpha == pytest.approx(21 / 29)
    assert [(d.turn_id, d.labels) for d in report.disagreements] == [
        ("m2", {"ana": "continue", "bo": "artifact"})]
    json = report.to_json()
    assert json["pairs"][0] == {"reviewers": ["ana", "bo"], "n": 4, "observed": 0.75,
                                "kappa": pytest.approx(2 / 3), "reason": None}
    # These records carry no turn_index: the position is unknown, not invented.
    assert json["disagreements"] == [
        {"session_id": "s1", "turn_id": "m2", "turn_index": None, "number": None,
         "labels": {"ana": "continue", "bo": "artifact"}}]


def test_agreement_of_nothing() -> None:
    report = agreement([])
    assert report.reviewers == [] and report.pairs == [] and report.alpha is None
    assert report.alpha_reason == "no item was rated by two or more reviewers"


def _offered(reviewer: str, turn: str, label: str, suggestion: str, rule: str,
             overrule: str = "", blind: bool = False) -> dict[str, Any]:
    record = _record(reviewer, turn, label) | {"suggestion": suggestion, "rule": rule,
                                                "turn_index": int(turn[1:])}
    if overrule:
        record["overrule"] = overrule
    if blind:
        record["blind"] = True
    return record


SUGGESTED = [
    _offered("ana", "m1", "artifact", "artifact", "error"),
    _offered("ana", "m2", "breakdown", "continue", "user-blank", "context", blind=True),
    _offered("ana", "m3", "approval", "approval", "plan-before"),
    _offered("bo", "m1", "artifact", "artifact", "error"),
    _offered("bo", "m2", "continue", "continue", "user-blank"),
    _offered("bo", "m3", "reflect", "approval", "plan-before", "ambiguous"),
    _offered("cy", "m2", "breakdown", "continue", "user-blank", blind=True),
    _record("cy", "m9", "other"),  # an old record: no suggestion, so no suggester rating
]


def test_suggester_is_one_more_rater_and_blind_agreement_is_apart() -> None:
    report = agreement(SUGGESTED).suggester
    assert report is not None
    assert (report.rated, report.agreed) == (7, 4)
    assert (report.blind_rated, report.blind_agreed) == (2, 0)
    assert (report.seen_rated, report.seen_agreed) == (5, 4)
    by_reviewer = {pair.first: pair for pair in report.pairs}
    assert {pair.second for pair in report.pairs} == {SUGGESTER}
    assert (by_reviewer["ana"].n, by_reviewer["ana"].observed) == (3, pytest.approx(2 / 3))
    assert [(o.reviewer, o.number, o.suggestion, o.label, o.reason, o.blind)
            for o in report.overrules] == [
        ("ana", 3, "continue", "breakdown", "context", True),
        ("bo", 4, "approval", "reflect", "ambiguous", False),
        ("cy", 3, "continue", "breakdown", "", True)]


def test_rules_most_often_overruled_come_first() -> None:
    report = agreement(SUGGESTED).suggester
    assert report is not None
    table = [(r.rule, r.rated, r.overruled, dict(r.instead), dict(r.reasons))
             for r in report.rules]
    assert table == [
        ("user-blank", 3, 2, {"breakdown": 2}, {"context": 1, "": 1}),
        ("plan-before", 2, 1, {"reflect": 1}, {"ambiguous": 1}),
        ("error", 2, 0, {}, {}),
    ]
    assert agreement(SUGGESTED).to_json()["suggester"]["rules"][0]["share"] == pytest.approx(
        2 / 3)


def test_no_suggester_without_saved_suggestions() -> None:
    assert agreement([_record("ana", "m1", "approval")]).suggester is None


def test_agree_suggester_command_prints_the_overruled_rules(
        capsys: pytest.CaptureFixture[str], tmp_path: Any) -> None:
    import orjson

    from replay.cli import main

    journal = tmp_path / "j.jsonl"
    journal.write_bytes(b"".join(orjson.dumps(record) + b"\n" for record in SUGGESTED))
    assert main(["agree", str(journal), "--suggester"]) == 0
    out = capsys.readouterr().out
    assert "blind 0 / 2 (0%)" in out and "suggestion in view 4 / 5 (80%)" in out
    assert "rules most often overruled" in out
    rows = [line.split() for line in out.splitlines() if line.startswith(("user-blank", "error"))]
    assert [row[:5] for row in rows] == [["user-blank", "continue", "3", "2", "67%"],
                                         ["error", "artifact", "2", "0", "0%"]]
    assert main(["agree", str(journal)]) == 0
    assert "rules most often overruled" not in capsys.readouterr().out
