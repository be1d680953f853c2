"""Text the harness writes into user turns: one table of wrapper tags and markers.

Claude Code records local commands, bash-mode commands and interrupts as user lines
(`<local-command-stdout>`, `<bash-input>`, `[Request interrupted by user]`). They are the
harness speaking, never the person: the repeat check must not compare them, a request with
no reply must not be one of them, and an empty one is an artefact of the recording.

The table and the rules on a string are `harness_rules`; the rules here judge a text left in
its file (`lifted`) on the whole of it (`whole_text`), as they would the decoded text.
"""

from __future__ import annotations

import json
import re

from replay.core.session import harness_rules, lifted, whole_text
from replay.core.session.harness_rules import INTERRUPT, TAG_FAMILY, WRAPPERS, Wrapper

__all__ = ["INTERRUPT", "NO_OUTPUT", "WRAPPERS", "Wrapper", "as_shown", "interrupt_of",
           "is_harness_text", "wrapper_of"]


def wrapper_of(text: str) -> Wrapper | None:
    """The harness wrapper family of the first tag in a text, if it is one."""
    if lifted.holds(text):
        return whole_text.wrapper_of(text)
    return harness_rules.wrapper_of(text)


def interrupt_of(text: str) -> str | None:
    """`interrupted` or `interrupted for tool use` when the text is Claude Code's interrupt line."""
    if lifted.holds(text):
        return whole_text.interrupt_of(text)
    return harness_rules.interrupt_of(text)


def is_harness_text(text: str) -> bool:
    """True when a whole text was written by the harness (wrapper, interrupt or caveat line)."""
    if lifted.holds(text):
        return whole_text.is_harness_text(text)
    return harness_rules.is_harness_text(text)


_ELEMENT = re.compile(r"<(?P<tag>[A-Za-z][\w.:-]*)(?:\s[^<>]*)?>(?P<body>.*?)</(?P=tag)\s*>",
                      re.DOTALL)

NO_OUTPUT = "(no output)"
"""What an output wrapper holding nothing shows."""


def as_shown(text: str) -> str | None:
    """A user text made only of the harness's command wrappers, as Claude Code shows it: the
    command line `/clear` (with its arguments; the `<command-message>` below it when it says
    more than the name, as `init is analyzing your codebase…`), a bash-mode command `! ls`,
    the output of either as `⎿ text` (`⎿ (no output)` when empty). None for any other text
    (prose, an injected reminder, a caveat, tags of unknown families): it is shown as written.
    """
    stripped = text.strip()
    if not stripped.startswith("<") or not harness_rules.is_harness_text(stripped):
        return None
    elements = [(match.group("tag"), match.group("body").strip())
                for match in _ELEMENT.finditer(stripped)]
    if not elements or any(_shown_of(tag) == "" for tag, _ in elements):
        return None
    values = dict(elements)
    lines: list[str] = []
    name = (values.get("command-name") or values.get("command-message") or "").lstrip("/")
    if name:
        lines.append(f"/{name} {values.get('command-args', '')}".rstrip())
        message = values.get("command-message", "")
        if message and message.lstrip("/") != name:
            lines.append(message)
    if values.get("command-contents"):
        lines.append(_contents_text(values["command-contents"]))
    lines.extend(f"! {body}" for tag, body in elements if tag == "bash-input")
    outputs = [body for tag, body in elements if _shown_of(tag) == "output"]
    if outputs:
        # stdout and stderr in the order written; an empty one says nothing unless all are.
        for body in [body for body in outputs if body] or [NO_OUTPUT]:
            first, *rest = body.split("\n")
            lines.append("\n".join([f"⎿ {first}", *(f"  {line}" for line in rest)]))
    return "\n".join(line for line in lines if line.strip()) or None


def _contents_text(contents: str) -> str:
    """A command's `<command-contents>`: its text, also when written as `{"text": ...}`."""
    if contents.startswith("{"):
        try:
            decoded = json.loads(contents)
        except ValueError:
            return contents
        if isinstance(decoded, dict) and isinstance(decoded.get("text"), str):
            return str(decoded["text"]).strip()
    return contents


def _shown_of(tag: str) -> str:
    family = TAG_FAMILY.get(tag)
    return family.shown if family is not None else ""
