"""Empty wrapper stripping: one pass with a stack, checked against the obvious fixpoint loop."""

from __future__ import annotations

import re
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from replay.core.session.text import is_blank, strip_empty_wrappers

_PAIR = re.compile(r"<([A-Za-z][\w.:-]*)(?:\s[^<>]*)?>\s*</\1\s*>")
_SELF = re.compile(r"<[A-Za-z][\w.:-]*(?:\s[^<>]*)?/>")


def reference_strip(text: str) -> str:
    """Remove empty pairs and self-closing tags again and again until nothing changes."""
    previous = None
    while previous != text:
        previous = text
        text = _SELF.sub("", _PAIR.sub("", text))
    return text


_NAMES = ("a", "b", "conversation_data", "x.y", "ns:tag")
_TOKENS = st.one_of(
    st.sampled_from(_NAMES).map(lambda name: f"<{name}>"),
    st.sampled_from(_NAMES).map(lambda name: f'<{name} id="1">'),
    st.sampled_from(_NAMES).map(lambda name: f"</{name}>"),
    st.sampled_from(_NAMES).map(lambda name: f"</{name} >"),
    # Self-closing tags use names no pair uses: the old loop read `<a x/>` before `</a>` as
    # an opening tag, a corner the one-pass rule settles as self-closing.
    st.sampled_from(("<br/>", '<img src="x"/>')),
    st.sampled_from((" ", "\n", "\t", "\n\n", "\u3000")),
    st.sampled_from(("word", "x", "a < b", "c > d", "</a x>", "<1>")),
)
"""Pieces of wrapper-heavy text. Stray `<` and `>` stand between spaces: removing a pair
never joins them with their neighbours into a new tag, the other corner the one-pass rule
settles differently (it keeps the tags of the text as written)."""


@settings(max_examples=600, deadline=None)
@given(st.lists(_TOKENS, max_size=40).map("".join))
def test_one_pass_matches_the_fixpoint_loop(text: str) -> None:
    assert strip_empty_wrappers(text) == reference_strip(text)


@settings(max_examples=200, deadline=None)
@given(st.lists(_TOKENS, max_size=30).map("".join))
def test_blank_means_nothing_left_but_white_space(text: str) -> None:
    assert is_blank(text) == (not reference_strip(text).strip())


def test_nested_and_self_closing_tags() -> None:
    assert strip_empty_wrappers("<a> <b>\n</b> <br/></a>") == ""
    assert strip_empty_wrappers("x <a></a> y") == "x  y"
    assert strip_empty_wrappers("<a><b>w</b></a>") == "<a><b>w</b></a>"
    assert strip_empty_wrappers("<a><b></a>") == "<a><b></a>"
    assert strip_empty_wrappers("<a x/>") == ""


def test_corners_the_one_pass_rule_settles() -> None:
    # The characters around a removed pair never become a tag.
    assert strip_empty_wrappers("<a<b></b>></a>") == "<a></a>"
    # A tag ending in `/>` is self-closing even before a closing tag of its name.
    assert strip_empty_wrappers("<a x/></a>") == "</a>"


def _seconds(function: object, argument: str) -> float:
    best = float("inf")  # CPU seconds: waiting for other processes is not counted
    for _ in range(3):
        start = time.process_time()
        function(argument)  # type: ignore[operator]
        best = min(best, time.process_time() - start)
    return best


def test_nested_wrappers_take_linear_time() -> None:
    # The old loop took one pass per nesting level: 4x the depth was 16x the time.
    n = 20_000
    small = _seconds(is_blank, "<a>" * n + "</a>" * n)
    large = _seconds(is_blank, "<a>" * (4 * n) + "</a>" * (4 * n))
    assert large / small < 8


def test_unclosed_tags_take_linear_time() -> None:
    n = 20_000
    small = _seconds(strip_empty_wrappers, "<a> " * n + "x")
    large = _seconds(strip_empty_wrappers, "<a> " * (4 * n) + "x")
    assert large / small < 8
