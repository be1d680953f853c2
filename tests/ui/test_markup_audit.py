"""Every place where text enters Textual in replay/ui is checked in the source: markup is
never parsed from a string we did not write, and escaping goes through replay.ui.literal."""

from __future__ import annotations

import ast
from pathlib import Path

UI = Path(__file__).resolve().parents[2] / "replay" / "ui"
MARKUP_PARSERS = {"from_markup", "highlight", "render_str"}
"""Calls that parse a string as markup (`Matcher.highlight` parses its candidate)."""
PARSING_WIDGETS = {"Static", "Label", "Button"}
"""Widgets that parse a str argument as markup unless told `markup=False`."""


def _calls() -> list[tuple[str, ast.Call]]:
    found = []
    for path in sorted(UI.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [(f"{path.relative_to(UI)}:{node.lineno}", node)
                  for node in ast.walk(tree) if isinstance(node, ast.Call)]
    return found


def _name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else \
        func.id if isinstance(func, ast.Name) else ""


def _markup_off(call: ast.Call) -> bool:
    return any(k.arg == "markup" and isinstance(k.value, ast.Constant) and k.value.value is False
               for k in call.keywords)


def _may_be_str(node: ast.expr) -> bool:
    return isinstance(node, ast.JoinedStr | ast.BinOp) or (
        isinstance(node, ast.Constant) and isinstance(node.value, str))


def test_no_markup_is_parsed_in_the_app() -> None:
    offenders = [where for where, call in _calls() if _name(call) in MARKUP_PARSERS
                 and isinstance(call.func, ast.Attribute)]
    offenders += [where for where, call in _calls()
                  if any(k.arg == "markup" and not _markup_off(call) for k in call.keywords)]
    assert offenders == []


def _our_words(call: ast.Call) -> bool:
    """A message that is a string literal: our own words, no value formatted in."""
    return bool(call.args) and isinstance(call.args[0], ast.Constant)


def test_every_notification_with_a_value_in_it_is_plain_text() -> None:
    offenders = [where for where, call in _calls()
                 if _name(call) == "notify" and not _markup_off(call) and not _our_words(call)]
    offenders += [where for where, call in _calls() if _name(call) == "call_from_thread"
                  and call.args and isinstance(call.args[0], ast.Attribute)
                  and call.args[0].attr == "notify" and not _markup_off(call)]
    assert offenders == []


def test_widgets_given_a_string_do_not_parse_it() -> None:
    offenders = [where for where, call in _calls()
                 if _name(call) in PARSING_WIDGETS and call.args and _may_be_str(call.args[0])
                 and not _markup_off(call)]
    assert offenders == []


def test_escaping_goes_through_one_helper() -> None:
    offenders = []
    for path in sorted(UI.rglob("*.py")):
        if path.name != "literal.py" and "escape_controls" in path.read_text(encoding="utf-8"):
            offenders.append(str(path.relative_to(UI)))
    assert offenders == []
