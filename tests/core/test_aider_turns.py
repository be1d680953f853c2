"""A long Aider chat held as columns (`aider_turns.ExchangeTurns`): every turn read back by
its exchange is the whole reader's, the empty turns, sizes and figures from the columns are
the whole reader's, a search finds the same turns, and all of it holds while the chat is
still being read (the app reads turns as the loading worker adds them)."""

from __future__ import annotations

import gc
import random
import tracemalloc
from pathlib import Path

import pytest

from replay.core.detection.empty import DEFAULT_RULES, is_empty, is_stop
from replay.core.index.navigation import Navigator
from replay.core.readers import aider, aider_turns, load_sessions
from replay.core.session.model import Session
from replay.core.suggest.signals import StatsTally
from tests.core.test_aider import HISTORY
from tests.core.test_aider_chats import HOSTILE, _more_files
from tests.core.test_traj_memory import _turn

RULES = [DEFAULT_RULES, DEFAULT_RULES.with_options(missing_replies=True),
         DEFAULT_RULES.with_options(tool_only_is_empty=True),
         DEFAULT_RULES.with_options(roles=frozenset({"user", "assistant", "system"}))]
NEEDLES = ["step", "KeyboardInterrupt", "interrupt", "[link=x]", "1-2", "user", "blank",
           "Tokens", "off-by-one #3", "reply 7\n", "xyz-not-there", "again to exit", "é",
           "Aider v0", "e"]


def _single_chats(tmp_path: Path) -> list[Path]:
    """One chat each: Aider's own history repeated without its headers (interrupts, blank
    prompts, commands, errors, retries), a chat of plain exchanges, CR and CRLF line ends,
    a chat with no header, a huge reply."""
    body = "".join(line for line in HISTORY.splitlines(keepends=True)
                   if not line.startswith(aider.HEADER))
    head = "# aider chat started at 2024-05-01 10:20:30\n\n"
    made = {
        "history": head + "".join(body.replace("off-by-one", f"off-by-one #{n}")
                                  for n in range(60)),
        "plain": head + "".join(f"#### step {n} {HOSTILE if n % 50 == 7 else ''}\n\n"
                                f"reply {n}\n\n> Tokens: 1k sent, 2 received.\n\n"
                                + ("#### <blank>\n\n" if n % 9 == 0 else "")
                                for n in range(400)),
        "crlf": (head + body * 20).replace("\n", "\r\n"),
        "cr": (head + body * 20).replace("\n", "\r"),
        "headless": "#### hi\n> Tokens: 1 sent\n> Applied edit to x\n" + body * 10,
        "huge": head + "#### all of it\n\n" + "a line of the reply é\n" * 5_000
        + "\n> Tokens: 1k sent\n\n#### more\n\nok\n",
    }
    paths = []
    tmp_path.mkdir(exist_ok=True)
    for name, text in made.items():
        path = tmp_path / f"{name}.chat.history.md"
        path.write_bytes(text.encode("utf-8"))
        paths.append(path)
    return paths


def _check(held: Session, whole: Session) -> None:
    turns = held.turns
    assert isinstance(turns, aider_turns.ExchangeTurns)
    assert len(turns) == len(whole.turns)
    for index in [*range(len(turns)), *reversed(range(len(turns)))]:
        assert _turn(turns[index]) == _turn(whole.turns[index]), index
    for rules in RULES:
        assert turns.stops(0, len(turns), rules) == \
            [n for n in range(len(turns)) if is_stop(whole, n, rules)], rules
        assert [turns.empty_at(n, rules) for n in range(len(turns))] == \
            [is_empty(t, rules) for t in whole.turns]
    assert list(turns.text_sizes(0, len(turns))) == \
        [sum(p.text_length for p in t.parts if p.kind == "text") for t in whole.turns]
    mine, theirs = StatsTally(), StatsTally()
    turns.tally(mine.add_values)
    for turn in whole.turns:
        theirs.add(turn)
    assert vars(mine) == vars(theirs)
    assert [turns.id_at(n) for n in range(len(turns))] == [t.id for t in whole.turns]
    for text in ("1-1", "1-2", f"{whole.turns[-1].id}", "1-", "2-1"):
        for prefix in (False, True):
            assert turns.ids_with(text, prefix=prefix) == \
                [t.index for t in whole.turns if t.id == text
                 or (prefix and t.id.startswith(text))], (text, prefix)
    navigator, plain = Navigator(held, DEFAULT_RULES), Navigator(whole, DEFAULT_RULES)
    for needle in NEEDLES:
        assert navigator.matches(needle) == plain.matches(needle), needle
        start = min(3, len(turns) - 1)  # (past the end, the two ways wrap differently)
        assert navigator.search(needle, start) == plain.search(needle, start), needle


@pytest.mark.parametrize("cache", [1, 512])
def test_a_chat_held_as_columns_is_the_chat_the_whole_reader_gives(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache: int) -> None:
    monkeypatch.setattr(aider_turns, "CACHE", cache)
    single = _single_chats(tmp_path / "single")  # (one name is also one of `_more_files`)
    for path in [*single, *_more_files(tmp_path)]:
        whole = load_sessions(path)
        index = aider.list_chats(path)
        # A history of 900 chats: its first and last few (each search reads the file).
        numbers = sorted({*range(min(4, len(index))), *range(max(0, len(index) - 3),
                                                             len(index))})
        for number in numbers:
            held = aider.ChatReading(index, number).read()
            assert held.session_id == whole[number].session_id
            assert (held.title, held.meta, held.warnings) == \
                (whole[number].title, whole[number].meta, whole[number].warnings), path.name
            _check(held, whole[number])


def test_turns_read_while_the_chat_is_still_read_are_the_whole_reader_s(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aider, "PAUSE_LINES", 7)
    monkeypatch.setattr(aider_turns, "CACHE", 3)
    shuffle = random.Random(27)
    for path in _single_chats(tmp_path):
        [whole] = load_sessions(path)
        reading = aider.ChatReading(aider.list_chats(path), 0)
        for _ in reading.steps():
            turns = reading.turns
            assert turns is not None
            count = len(turns)
            # Any turn the app may ask for now: all but the newest, which may still grow.
            for index in shuffle.sample(range(count), min(count, 12)):
                if index < count - 1:
                    assert _turn(turns[index]) == _turn(whole.turns[index]), (path, index)
            known = turns.stops(0, max(count - 1, 0), DEFAULT_RULES)
            assert known == [n for n in range(max(count - 1, 0))
                             if is_stop(whole, n, DEFAULT_RULES)]
        assert reading.turns is not None and reading.turns.done
        _check(reading.session, whole)


def test_a_chat_changed_since_it_was_read_says_so_in_its_turns(tmp_path: Path) -> None:
    path = _single_chats(tmp_path)[1]
    held = aider.ChatReading(aider.list_chats(path), 0).read()
    data = path.read_bytes()
    path.write_bytes(data.replace(b"#### step 100 ", b"#### step 100\n\nx\n\n#### ", 1))
    turns = held.turns
    said = {part.text for n in range(len(turns)) for part in turns[n].parts
            if part.name == "unreadable"}
    assert said == {f"{path}: this chat's turns changed since the file was read"}
    path.write_bytes(data[:1000])
    turns._cache.clear()  # type: ignore[attr-defined]
    last = turns[len(turns) - 5]
    assert last.parts[0].name == "unreadable" and "file changed while it was read" in \
        last.parts[0].text


def test_a_chat_of_tiny_turns_costs_a_few_bytes_a_turn(tmp_path: Path) -> None:
    path = tmp_path / ".aider.chat.history.md"
    body = "".join(f"#### s{n}\n\nr\n\n> Tokens: 1 sent\n\n" for n in range(10_000))
    path.write_text("# aider chat started at 2024-05-01 10:00:00\n\n" + body * 4,
                    encoding="utf-8")  # 120,000 turns of about 10 bytes
    index = aider.list_chats(path)
    small = tmp_path / "small.chat.history.md"
    small.write_text(HISTORY, encoding="utf-8")
    aider.ChatReading(aider.list_chats(small), 0).read()  # imports warm
    gc.collect()
    tracemalloc.start()
    try:
        held = aider.ChatReading(index, 0).read()
        kept = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    turns = held.turns
    assert len(turns) == 120_000
    # Columns 8 bytes a turn, marks about 17 an exchange (a whole Turn is about 1 KB).
    assert kept < 20 * len(turns), kept / len(turns)  # 14 measured


@pytest.mark.parametrize("join", [1, 2, 3])
def test_a_block_joined_as_it_grows_is_the_same_text(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, join: int) -> None:
    from tests.core.test_aider_windows import _sessions

    paths = [*_single_chats(tmp_path / "single"), *_more_files(tmp_path)]
    whole = {path: _sessions(load_sessions(path)) for path in paths}
    monkeypatch.setattr(aider, "JOIN_LINES", join)
    for path in paths:
        assert _sessions(load_sessions(path)) == whole[path], path.name


def test_a_history_open_as_a_plain_file_is_read_by_windows_the_same(tmp_path: Path) -> None:
    from tests.core.test_aider_windows import _sessions

    for path in _single_chats(tmp_path)[:2]:
        with open(path, "rb") as handle:
            read = [s for s in aider.history_stream(handle, str(path)) if s is not None]
        assert _sessions(read) == _sessions(load_sessions(path))
