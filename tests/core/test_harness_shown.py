"""`as_shown`: a user text of harness command wrappers, as Claude Code shows it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replay.core.session.harness import as_shown


@pytest.mark.parametrize(("text", "shown"), [
    ("<command-name>clear</command-name>\n  <command-message>clear</command-message>\n"
     "  <command-args></command-args>", "/clear"),
    ("<command-message>init is analyzing your codebase…</command-message>\n"
     "<command-name>/init</command-name>", "/init\ninit is analyzing your codebase…"),
    ("<command-name>/review</command-name><command-args>123 --fast</command-args>",
     "/review 123 --fast"),
    ("<command-name>/t</command-name><command-contents>{\"text\": \"do it\\n\"}"
     "</command-contents>", "/t\ndo it"),
    ("<local-command-stdout></local-command-stdout>", "⎿ (no output)"),
    ("<local-command-stdout>a\nb</local-command-stdout>", "⎿ a\n  b"),
    ("<bash-input>ls -la</bash-input>", "! ls -la"),
    ("<bash-stdout>x</bash-stdout><bash-stderr></bash-stderr>", "⎿ x"),
    ("<bash-stdout></bash-stdout><bash-stderr>boom</bash-stderr>", "⎿ boom"),
])
def test_command_wrappers_read_as_the_harness_shows_them(text: str, shown: str) -> None:
    assert as_shown(text) == shown


@pytest.mark.parametrize("text", [
    "please run /clear", "hello <command-name>x</command-name>",
    "<system-reminder>be brief</system-reminder>", "<conversation_data></conversation_data>",
    "<command-name>x</command-name> and more", "", "   ",
    "<command-name></command-name><command-args></command-args>",
])
def test_anything_else_is_shown_as_written(text: str) -> None:
    assert as_shown(text) is None


PIECES = st.sampled_from(["<", ">", "/", "a", "-", "\n", " ", "command-name", "command-args",
                          "command-message", "local-command-stdout", "bash-input",
                          "bash-stdout", '{"text": 1}', '{"text": "x"}'])


@given(st.lists(PIECES, max_size=30).map("".join))
def test_any_text_is_read_without_error(text: str) -> None:
    shown = as_shown(text)
    assert shown is None or (isinstance(shown, str) and shown.strip())
