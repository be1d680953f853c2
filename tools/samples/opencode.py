"""Builds opencode exports (`{info, messages: [{info, parts}]}`) step by step."""

from __future__ import annotations

import json

from samples.common import (
    BASE58,
    BASE62,
    Chance,
    Json,
    diff_counts,
    epoch_ms,
    numbered,
    reading_seconds,
    token_estimate,
    unified,
)


class OpencodeIds:
    """opencode's ids: 12 hex digits of (ms * 4096 + counter), then 14 base62 characters.

    The counter restarts every millisecond and is shared by every prefix, so ids sort by the
    time they were made; session ids are descending (bitwise not) so newer sessions sort first.
    """

    def __init__(self, chance: Chance) -> None:
        self.chance = chance
        self.last_ms = -1
        self.counter = 0

    def make(self, prefix: str, ms: int, *, descending: bool = False) -> str:
        """A new id made at time `ms`."""
        if ms != self.last_ms:
            self.last_ms, self.counter = ms, 0
        self.counter += 1
        value = ms * 0x1000 + self.counter
        if descending:
            value = ~value
        value &= (1 << 48) - 1
        return f"{prefix}_{value:012x}{self.chance.chars(BASE62, 14)}"


class OpencodeSession:
    """Builds an `opencode export` document message by message, keeping a running clock."""

    def __init__(self, seed: int, *, slug: str, title: str, directory: str, created: str,
                 start: str, version: str, provider: str, model: str, context: int,
                 project: str) -> None:
        self.chance = Chance(seed)
        self.ids = OpencodeIds(self.chance)
        self.now = epoch_ms(start)
        self.directory = directory
        self.provider, self.model = provider, model
        created_ms = epoch_ms(created)
        self.session_id = self.ids.make("ses", created_ms, descending=True)
        self.info: Json = {
            "id": self.session_id,
            "slug": slug,
            "projectID": project,
            "directory": directory,
            "title": title,
            "version": version,
            "summary": {"additions": 0, "deletions": 0, "files": 0},
            "time": {"created": created_ms, "updated": 0},
        }
        self.messages: list[Json] = []
        self.snapshot = self.chance.hex()
        self.context = context
        """Prompt tokens already cached; each step reads them and writes what is new."""
        self.pending = 0
        """Tokens added since the last model call (tool output, user text)."""
        self.last_user: str | None = None
        self.files: dict[str, str] = {}
        """Contents of the local files the agent edits, so diffs stay consistent."""
        self.additions = self.deletions = 0
        self.touched: set[str] = set()

    def pause(self, seconds: float) -> None:
        """Let wall-clock time pass (a person reading, a command running)."""
        self.now += round(seconds * 1000)

    def jump(self, iso: str) -> None:
        """Move the clock forward to a given time (a person coming back)."""
        target = epoch_ms(iso)
        if target < self.now:
            raise ValueError(f"cannot jump back to {iso}")
        self.now = target

    def part_id(self) -> str:
        """A part id made now."""
        return self.ids.make("prt", self.now)

    def user(self, text: str | None, *, title: str | None = None, parts: bool = True,
             agent: str = "build") -> str:
        """Add a user message; `text=None` with `parts=False` leaves it without any part."""
        message_id = self.ids.make("msg", self.now)
        info: Json = {"role": "user", "time": {"created": self.now}}
        summary: Json = {"diffs": []}
        if title:
            summary = {"title": title, "diffs": []}
        info["summary"] = summary
        info["agent"] = agent
        info["model"] = {"providerID": self.provider, "modelID": self.model}
        info["id"] = message_id
        info["sessionID"] = self.session_id
        message_parts: list[Json] = []
        if parts and text is not None:
            self.pause(0.001)
            message_parts.append({"type": "text", "text": text, "id": self.part_id(),
                                  "sessionID": self.session_id, "messageID": message_id})
            self.pending += token_estimate(text)
        self.messages.append({"info": info, "parts": message_parts})
        self.last_user = message_id
        self.pause(0.006)
        return message_id

    def assistant(self, *, first_token: float = 1.4, mode: str = "build") -> OpencodeStep:
        """Start an assistant message (one model call) answering the last user message."""
        return OpencodeStep(self, first_token=first_token, mode=mode)

    def export(self) -> Json:
        """The finished document."""
        self.info["time"]["updated"] = self.now
        self.info["summary"] = {"additions": self.additions, "deletions": self.deletions,
                                "files": len(self.touched)}
        return {"info": self.info, "messages": self.messages}


class OpencodeStep:
    """One assistant message: step-start, reasoning, text, tool calls, step-finish."""

    def __init__(self, session: OpencodeSession, *, first_token: float, mode: str) -> None:
        self.session = session
        self.message_id = session.ids.make("msg", session.now)
        self.created = session.now
        self.parts: list[Json] = []
        self.output_chars = 0
        self.reasoning_chars = 0
        self.tool_output_tokens = 0
        self.changed: list[str] = []
        self.info: Json = {
            "role": "assistant",
            "time": {"created": self.created},
            "parentID": session.last_user,
            "modelID": session.model,
            "providerID": session.provider,
            "mode": mode,
            "agent": mode,
            "path": {"cwd": session.directory, "root": session.directory},
        }
        session.messages.append({"info": self.info, "parts": self.parts})
        session.pause(first_token)
        self._add({"type": "step-start", "snapshot": session.snapshot})

    def _add(self, part: Json) -> Json:
        part["id"] = self.session.part_id()
        part["sessionID"] = self.session.session_id
        part["messageID"] = self.message_id
        # keep opencode's key order: type first, ids last
        ordered = {key: part[key] for key in part if key not in ("id", "sessionID", "messageID")}
        ordered.update(id=part["id"], sessionID=part["sessionID"], messageID=part["messageID"])
        self.parts.append(ordered)
        self.session.pause(0.004)
        return ordered

    def think(self, text: str, seconds: float | None = None) -> OpencodeStep:
        """A reasoning part with a provider signature."""
        start = self.session.now
        part = self._add({"type": "reasoning", "text": text,
                          "metadata": {"anthropic": {"signature": self.session.chance.blob(180)}}})
        self.session.pause(seconds if seconds is not None else reading_seconds(text, 260))
        part["time"] = {"start": start, "end": self.session.now}
        self._move_ids_last(part)
        self.reasoning_chars += len(text)
        return self

    def say(self, text: str, seconds: float | None = None) -> OpencodeStep:
        """A visible text part."""
        start = self.session.now
        part = self._add({"type": "text", "text": text})
        self.session.pause(seconds if seconds is not None else reading_seconds(text))
        part["time"] = {"start": start, "end": self.session.now}
        self._move_ids_last(part)
        self.output_chars += len(text)
        return self

    def _move_ids_last(self, part: Json) -> None:
        for key in ("id", "sessionID", "messageID"):
            part[key] = part.pop(key)

    def tool(self, name: str, tool_input: Json, output: str, *, title: str,
             metadata: Json | None = None, seconds: float = 0.05,
             status: str = "completed") -> OpencodeStep:
        """A finished tool call; `seconds` is how long the tool ran."""
        self.session.pause(reading_seconds(json.dumps(tool_input), 220))
        call_id = "toolu_01" + self.session.chance.chars(BASE58, 22)
        start = self.session.now
        self.session.pause(seconds)
        state: Json = {"status": status, "input": tool_input, "output": output, "title": title,
                       "metadata": metadata or {"truncated": False},
                       "time": {"start": start, "end": self.session.now}}
        if status == "error":
            state = {"status": "error", "input": tool_input, "error": output,
                     "metadata": metadata or {}, "time": state["time"]}
        self._add({"type": "tool", "callID": call_id, "tool": name, "state": state})
        self.output_chars += len(json.dumps(tool_input))
        self.tool_output_tokens += token_estimate(output)
        return self

    def bash(self, command: str, output: str, *, description: str, seconds: float = 0.4,
             exit_code: int | None = 0, timeout: int | None = None,
             workdir: str | None = None) -> OpencodeStep:
        """A bash tool call with its output."""
        tool_input: Json = {"command": command}
        if timeout is not None:
            tool_input["timeout"] = timeout
        if workdir is not None:
            tool_input["workdir"] = workdir
        tool_input["description"] = description
        metadata = {"output": output, "exit": exit_code, "description": description,
                    "truncated": False}
        return self.tool("bash", tool_input, output, title=description, metadata=metadata,
                         seconds=seconds)

    def read(self, path: str, content: str) -> OpencodeStep:
        """A read tool call of a local file."""
        total = len(content.splitlines())
        output = (f"<path>{path}</path>\n<type>file</type>\n<content>{numbered(content)}\n\n"
                  f"(End of file - total {total} lines)\n</content>")
        relative = path.removeprefix(self.session.directory + "/")
        preview = "\n".join(content.splitlines()[:20])
        return self.tool("read", {"filePath": path}, output, title=relative,
                         metadata={"preview": preview, "truncated": False, "loaded": []},
                         seconds=0.02)

    def write(self, path: str, content: str) -> OpencodeStep:
        """A write tool call that creates or replaces a local file."""
        before = self.session.files.get(path, "")
        exists = path in self.session.files
        self.session.files[path] = content
        self._changed(path, before, content)
        relative = path.removeprefix(self.session.directory + "/")
        return self.tool("write", {"content": content, "filePath": path},
                         "Wrote file successfully.", title=relative,
                         metadata={"diagnostics": {}, "filepath": path, "exists": exists,
                                   "truncated": False}, seconds=0.03)

    def edit(self, path: str, old: str, new: str) -> OpencodeStep:
        """An edit tool call replacing `old` by `new` in a local file."""
        before = self.session.files[path]
        if before.count(old) != 1:
            raise ValueError(f"edit of {path}: the old text must occur exactly once")
        after = before.replace(old, new)
        self.session.files[path] = after
        added, removed = self._changed(path, before, after)
        relative = path.removeprefix(self.session.directory + "/")
        metadata = {"diagnostics": {}, "diff": unified(path, before, after),
                    "filediff": {"file": path, "before": before, "after": after,
                                 "additions": added, "deletions": removed},
                    "truncated": False}
        return self.tool("edit", {"filePath": path, "oldString": old, "newString": new},
                         "Edit applied successfully.", title=relative, metadata=metadata,
                         seconds=0.04)

    def _changed(self, path: str, before: str, after: str) -> tuple[int, int]:
        added, removed = diff_counts(before, after)
        self.session.additions += added
        self.session.deletions += removed
        self.session.touched.add(path)
        if path not in self.changed:
            self.changed.append(path)
        return added, removed

    def grep(self, pattern: str, path: str, output: str, matches: int,
             include: str | None = None) -> OpencodeStep:
        """A grep tool call."""
        tool_input: Json = {"pattern": pattern, "path": path}
        if include:
            tool_input["include"] = include
        return self.tool("grep", tool_input, output, title=pattern,
                         metadata={"matches": matches, "truncated": False}, seconds=0.08)

    def todo(self, todos: list[Json]) -> OpencodeStep:
        """A todowrite tool call."""
        pending = sum(1 for todo in todos if todo["status"] != "completed")
        return self.tool("todowrite", {"todos": todos}, json.dumps(todos, indent=2),
                         title=f"{pending} todos", metadata={"todos": todos, "truncated": False},
                         seconds=0.01)

    def end(self, finish: str = "tool-calls") -> str:
        """Close the step: step-finish with usage, a patch part when files changed."""
        session = self.session
        output = token_estimate("x" * max(self.output_chars, 40))
        reasoning = round(self.reasoning_chars / 3.9)
        write = session.pending
        read = session.context
        uncached = session.chance.integer(2, 9)
        tokens = {"total": uncached + output + read + write, "input": uncached,
                  "output": output + reasoning, "reasoning": reasoning,
                  "cache": {"read": read, "write": write}}
        # list prices in USD per million tokens: input, output, cache read, cache write
        dollars = uncached * 5 + (output + reasoning) * 25 + read * 0.5 + write * 6.25
        cost = round(dollars / 1e6, 6)
        session.context += write
        session.pending = output + reasoning + self.tool_output_tokens
        old_snapshot = session.snapshot
        if self.changed:
            session.snapshot = session.chance.hex()
        self._add({"type": "step-finish", "reason": finish, "snapshot": session.snapshot,
                   "cost": cost, "tokens": tokens})
        if self.changed:
            self._add({"type": "patch", "hash": old_snapshot, "files": list(self.changed)})
        self.info["time"]["completed"] = session.now
        self.info["cost"] = cost
        self.info["tokens"] = tokens
        self.info["finish"] = finish
        self._close_info()
        session.pause(0.003)
        return self.message_id

    def cut(self) -> str:
        """Leave the step as the harness does when it records nothing more: no finish, no time."""
        self.info["cost"] = 0
        self.info["tokens"] = {"input": 0, "output": 0, "reasoning": 0,
                               "cache": {"read": 0, "write": 0}}
        self._close_info()
        return self.message_id

    def _close_info(self) -> None:
        self.info["id"] = self.message_id
        self.info["sessionID"] = self.session.session_id


# ---------------------------------------------------------------------------------------------
