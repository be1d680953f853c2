"""Signals read when the rules ask for them (`SignalsAhead`, `suggest_ahead`) give exactly the
suggestions of every signal read at once (`read_signals`), and a streamed scan that suggests
while it reads prints what one that reads every signal prints."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay.core.corpus import scan as scan_module
from replay.core.corpus.scan import LOOK_AHEAD, LOOK_BACK, scan_file
from replay.core.detection.empty import DEFAULT_RULES, is_empty
from replay.core.readers import detect_reader, load_sessions
from replay.core.session.model import Kind, Part, Session, Turn
from replay.core.suggest import memo
from replay.core.suggest import signals as sig
from replay.core.suggest.rules import suggest_ahead, suggest_from
from tests.conftest import REALDATA
from tests.core.test_signals_memo import generated

REPO = Path(__file__).resolve().parents[2]


def _real_files() -> list[Path]:
    files = sorted((REPO / "sample_sessions").glob("*.jsonl"))
    if REALDATA.is_dir():
        files += sorted(path for path in REALDATA.rglob("*")
                        if path.is_file() and path.suffix in (".jsonl", ".json")
                        and not path.name.endswith(".meta.json"))
    return files


def _windowed_files() -> list[Path]:
    return [path for path in _real_files() if detect_reader(path).windowed]


def _same_fields(session: Session, index: int) -> None:
    """Every field read lazily (in the table's order reversed, so no field relies on another
    having been read first) equals the field read at once."""
    whole = sig.read_signals(session, index)
    memo.forget(session)
    ahead = sig.SignalsAhead(session, index)
    for name in reversed(sig._SIGNAL_NAMES):
        assert getattr(ahead, name) == getattr(whole, name), (name, index)


def _sessions(path: Path) -> list[Session]:
    try:
        return load_sessions(path)
    except Exception:  # noqa: BLE001 (a file the readers refuse has no empty turns to judge)
        return []


@pytest.mark.parametrize("path", _real_files(), ids=lambda path: path.name[-40:])
def test_each_lazy_signal_and_suggestion_is_the_whole_reads(path: Path) -> None:
    for session in _sessions(path):
        stats = sig.session_stats(session)
        for turn in session.turns:
            if not is_empty(turn):
                continue
            index = turn.index
            _same_fields(session, index)
            assert suggest_ahead(session, index, stats) == suggest_from(
                sig.read_signals(session, index)), index


def test_the_real_files_hold_empty_turns_to_judge() -> None:
    if not REALDATA.is_dir():
        pytest.skip("../shared/realdata is not beside the repository")
    found = sum(1 for path in _real_files() for session in _sessions(path)
                for turn in session.turns if is_empty(turn))
    assert found >= 10


@pytest.mark.parametrize("seed", [11, 12])
def test_lazy_suggestions_equal_on_generated_chats(seed: int) -> None:
    # Mostly empty replies: repeats, complaints, go-ons and silent rounds in every mix.
    session = generated(seed, turns=1200)
    stats = sig.session_stats(session)
    rules = set()
    for turn in session.turns:
        if is_empty(turn):
            found = suggest_ahead(session, turn.index, stats)
            assert found == suggest_from(sig.read_signals(session, turn.index))
            rules.add(found.rule if found else None)
    assert len(rules) >= 6  # many rules decide, not one


def test_without_the_figures_a_figure_read_is_unsettled() -> None:
    session = Session(path="x.jsonl", format="test")
    session.add(Turn(id="u0", role="user", parts=[Part(Kind.TEXT, "hi there")], time=1.0))
    session.add(Turn(id="a1", role="assistant", parts=[], time=2.0))
    session.add(Turn(id="u2", role="user", parts=[], time=3.0))
    session.add(Turn(id="a3", role="assistant", parts=[Part(Kind.TEXT, "## Goal\nwords")],
                     time=4.0, completed=5.0))
    unfinished = sig.SignalsAhead(session, 1, sig.NO_STATS)
    with pytest.raises(sig.Unsettled):
        _ = unfinished.no_completion
    with pytest.raises(sig.Unsettled):
        _ = unfinished.median_gap
    prompt = sig.SignalsAhead(session, 2, sig.NO_STATS)
    assert prompt.no_completion is False  # a user turn is never unfinished: no figure needed
    assert prompt.summary is not None and prompt.summary.index == 3
    assert prompt.summary.headings == 1 and prompt.summary.harness is False
    with pytest.raises(sig.Unsettled):
        _ = prompt.summary.ratio
    with pytest.raises(sig.Unsettled):
        _ = prompt.gap_before_ratio  # a gap there is, and the median is not known
    assert sig.SignalsAhead(session, 0, sig.NO_STATS).gap_before_ratio == 0.0  # no gap
    with pytest.raises(AttributeError):
        _ = prompt.no_such_signal


def _scan_both(path: Path, monkeypatch: pytest.MonkeyPatch, **options: bool) -> tuple[Any, Any]:
    rules = DEFAULT_RULES.with_options(**options)
    reader = detect_reader(path)
    ahead = scan_file(reader, path, rules)
    with monkeypatch.context() as patched:
        patched.setattr(scan_module, "suggest_ahead", lambda session, index: None)
        whole = scan_file(reader, path, rules)
    return _full(ahead), _full(whole)


def _full(report: Any) -> list[Any]:
    return [report.to_json(), [(e.suggestion_confidence, e.suggestion_reasons,
                                e.suggestion_rule) for e in report.empty_turns]]


@pytest.mark.parametrize("path", _windowed_files(), ids=lambda path: path.name[-40:])
def test_a_streamed_scan_suggesting_while_it_reads_is_the_same(
        path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ahead, whole = _scan_both(path, monkeypatch)
    assert ahead == whole
    ahead, whole = _scan_both(path, monkeypatch, tool_only_is_empty=True, missing_replies=True)
    assert ahead == whole


def test_the_real_shaped_file_scans_the_same(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # bench/guard.py's real-shaped file, small: the real sessions' records again and again.
    import importlib.util

    if not REALDATA.is_dir():
        pytest.skip("../shared/realdata is not beside the repository")
    spec = importlib.util.spec_from_file_location("realshaped", REPO / "bench" / "realshaped.py")
    assert spec is not None and spec.loader is not None
    realshaped = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(realshaped)
    path = tmp_path / "realshaped.jsonl"
    realshaped.write(path, 8_000_000, REALDATA / "claude-code")
    ahead, whole = _scan_both(path, monkeypatch)
    assert ahead == whole and len(ahead[0]["empty_turns"]) >= 5
    ahead, whole = _scan_both(path, monkeypatch, tool_only_is_empty=True, missing_replies=True)
    assert ahead == whole
    session = load_sessions(path)[0]
    stats = sig.session_stats(session)
    for empty in whole[0]["empty_turns"]:
        assert suggest_ahead(session, empty["index"], stats) == suggest_from(
            sig.read_signals(session, empty["index"]))


# ---------------------------------------------------------------- generated Claude Code files

_PROMPTS = ["please fix the failing reader test in the suite",
            "please fix the failing reader test in this suite", "run it again",
            "continue", "hello?", "???", "WHY DID YOU STOP ANSWERING ME", "no reply again?",
            "<local-command-stdout></local-command-stdout>", "", "ok",
            "<command-name>/clear</command-name>", "<command-name>/model</command-name>",
            "[Request interrupted by user]", "<bash-stdout></bash-stdout>"]
_ANSWERS = ["I'll update the reader next, then run the tests.", "Shall I go on?", "Done.",
            "## Goal\n## Progress\n## Next steps\n" + "summary " * 300, "", "tool"]


def _claude_code_file(path: Path, rng: random.Random, turns: int) -> None:
    """Tiny Claude Code records with empty turns in every kind of neighbourhood; in some files
    no reply has a time (the session records no completion), in some the summary-like reply
    is rare (its length is many times the median) or common."""
    clock = 1_760_000_000.0
    lines = []
    stamped = rng.random() < 0.7
    weights = [rng.choice((1, 8)) for _ in _ANSWERS]
    for number in range(turns):
        clock += rng.choice((1.0, 2.0, 700.0, 4000.0)) if rng.random() < 0.15 else 2.0
        record: dict[str, Any] = {"sessionId": "s-1", "uuid": f"u{number}",
                                  "timestamp": _iso(clock)}
        if rng.random() < 0.45:
            record.update(type="user", message={"role": "user", "content": rng.choice(_PROMPTS)})
            if rng.random() < 0.05:
                record["isCompactSummary"] = True
        else:
            text = rng.choices(_ANSWERS, weights)[0]
            if text == "tool":
                content: list[dict[str, Any]] = [{"type": "tool_use", "id": f"t{number}",
                                                  "name": "Bash", "input": {}}]
            elif text:
                content = [{"type": "text", "text": text}]
            else:
                content = [{"type": "thinking", "thinking": rng.choice(["", "hmm"]),
                            "signature": "x"}]
            record.update(type="assistant", message={
                "role": "assistant", "id": f"m{number}", "content": content})
            if rng.random() < 0.1 or not stamped:
                del record["timestamp"]  # never completed, or no time at all
        lines.append(orjson.dumps(record))
        if rng.random() < 0.1:  # the reply's later line: its end time
            later = {**record, "timestamp": _iso(clock + 30)} if stamped else record
            lines.append(orjson.dumps(later))
    path.write_bytes(b"\n".join(lines) + b"\n")


def _iso(seconds: float) -> str:
    from datetime import datetime, timezone

    moment = datetime.fromtimestamp(seconds, tz=timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), turns=st.integers(1, 3 * (LOOK_BACK + LOOK_AHEAD)))
def test_generated_claude_code_files_scan_the_same(
        tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
        seed: int, turns: int) -> None:
    path = tmp_path_factory.mktemp("ahead") / "session.jsonl"
    _claude_code_file(path, random.Random(seed), turns)
    ahead, whole = _scan_both(path, monkeypatch)
    assert ahead == whole
    ahead, whole = _scan_both(path, monkeypatch, tool_only_is_empty=True, missing_replies=True)
    assert ahead == whole


@pytest.mark.parametrize("seed", range(8))
def test_long_generated_claude_code_files_scan_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    path = tmp_path / "session.jsonl"
    _claude_code_file(path, random.Random(seed), 4 * (LOOK_BACK + LOOK_AHEAD))
    ahead, whole = _scan_both(path, monkeypatch)
    assert ahead == whole
    assert len({rule for _, _, rule in whole[1]}) >= 6
    ahead, whole = _scan_both(path, monkeypatch, tool_only_is_empty=True, missing_replies=True)
    assert ahead == whole


def test_a_rule_decided_early_reads_no_other_signal(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Empty prompts right after /clear: `context-command` decides; the look back for a
    # repeated instruction (the costliest signal) is never walked.
    path = tmp_path / "clears.jsonl"
    lines = []
    for number in range(300):
        lines.append({"type": "user", "uuid": f"c{number}", "timestamp": _iso(number * 10.0),
                      "message": {"role": "user",
                                  "content": "<command-name>/clear</command-name>"}})
        lines.append({"type": "user", "uuid": f"e{number}", "timestamp": _iso(number * 10.0 + 1),
                      "message": {"role": "user", "content": ""}})
        lines.append({"type": "assistant", "uuid": f"a{number}",
                      "timestamp": _iso(number * 10.0 + 2),
                      "message": {"role": "assistant", "id": f"m{number}",
                                  "content": [{"type": "text", "text": f"answer {number}"}]}})
    path.write_bytes(b"\n".join(orjson.dumps(line) for line in lines) + b"\n")
    calls: list[int] = []
    repeated = sig.repeated_instruction

    def counted(session: Session, index: int) -> Any:
        calls.append(index)
        return repeated(session, index)

    monkeypatch.setattr(sig, "repeated_instruction", counted)
    report = scan_file(detect_reader(path), path)
    assert len(report.empty_turns) == 300
    assert {empty.suggestion_rule for empty in report.empty_turns} == {"context-command"}
    assert calls == []
