"""Issue 27 in the two formats that read a huge message their own way: an Aider history
(Markdown: the message is a run of lines, `huge_lines`) and a Gemini JSON document (the
message is an element of its `messages`, read back by its span). The app leaves the message
in its file (main held its text, 2.9x-6.4x the file at 50 MB): a search finds a word at its
end and shows it (markup-looking text as written), and a file rewritten under it shows a
line saying so, never other text."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.ui.test_huge_message_formats import aider, gemini_json
from tests.ui.test_huge_message_in_file import LINE
from tests.ui.test_huge_message_rows import rewrite_shows_a_notice, search_shows_the_needle

TEXT = LINE * (8_000_000 // len(LINE)) + "the last line [/] \x1b[1m\n"
"""8 M characters (32 MB as a string: it has an emoji), past `huge_lines.LIFT_CHARS` and
`huge_strings.WHOLE_BYTES` (10 MB of JSON), with escapes and markup."""
MAKERS: list[tuple[Callable[[Path, str], Path], int]] = [(aider, 2), (gemini_json, 1)]
"""Each format's maker and the index of the turn that holds the text."""
IDS = ["aider", "gemini-json"]


@pytest.mark.parametrize(("make", "index"), MAKERS, ids=IDS)
async def test_a_message_whose_file_was_rewritten_is_not_shown_wrongly(
        tmp_path: Path, make: Callable[[Path, str], Path], index: int) -> None:
    await rewrite_shows_a_notice(make(tmp_path, TEXT), index)


@pytest.mark.parametrize(("make", "index"), MAKERS, ids=IDS)
async def test_a_search_finds_a_word_at_the_end_of_a_message_left_in_its_file(
        tmp_path: Path, make: Callable[[Path, str], Path], index: int) -> None:
    (tmp_path / "f").mkdir()
    path = make(tmp_path / "f", TEXT.rsplit("\n", 2)[0] + "\nthe needle [/] \x1b[1m\n")
    await search_shows_the_needle(path, tmp_path, index)
