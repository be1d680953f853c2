"""Story 8, cache-expiry (SWE-agent `.traj`): a cache that never expires its entries; the
model edits and tests, then returns an empty step as the cost limit ends the run with no
submission."""

from __future__ import annotations

import json

from samples.common import Chance, Json

CE_SYSTEM = (
    "SETTING: You are an autonomous programmer working in a command line with a special "
    "file viewer. Commands: open <path> [<line>], goto <line>, scroll_down, scroll_up, "
    "search_file <text>, edit <start>:<end> (then the new lines, then end_of_edit), submit. "
    "Reply with a DISCUSSION and one command in a ``` block."
)
CE_DEMO = "Here is a demonstration of a solved issue: (demonstration omitted in this sample)"
CE_TASK = (
    "We're currently solving the following issue within our repository:\nISSUE:\n"
    "TTLCache.get returns values long after their ttl has passed; `cache.get('k')` still "
    "answers an hour after `cache.set('k', 1, ttl=5)`.\n\n(Open file: n/a)\n"
    "(Current directory: /tidepool)\nbash-$"
)
CE_FILE = [
    "class TTLCache:",
    "    def __init__(self, clock=time.monotonic):",
    "        self._clock = clock",
    "        self._items = {}",
    "",
    "    def set(self, key, value, ttl):",
    "        self._items[key] = (value, self._clock() + ttl)",
    "",
    "    def get(self, key, default=None):",
    "        value, _expires = self._items.get(key, (default, None))",
    "        return value",
]


def _listing(lines: list[str], start: int = 1) -> str:
    return "\n".join(f"{number}:{line}" for number, line in enumerate(lines, start))


def _state(open_file: str) -> str:
    return json.dumps({"open_file": open_file, "working_dir": "/tidepool"})


def _step(chance: Chance, thought: str, action: str, observation: str, open_file: str) -> Json:
    response = f"DISCUSSION\n{thought}\n\n```\n{action}\n```" if action else thought
    return {"action": action, "observation": observation, "response": response,
            "thought": thought, "execution_time": round(chance.between(0.05, 2.5), 3),
            "state": _state(open_file), "extra_info": {}}


def cache_expiry() -> Json:
    """The whole `.traj` document."""
    chance = Chance(8008)
    fixed = CE_FILE[:9] + [
        "        value, expires = self._items.get(key, (default, None))",
        "        if expires is not None and self._clock() >= expires:",
        "            del self._items[key]",
        "            return default",
        "        return value",
    ]
    steps = [
        _step(chance, "Let me find the cache class first.", "search_dir \"class TTLCache\"",
              "Found 1 matches for \"class TTLCache\" in /tidepool:\n/tidepool/tidepool/cache.py "
              "(1 matches)\nEnd of matches for \"class TTLCache\" in /tidepool", "n/a"),
        _step(chance, "Open the file to read `get`.", "open tidepool/cache.py",
              "[File: /tidepool/tidepool/cache.py (11 lines total)]\n" + _listing(CE_FILE),
              "/tidepool/tidepool/cache.py"),
        _step(chance, "`get` ignores the expiry time it stored. Check it before returning.",
              "edit 10:11\n" + "\n".join(fixed[9:]) + "\nend_of_edit",
              "[File: /tidepool/tidepool/cache.py (14 lines total)]\n" + _listing(fixed) +
              "\nFile updated. Please review the changes and make sure they are correct.",
              "/tidepool/tidepool/cache.py"),
        _step(chance, "Run the cache tests.", "python -m pytest -q tests/test_cache.py",
              "..F\nFAILED tests/test_cache.py::test_expired_entry_is_gone - NameError: name "
              "'time' is not defined\n1 failed, 2 passed in 0.04s",
              "/tidepool/tidepool/cache.py"),
        _step(chance, "", "", "", "/tidepool/tidepool/cache.py"),
    ]
    history: list[Json] = [
        {"role": "system", "content": CE_SYSTEM, "agent": "primary",
         "message_type": "system_prompt"},
        {"role": "user", "content": CE_DEMO, "agent": "primary", "message_type": "observation",
         "is_demo": True},
        {"role": "user", "content": CE_TASK, "agent": "primary", "message_type": "observation"},
    ]
    for step in steps:
        history.append({"role": "assistant", "content": step["response"], "thought":
                        step["thought"], "action": step["action"], "agent": "primary",
                        "message_type": "action"})
        if step["observation"]:
            history.append({"role": "user", "content": step["observation"], "agent": "primary",
                            "message_type": "observation"})
    return {
        "environment": "swe_main",
        "trajectory": steps,
        "history": history,
        "info": {
            "swe_agent_hash": chance.hex(),
            "swe_agent_version": "0.7.0",
            "exit_status": "exit_cost",
            "submission": None,
            "model_stats": {"total_cost": round(chance.between(1.9, 2.0), 4),
                            "instance_cost": 2.0, "tokens_sent": 48213,
                            "tokens_received": 1287, "api_calls": 5},
        },
    }
