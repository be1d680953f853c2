"""Search on a turn index: the raw-byte candidates never lose a match the whole list finds,
whatever the needle and however the file spells its strings."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay.core.index.navigation import Navigator, part_search_text
from replay.core.index.needle_bytes import ascii_folds, lines_holding, needle_piece
from replay.core.index.turn_index import TurnIndex
from tests.core.test_turn_index import read

# Characters where raw bytes and the searched text part ways: JSON escapes, case folds that
# change length or leave ASCII, astral characters, the reader's own separators.
ALPHABET = ["a", "s", "S", "ß", "ẞ", "ſ", "k", "K", "\u212a", "é", "É", "ﬁ", "f", "i",
            "İ", "ı", "ΐ", "Σ", "ς", "σ", '"', "\\", "/", "[", "]", "{", "}", ":", ",", " ",
            "\n", "\t", "😀", "\U0001d400", "\u0301", "u", "0", "e", "block", "image", "x",
            "!", "⎿", "(", ")", "no output", "clear"]

texts = st.lists(st.sampled_from(ALPHABET), max_size=8).map("".join)


@st.composite
def commands(draw: st.DrawFn) -> str:
    """A user text the harness wrote, shown otherwise than written (`harness.as_shown`)."""
    shape = draw(st.sampled_from(["command", "bare", "contents", "bash", "output", "both"]))
    if shape == "command":
        return (f"<command-name>/{draw(texts)}</command-name>\n"
                f"<command-message>{draw(texts)}</command-message>\n"
                f"<command-args>{draw(texts)}</command-args>")
    if shape == "bare":
        return (f"<command-name>{draw(texts)}</command-name>"
                f"<command-args>{draw(texts)}</command-args>")
    if shape == "contents":
        return (f"<command-name>/{draw(texts)}</command-name>"
                f"<command-contents>{json.dumps({'text': draw(texts)})}</command-contents>")
    if shape == "bash":
        return f"<bash-input>{draw(texts)}</bash-input>"
    if shape == "output":
        return f"<local-command-stdout>{draw(texts)}</local-command-stdout>"
    return f"<bash-stdout>{draw(texts)}</bash-stdout><bash-stderr>{draw(texts)}</bash-stderr>"


@st.composite
def records(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A short Claude Code session whose every text is drawn from `ALPHABET`."""
    out: list[dict[str, Any]] = []
    for number in range(draw(st.integers(2, 7))):
        base = {"sessionId": "s", "uuid": f"u{number}-{draw(texts)}",
                "timestamp": f"2026-03-01T09:00:{number:02d}.000Z"}
        shape = draw(st.sampled_from(["prompt", "reply", "call", "result", "command"]))
        if shape == "command":
            out.append({**base, "type": "user",
                        "message": {"role": "user", "content": draw(commands())}})
        elif shape == "prompt":
            out.append({**base, "type": "user",
                        "message": {"role": "user", "content": draw(texts)}})
        elif shape == "reply":
            out.append({**base, "type": "assistant", "message": {
                "id": f"m{number}", "role": "assistant",
                "content": [{"type": "text", "text": draw(texts)},
                            {"type": "thinking", "thinking": draw(texts), "signature": "s"}]}})
        elif shape == "call":
            out.append({**base, "type": "assistant", "message": {
                "id": f"m{number}", "role": "assistant", "content": [
                    {"type": "tool_use", "id": f"c{number}", "name": draw(texts),
                     "input": {draw(texts): draw(texts)}}]}})
        else:
            content = draw(st.sampled_from(["text", "blocks"]))
            value: Any = draw(texts) if content == "text" else [
                {"type": "text", "text": draw(texts)}, {"type": "image"}, {"x": 1},
                {"type": draw(texts)}, {"tool_name": draw(texts)}]
            call = f"c{number - 1}" if draw(st.booleans()) else f"gone{number}"
            out.append({**base, "type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": call, "content": value}]}})
    return out


def _upper_escapes(line: str) -> str:
    """`line` with `\\uxxxx` in upper-case hex and every `/` written `\\/` (legal JSON too)."""
    out: list[str] = []
    at = 0
    while at < len(line):
        char = line[at]
        if char == "\\" and line[at + 1] == "u":
            out.append("\\u" + line[at + 2:at + 6].upper())
            at += 6
        elif char == "\\":
            out.append(line[at:at + 2])
            at += 2
        else:
            out.append("\\/" if char == "/" else char)  # (a `/` only stands in a string)
            at += 1
    return "".join(out)


def _write(path: Path, session: list[dict[str, Any]], style: str) -> None:
    lines = [json.dumps(record, ensure_ascii=style != "raw") for record in session]
    if style == "upper":
        lines = [_upper_escapes(line) for line in lines]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(session=records(), style=st.sampled_from(["raw", "ascii", "upper"]),
       needles=st.lists(texts.filter(bool), min_size=1, max_size=4), data=st.data())
def test_index_search_finds_what_the_whole_list_finds(
        session: list[dict[str, Any]], style: str, needles: list[str],
        data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.jsonl"
        _write(path, session, style)
        whole = read(path, indexed=False)
        indexed = read(path, indexed=True, tail=1, cache=1)
        turns = indexed.turns
        assert isinstance(turns, TurnIndex)
        # Needles cut from the texts searched, so most of them are there to be found.
        for turn in whole.turns:
            # (as the screen shows them: a harness command as `/name args`, `⎿ output`)
            text = "\n".join(part_search_text(part) for part in turn.parts)
            if text:
                start = data.draw(st.integers(0, len(text) - 1))
                needles.append(text[start:start + data.draw(st.integers(1, 6))])
        ours, theirs = Navigator(indexed), Navigator(whole)
        for needle in needles:
            if needle_piece(needle) is not None:
                assert turns.lines_with(needle) is not None, needle  # no whole read-back
            assert ours.matches(needle) == theirs.matches(needle), (needle, style)
            for forward in (True, False):
                assert ours.search(needle, 0, forward) == theirs.search(needle, 0, forward)


def _planted(path: Path, turns: int, planted: dict[int, str]) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for number in range(turns):
            text = planted.get(number, f"step {number} done")
            record = {"sessionId": "s", "uuid": f"u{number}", "type": "user",
                      "timestamp": f"2026-03-01T09:00:{number % 60:02d}.000Z",
                      "message": {"role": "user", "content": text}}
            handle.write(json.dumps(record, ensure_ascii=number % 2 == 0) + "\n")


def test_a_non_ascii_needle_reads_back_only_its_candidates(tmp_path: Path) -> None:
    path = tmp_path / "planted.jsonl"
    planted = {10: "un café [x]", 1_501: "Un CAFÉ", 2_990: "die Straße", 3_000: 'a "q" \\ /'}
    _planted(path, 4_000, planted)
    session = read(path, indexed=True)
    turns = session.turns
    assert isinstance(turns, TurnIndex)
    navigator = Navigator(session)
    for needle, found in (("café", [10, 1_501]), ("CAFÉ [X]", [10]), ("STRASSE", [2_990]),
                          ('"q" \\ /', [3_000])):
        before = turns.materialised
        assert navigator.matches(needle) == found
        assert navigator.search(needle, 0) == found[0]
        # The latest turns stay whole (the tail); beyond those, only the candidates.
        assert turns.materialised - before <= 2 * len(found), needle


def test_every_legal_spelling_is_found(tmp_path: Path) -> None:
    path = tmp_path / "lines.jsonl"
    lines = ['"Café"', '"caf\\u00e9"', '"CAF\\u00C9"', '"\\u0063af\\u00e9"', '"cafe"',
             '"Straße"', '"\\ud83d\\uDE00"', '"a\\/b"', '"\\\\u00e9"', '"\u212aelvin"']
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    offsets = [0]
    for line in lines[:-1]:
        offsets.append(offsets[-1] + len(line.encode()) + 1)

    def found(needle: str) -> list[int]:
        piece = needle_piece(needle)
        assert piece is not None
        return [offsets.index(start) for start in sorted(lines_holding(str(path), piece))]

    assert found("CAFÉ") == [0, 1, 2, 3]
    assert found("ss") == [5]
    assert found("😀") == [6]
    assert found("a/b") == [7]
    # A backslash then u00e9: decoded in line 8, as written in 1 and 3 (a tool input keeps
    # its JSON as the line has it); never é itself.
    assert found("\\u00e9") == [1, 3, 8]
    assert found("kelvin") == [9]
    assert needle_piece("[block]") is None


def test_every_character_that_folds_into_ascii_is_in_the_basic_plane() -> None:
    # The fast path for an ASCII needle trusts this table; a Unicode update that adds a
    # character outside the Basic Multilingual Plane must fail here, not miss a match.
    everywhere = {chr(number) for number in range(0x80, 0x110000)
                  if not 0xD800 <= number <= 0xDFFF
                  and any(ord(part) < 0x80 for part in chr(number).casefold())}
    assert set(ascii_folds()) == everywhere and "\u212a" in everywhere and "ß" in everywhere


def test_an_ascii_needle_beside_other_non_ascii_text_finds_every_fold(tmp_path: Path) -> None:
    # Non-ASCII text in the file (é, —) but no character folding into the needle: the bytes
    # lower-cased are enough; a ligature or a Kelvin sign, raw or escaped, still counts.
    path = tmp_path / "lines.jsonl"
    lines = ['"caf\u00e9 \u2014 FIX it"', '"\ufb01x it"', '"\\ufb01x"', '"fi x"',
             '"\u212aey"', '"\\u212Aey"', '"key \u00e9"']
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    offsets = [0]
    for line in lines[:-1]:
        offsets.append(offsets[-1] + len(line.encode()) + 1)

    def found(piece: str) -> list[int]:
        return [offsets.index(start) for start in sorted(lines_holding(str(path), piece))]

    assert found("fix") == [0, 1, 2]
    assert found("key") == [4, 5, 6]
    assert found("it") == [0, 1]


def test_the_next_hit_of_the_match_list_is_what_search_finds() -> None:
    # The app steps `n` through the match list it already holds for "match k / n" instead of
    # searching again: both must land on the same turn, wrapping, the current turn last.
    from replay.core.readers import load_sessions
    from tests.conftest import SAMPLES

    [session] = load_sessions(SAMPLES / "refactor.claude-code.jsonl")
    navigator = Navigator(session)
    for query in ("import", "the", "zz-nowhere", "importers.py"):
        hits = navigator.matches(query)
        for start in range(len(session.turns)):
            for forward in (True, False):
                assert Navigator.next_hit(hits, start, forward) == \
                    navigator.search(query, start, forward), (query, start, forward)


@pytest.mark.parametrize("chunk", [1024 * 1024, 97])
def test_a_harness_command_is_found_as_the_screen_shows_it(
        tmp_path: Path, chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """`/clear` shows as `/clear`, a bash-mode command as `! ls`, an empty output as
    `⎿ (no output)`: search finds those words, in a file read whole or indexed (a chunk at
    a time, lines longer than a chunk too), and not the raw tags nobody sees."""
    monkeypatch.setattr("replay.core.index.needle_bytes.SCAN_BYTES", chunk)
    texts = {
        1: "<command-name>/clear</command-name>\n<command-message>clear</command-message>\n"
           "<command-args>list[int] [/]</command-args>",
        3: "<bash-input>ls -la</bash-input>",
        5: "<local-command-stdout></local-command-stdout>",
        7: "plain words about <command-name> tags, as typed",
    }
    path = tmp_path / "s.jsonl"
    _planted(path, 400, texts)
    whole = Navigator(read(path, indexed=False))
    indexed_session = read(path, indexed=True, tail=1, cache=1)
    assert isinstance(indexed_session.turns, TurnIndex)
    indexed = Navigator(indexed_session)
    for navigator in (whole, indexed):
        assert navigator.matches("/clear") == [1]
        assert navigator.matches("/CLEAR list[int] [/]") == [1]
        assert navigator.matches("! ls -la") == [3]
        assert navigator.matches("⎿ (no output)") == [5]
        assert navigator.matches("(no output)") == [5]
        # Raw tags are found only where they are what the screen shows (turn 7's prose).
        assert navigator.matches("<command-name>") == [7]
        assert navigator.matches("command-message") == []
        assert navigator.search("/clear", 100) == 1


def test_search_start_keeps_an_answer_only_for_the_same_needle_shape_and_file(
        tmp_path: Path) -> None:
    """The prologue every `lines_with` shares: no piece, no answer; the kept answer comes
    back for the same needle, shape and file, never once the file grew or the shape moved."""
    from replay.core.index.needle_bytes import search_start

    path = tmp_path / "s.jsonl"
    path.write_text('{"a": "needle"}\n')
    assert search_start(str(path), "", None, 1) is None
    assert search_start(str(path), "[]\n", None, 1) is None  # only separators
    assert search_start(str(tmp_path / "gone"), "needle", None, 1) is None
    start = search_start(str(path), "x[NEEDLE", None, 1)
    assert start is not None and start.piece == "needle" and start.kept is None
    answer = [0]
    again = search_start(str(path), "x[NEEDLE", (start.key, answer), 1)
    assert again is not None and again.kept is answer
    assert search_start(str(path), "x[NEEDLE", (start.key, answer), 2).kept is None
    assert search_start(str(path), "other", (start.key, answer), 1).kept is None
    with path.open("a") as grown:
        grown.write('{"a": "more"}\n')
    assert search_start(str(path), "x[NEEDLE", (start.key, answer), 1).kept is None
