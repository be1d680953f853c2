"""Builds Codex CLI rollouts line by line."""

from __future__ import annotations

import json
from collections.abc import Sequence

from samples.common import BASE62, Chance, Json, epoch_ms, iso_ms, reading_seconds, token_estimate


class CodexRollout:
    """Builds a Codex rollout file: `{timestamp, type, payload}` lines."""

    def __init__(self, seed: int, *, cwd: str, start: str, model: str, version: str,
                 branch: str, commit: str, remote: str) -> None:
        self.chance = Chance(seed)
        self.now = epoch_ms(start)
        self.cwd, self.model = cwd, model
        self.session_id = self.chance.uuid7(self.now - 4_200)
        self.lines: list[Json] = []
        self.turn_id = ""
        self.turn_started = 0
        self.total = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0,
                      "reasoning_output_tokens": 0, "total_tokens": 0}
        self.context = 9_800
        self.last_message = ""
        self.add("session_meta", {
            "id": self.session_id, "timestamp": iso_ms(self.now - 4_200), "cwd": cwd,
            "originator": "codex_cli_rs", "cli_version": version, "source": "cli",
            "model_provider": "openai",
            "base_instructions": {"text": (
                "You are Codex, a coding agent working in the user's repository through a "
                "terminal. Read before you change, keep edits small and reviewable, run the "
                "project's own checks, and report what you did and what you could not verify.")},
            "git": {"commit_hash": commit, "branch": branch, "repository_url": remote}})
        self.add("response_item", {"type": "message", "role": "developer", "content": [{
            "type": "input_text", "text": (
                "<permissions instructions>\nSandbox: workspace-write. You may read any file and "
                "write inside the working directory. Network access is off; ask for approval "
                "before commands that need it.\n</permissions instructions>")}]})
        self.add("response_item", {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": (
                f"# AGENTS.md instructions for {cwd}\n\n<INSTRUCTIONS>\n- Run `make check` "
                "(ruff, mypy, pytest) before declaring work done.\n- Tests must not sleep or "
                "depend on wall-clock time.\n- Keep public function signatures "
                "backwards-compatible.\n</INSTRUCTIONS>")},
            {"type": "input_text", "text": (
                f"<environment_context>\n  <cwd>{cwd}</cwd>\n  <shell>bash</shell>\n"
                "  <current_date>2026-05-19</current_date>\n  <timezone>Europe/Lisbon"
                "</timezone>\n</environment_context>")}]})

    def pause(self, seconds: float) -> None:
        """Let wall-clock time pass."""
        self.now += round(seconds * 1000)

    def add(self, kind: str, payload: Json) -> None:
        """Append one line at the current time."""
        self.lines.append({"timestamp": iso_ms(self.now), "type": kind, "payload": payload})

    def prompt(self, text: str) -> None:
        """The person submits a prompt: task start, turn context, the prompt twice."""
        self.turn_id = self.chance.uuid7(self.now)
        self.turn_started = self.now
        self.add("event_msg", {"type": "task_started", "turn_id": self.turn_id,
                               "started_at": self.now // 1000, "model_context_window": 272000,
                               "collaboration_mode_kind": "default"})
        self.pause(0.02)
        self.add("turn_context", {
            "turn_id": self.turn_id, "cwd": self.cwd, "current_date": "2026-05-19",
            "timezone": "Europe/Lisbon", "approval_policy": "on-request",
            "sandbox_policy": {"type": "workspace-write", "writable_roots": [],
                               "network_access": False, "exclude_tmpdir_env_var": False,
                               "exclude_slash_tmp": False},
            "model": self.model, "personality": "pragmatic", "effort": "medium",
            "summary": "auto", "truncation_policy": {"mode": "tokens", "limit": 10000}})
        self.pause(0.01)
        self.add("response_item", {"type": "message", "role": "user",
                                   "content": [{"type": "input_text", "text": text}]})
        self.pause(0.001)
        self.add("event_msg", {"type": "user_message", "message": text, "images": [],
                               "local_images": [], "text_elements": []})
        self.context += token_estimate(text)

    def reason(self, summary: str | None = None, *, seconds: float = 4.0, size: int = 900) -> None:
        """A reasoning item (encrypted), with its summary event when there is one."""
        self.pause(seconds)
        if summary:
            self.add("event_msg", {"type": "agent_reasoning", "text": summary})
        self.add("response_item", {
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": summary}] if summary else [],
            "content": None, "encrypted_content": "gAAAAAB" + self.chance.blob(size, urlsafe=True)})

    def say(self, text: str, phase: str = "commentary") -> None:
        """An assistant message, as the event and the response item."""
        self.pause(reading_seconds(text))
        self.add("event_msg", {"type": "agent_message", "message": text, "phase": phase,
                               "memory_citation": None})
        self.add("response_item", {"type": "message", "role": "assistant",
                                   "content": [{"type": "output_text", "text": text}],
                                   "phase": phase})
        self.last_message = text

    def _tokens(self, output: int, reasoning: int) -> None:
        cached = self.context - self.chance.integer(200, 1800)
        last = {"input_tokens": self.context, "cached_input_tokens": cached,
                "output_tokens": output, "reasoning_output_tokens": reasoning,
                "total_tokens": self.context + output}
        for key, value in last.items():
            self.total[key] += value
        self.add("event_msg", {"type": "token_count", "info": {
            "total_token_usage": dict(self.total), "last_token_usage": last,
            "model_context_window": 272000}, "rate_limits": None})
        self.context += output

    def run(self, command: str, output: str, *, seconds: float = 0.6, exit_code: int = 0,
            reasoning_tokens: int = 60) -> None:
        """An exec_command function call and its output."""
        self.pause(reading_seconds(command, 240))
        call_id = "call_" + self.chance.chars(BASE62, 24)
        arguments = json.dumps({"cmd": command, "workdir": self.cwd, "yield_time_ms": 10000,
                                "max_output_tokens": 12000})
        self.add("response_item", {"type": "function_call", "name": "exec_command",
                                   "arguments": arguments, "call_id": call_id})
        self.pause(0.03)
        self._tokens(token_estimate(arguments), reasoning_tokens)
        self.pause(seconds)
        self.add("event_msg", {
            "type": "exec_command_end", "call_id": call_id,
            "process_id": str(self.chance.integer(20000, 60000)), "turn_id": self.turn_id,
            "command": ["/bin/bash", "-lc", command], "cwd": self.cwd,
            "source": "unified_exec_startup", "stdout": output, "stderr": "",
            "aggregated_output": output, "exit_code": exit_code,
            "duration": {"secs": int(seconds), "nanos": int((seconds % 1) * 1e9)},
            "formatted_output": output, "status": "completed"})
        self.pause(0.01)
        self.add("response_item", {
            "type": "function_call_output", "call_id": call_id,
            "output": (f"Chunk ID: {self.chance.hex(6)}\nWall time: {seconds:.4f} seconds\n"
                       f"Process exited with code {exit_code}\nOriginal token count: "
                       f"{token_estimate(output)}\nOutput:\n{output}")})
        self.context += token_estimate(output)

    def patch(self, patch_text: str, files: Sequence[str]) -> None:
        """An apply_patch custom tool call and its output."""
        self.pause(reading_seconds(patch_text, 260))
        call_id = "call_" + self.chance.chars(BASE62, 24)
        self.add("response_item", {"type": "custom_tool_call", "status": "completed",
                                   "call_id": call_id, "name": "apply_patch",
                                   "input": patch_text})
        self.pause(0.03)
        self._tokens(token_estimate(patch_text), 40)
        self.pause(0.4)
        summary = "Success. Updated the following files:\n" + "".join(f"M {f}\n" for f in files)
        self.add("event_msg", {"type": "patch_apply_end", "call_id": call_id,
                               "turn_id": self.turn_id, "stdout": summary, "stderr": "",
                               "success": True, "status": "completed"})
        self.add("response_item", {"type": "custom_tool_call_output", "call_id": call_id,
                                   "output": json.dumps({"output": summary, "metadata": {
                                       "exit_code": 0, "duration_seconds": 0.4}})})

    def finish(self, text: str) -> None:
        """The final answer and the end of the task."""
        self.say(text, "final_answer")
        self._tokens(token_estimate(text), 30)
        self.pause(0.03)
        self.add("event_msg", {"type": "task_complete", "turn_id": self.turn_id,
                               "last_agent_message": text, "completed_at": self.now // 1000,
                               "duration_ms": self.now - self.turn_started})

    def abort(self) -> None:
        """The person interrupts the running turn (Esc)."""
        self.pause(0.2)
        self.add("event_msg", {"type": "turn_aborted", "turn_id": self.turn_id,
                               "reason": "interrupted"})
