"""Small constructed chat sessions for the Pilot and snapshot tests."""

from __future__ import annotations

import json
from pathlib import Path

START = 1_760_000_000  # fixed epoch seconds, so screens do not depend on the day


def chat_messages(turns: int = 30, empty_at: tuple[int, ...] = (9, 20),
                  gap: int = 40) -> list[dict[str, object]]:
    """Alternating user/assistant messages; the indices in `empty_at` have no content."""
    messages: list[dict[str, object]] = []
    for index in range(turns):
        role = "user" if index % 2 == 0 else "assistant"
        if index in empty_at:
            content: str = ""
        elif role == "user":
            content = f"Please do step {index // 2 + 1} of the migration."
        else:
            content = (f"Done with step {index // 2 + 1}.\n\n- checked the schema\n"
                       f"- ran the tests: {index} passed\n\nPlan: next I will run step "
                       f"{index // 2 + 2}.")
        messages.append({"id": f"m{index:03d}", "role": role, "content": content,
                         "timestamp": START + index * gap})
    return messages


def write_chat(path: Path, turns: int = 30, empty_at: tuple[int, ...] = (9, 20),
               title: str = "migration") -> Path:
    """Write a generic chat JSON session and return its path."""
    document = {"id": title, "title": title, "messages": chat_messages(turns, empty_at)}
    path.write_text(json.dumps(document, indent=1), encoding="utf-8")
    return path


def write_chat_jsonl(path: Path, turns: int = 10, empty_at: tuple[int, ...] = ()) -> Path:
    """Write the same kind of session as JSON lines (followable)."""
    lines = [json.dumps(message) for message in chat_messages(turns, empty_at)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
