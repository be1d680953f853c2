"""The raw record view: JSON coloured by token kind, still safe for the terminal."""

from __future__ import annotations

from rich.style import Style

from replay.ui.render import JSON_TOKEN_VARIABLES, highlight_json

COLOURS = {variable: Style(color=f"color({index + 1})")
           for index, variable in enumerate(JSON_TOKEN_VARIABLES.values())}


def kinds(text: str) -> dict[str, str]:
    """Each coloured piece of the highlighted text and the token kind of its colour."""
    by_style = {COLOURS[variable]: kind for kind, variable in JSON_TOKEN_VARIABLES.items()}
    highlighted = highlight_json(text, COLOURS.__getitem__)
    return {highlighted.plain[span.start:span.end]: by_style[span.style]  # type: ignore[index]
            for span in highlighted.spans}


def test_keys_strings_numbers_and_literals_get_their_own_colour() -> None:
    found = kinds('{\n  "id": "m1",\n  "tokens": -12.5e3,\n  "ok": true,\n  "x": null\n}')
    assert found == {'"id"': "key", '"m1"': "string", '"tokens"': "key", "-12.5e3": "number",
                     '"ok"': "key", "true": "literal", '"x"': "key", "null": "literal"}


def test_what_looks_like_a_token_inside_a_string_stays_part_of_the_string() -> None:
    found = kinds('{"text": "42 true \\"quoted\\": null"}')
    assert found == {'"text"': "key", '"42 true \\"quoted\\": null"': "string"}


def test_control_characters_and_markup_stay_inert() -> None:
    raw = 'heading\n{"text": "\x1b]0;pwned\x07[bold red]x[/]"}'
    highlighted = highlight_json(raw, COLOURS.__getitem__)
    assert "\x1b" not in highlighted.plain and "\x07" not in highlighted.plain
    assert "[bold red]x[/]" in highlighted.plain
    assert all(span.style in COLOURS.values() for span in highlighted.spans)
