"""The default label set and label sets read from TOML files."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.core.session.labels import (
    DEFAULT_LABELS,
    Label,
    LabelSet,
    LabelSetError,
    load_label_set,
)


def test_default_labels_are_the_product_set_keyed_one_to_nine() -> None:
    assert DEFAULT_LABELS.names == (
        "continue", "approval", "resumption", "reflect", "artifact", "thinking",
        "context-reset", "breakdown", "other",
    )
    assert [label.key for label in DEFAULT_LABELS] == [str(n) for n in range(1, 10)]
    assert all(label.title and label.description for label in DEFAULT_LABELS)
    assert all("\n" not in label.description for label in DEFAULT_LABELS)
    assert len(DEFAULT_LABELS) == 9


def test_lookup_by_name_and_key() -> None:
    assert DEFAULT_LABELS.get("approval") == DEFAULT_LABELS.by_key("2")
    assert DEFAULT_LABELS.get("approval").title == "Tacit approval"  # type: ignore[union-attr]
    assert DEFAULT_LABELS.get("nope") is None
    assert DEFAULT_LABELS.by_key("0") is None
    assert "breakdown" in DEFAULT_LABELS
    assert "nope" not in DEFAULT_LABELS


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "labels.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_load_label_set_reads_labels_in_order(tmp_path: Path) -> None:
    path = _write(tmp_path, """
[[label]]
name = "nudge"
key = "n"
title = "Nudge"
description = "A push to go on."

[[label]]
name = "pause"
key = "p"
""")
    labels = load_label_set(path)
    assert labels == LabelSet((
        Label("nudge", "n", "Nudge", "A push to go on."),
        Label("pause", "p", "pause", ""),
    ))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("title = 'x'", "expected one or more [[label]] tables"),
        ("[[label]]\nkey = '1'", "label 1: expected a non-empty `name`"),
        ("[[label]]\nname = '  '\nkey = '1'", "label 1: expected a non-empty `name`"),
        ("[[label]]\nname = 'a b'\nkey = '1'", "cannot hold spaces"),
        ("[[label]]\nname = 'a'\nkey = '12'", "label 'a': expected `key` to be one printable"),
        ("[[label]]\nname = 'a'", "label 'a': expected `key` to be one printable"),
        ("[[label]]\nname = 3\nkey = '1'", "label 1: `name` must be a string"),
        ("[[label]]\nname='a'\nkey='1'\n[[label]]\nname='a'\nkey='2'",
         "label name 'a' appears twice"),
        ("[[label]]\nname='a'\nkey='1'\n[[label]]\nname='b'\nkey='1'",
         "key '1' is used by both 'a' and 'b'"),
        ("[[label]\nname='a'", "not valid TOML"),
    ],
)
def test_bad_label_files_give_one_line_naming_the_file(
    tmp_path: Path, text: str, message: str
) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(LabelSetError) as caught:
        load_label_set(path)
    text_of_error = str(caught.value)
    assert text_of_error.startswith(f"{path}: ")
    assert message in text_of_error
    assert "\n" not in text_of_error


def test_missing_label_file(tmp_path: Path) -> None:
    with pytest.raises(LabelSetError, match="cannot read label file"):
        load_label_set(tmp_path / "absent.toml")
