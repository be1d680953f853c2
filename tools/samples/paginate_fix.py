"""Story 7, paginate-fix (mini-swe-agent trajectory): an off-by-one in a pagination helper;
the model once answers with nothing at all, the harness asks for a command, and the run
ends with the submit command whose output is empty."""

from __future__ import annotations

from samples.common import Chance, Json, unified

PF_OLD = '''def page(items, number, size=20):
    """The items on page `number` (1-based) of `size` items each."""
    start = number * size
    return items[start:start + size]
'''
PF_NEW = PF_OLD.replace("start = number * size", "start = (number - 1) * size")
PF_DIFF = unified("shelfwise/paging.py", PF_OLD, PF_NEW)

PF_SYSTEM = (
    "You are an assistant that works in a Linux shell to resolve a software issue.\n"
    "Every reply holds a THOUGHT paragraph and exactly one ```bash block with one command "
    "(chain with && if needed). When done, run `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT` "
    "followed by `git add -A && git diff --cached` and nothing else."
)
PF_TASK = (
    "<pr_description>\nThe first page of search results repeats items 21-40 and items 1-20 "
    "never show. `page(items, 1)` should return the first 20 items.\n</pr_description>\n\n"
    "Fix the code in /testbed so the behaviour above is correct. Do not change the tests."
)
PF_FORMAT_ERROR = (
    "Your reply did not contain a single ```bash block. Reply with a THOUGHT and exactly one "
    "command."
)


def _step(thought: str, command: str) -> Json:
    return {"role": "assistant", "content": f"THOUGHT: {thought}\n\n```bash\n{command}\n```"}


def _observe(returncode: int, output: str) -> Json:
    return {"role": "user",
            "content": f"<returncode>{returncode}</returncode>\n<output>\n{output}</output>"}


def paginate_fix() -> Json:
    """The whole trajectory document."""
    chance = Chance(7007)
    cost = round(chance.between(0.05, 0.09), 4)
    messages: list[Json] = [
        {"role": "system", "content": PF_SYSTEM},
        {"role": "user", "content": PF_TASK},
        _step("Find where paging happens.", "grep -rn 'def page' /testbed --include=*.py"),
        _observe(0, "/testbed/shelfwise/paging.py:1:def page(items, number, size=20):\n"),
        _step("Read the helper.", "cat /testbed/shelfwise/paging.py"),
        _observe(0, PF_OLD),
        _step("Page numbers are 1-based but the start index treats them as 0-based. "
              "Reproduce before changing anything.",
              "cd /testbed && python -c 'from shelfwise.paging import page; "
              "print(page(list(range(1, 61)), 1)[:3])'"),
        _observe(0, "[21, 22, 23]\n"),
        {"role": "assistant", "content": ""},
        {"role": "user", "content": PF_FORMAT_ERROR},
        _step("Shift the start by one page.",
              "cd /testbed && sed -i 's/start = number \\* size/start = (number - 1) * size/' "
              "shelfwise/paging.py && python -c 'from shelfwise.paging import page; "
              "print(page(list(range(1, 61)), 1)[:3])'"),
        _observe(0, "[1, 2, 3]\n"),
        _step("Run the tests for paging.",
              "cd /testbed && python -m pytest -q tests/test_paging.py"),
        _observe(0, "....                                                   [100%]\n"
                    "4 passed in 0.02s\n"),
        _step("The fix works; submit.",
              "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached"),
        {"role": "user", "content": ""},
    ]
    return {
        "info": {
            "model_stats": {"instance_cost": cost, "api_calls": 8},
            "config": {
                "agent": {"step_limit": 50, "cost_limit": 3.0},
                "agent_type": "minisweagent.agents.default.DefaultAgent",
                "model": {"model_name": "anthropic/claude-sonnet-4-5"},
                "model_type": "minisweagent.models.litellm_model.LitellmModel",
                "environment_type": "minisweagent.environments.docker.DockerEnvironment",
            },
            "mini_version": "1.14.2",
            "exit_status": "Submitted",
            "submission": PF_DIFF,
        },
        "messages": messages,
        "trajectory_format": "mini-swe-agent-1",
    }
