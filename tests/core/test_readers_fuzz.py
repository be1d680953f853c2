"""No input makes any reader raise anything but `ReaderError` (property-based, every reader).

For each reader found at run time, three kinds of input are written to a file and read
directly (`reader.read`), by detection (`load_sessions(path)`) and by name
(`load_sessions(path, format=...)`):

(a) arbitrary bytes, some starting like one of the formats;
(b) arbitrary JSON values built from the keys and words the formats use, as one document and
    as JSON lines;
(c) valid envelopes of each format whose fields hold wrong-typed values.

Whatever comes back must be a list of well-formed sessions that detection and the scan
report can handle.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from replay.core.corpus.scan import scan_session
from replay.core.detection.empty import find_empty_turns
from replay.core.readers import ReaderError, all_readers, load_sessions
from replay.core.readers.base import HEAD_BYTES, Reader
from replay.core.session.model import Part, Session, Turn

READERS = all_readers()

FUZZ = settings(
    # REPLAY_FUZZ_EXAMPLES=5000 runs a deeper campaign by hand; the suite stays fast.
    max_examples=int(os.environ.get("REPLAY_FUZZ_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                           HealthCheck.data_too_large],
)

KNOWN_CRASHES: dict[tuple[str, str], tuple[bytes, str]] = {}
"""Crashes still open in a reader: (file, function) of the raising frame → (minimal input,
cause). The property tests step over exactly these so they keep exploring other paths; a
fixed one's input stays in REGRESSIONS."""


def _known_crash(error: BaseException) -> bool:
    frames = traceback.extract_tb(error.__traceback__)
    return bool(frames) and (Path(frames[-1].filename).name, frames[-1].name) in KNOWN_CRASHES


def _readers() -> list[Any]:
    return [pytest.param(reader, id=reader.name) for reader in READERS]


# --- strategies ------------------------------------------------------------------------------

KEYS = [
    "role", "content", "type", "message", "payload", "parts", "info", "messages",
    "conversations", "toolCalls", "from", "value", "text", "id", "uuid", "parentUuid",
    "sessionId", "sessionID", "session_id", "timestamp", "time", "created", "completed",
    "tool_calls", "function", "arguments", "name", "tool_call_id", "call_id", "callID", "state",
    "status", "input", "output", "thoughts", "tokens", "error", "summary", "data", "tool",
    "model", "isSidechain", "isMeta", "leafUuid", "replacement_history", "encrypted_content",
    "phase", "subtype", "projectHash", "startTime", "lastUpdated", "mode", "agent", "synthetic",
    "finish", "args", "result", "response", "functionCall", "functionResponse", "thinking",
    "tool_use_id", "is_error", "messageID", "system", "title", "version", "cwd",
    "toolUseResult", "isCompactSummary", "logicalParentUuid", "reasoning", "contents", "metadata",
]
WORDS = [
    "user", "assistant", "system", "tool", "developer", "gemini", "info", "error", "warning",
    "human", "gpt", "observation", "function_call", "text", "tool_use", "tool_result",
    "thinking", "image", "message", "response_item", "event_msg", "session_meta",
    "turn_context", "compacted", "reasoning", "function_call_output", "custom_tool_call",
    "input_text", "output_text", "user_message", "agent_message", "agent_reasoning",
    "token_count", "summary", "file-history-snapshot", "queue-operation", "progress",
    "attachment", "compact_boundary", "step-start", "step-finish", "snapshot", "patch", "file",
    "compaction", "subtask", "agent", "retry", "completed", "running", "pending", "",
    "2024-05-01T10:00:00Z", "2024-05-01 10:00:00", "MessageAbortedError", "\n\n",
    "<conversation_data>\n\n</conversation_data>", "<local-command-stdout></local-command-stdout>",
]

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False), st.sampled_from(WORDS), st.text(max_size=12),
)
anything = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=6)), children,
                        max_size=5),
    ),
    max_leaves=20,
)
"""Any JSON value, biased to the keys and words the formats use."""

wrong = st.recursive(
    scalars,
    lambda children: st.one_of(st.lists(children, max_size=2),
                               st.dictionaries(st.sampled_from(KEYS), children, max_size=2)),
    max_leaves=4,
)
"""A small value of any type: what a wrong-typed field holds inside an envelope."""


def _word(*words: str) -> st.SearchStrategy[Any]:
    """A known value most of the time, anything otherwise (the wrong-typed case)."""
    return st.one_of(st.sampled_from(words), wrong)


def _document(value: Any) -> bytes:
    return json.dumps(value).encode()


def _lines(values: list[Any]) -> bytes:
    return b"".join(json.dumps(value).encode() + b"\n" for value in values)


MAGIC = [
    b"", b"# aider chat started at 2024-05-01 10:20:30\n", b"#### ", b"> ", b"{", b"[",
    b'{"type":"user","message":', b'{"timestamp":"2024-05-01T10:00:00Z","type":"response_item",',
    b'{"sessionId":"s","messages":[', b'{"info":{"id":"ses_1"},"messages":[',
    b'{"messages":[{"role":"user","content":', b'{"conversations":[{"from":"human","value":',
    b'{"role":"assistant","content":', b"SQLite format 3\x00", b"\xef\xbb\xbf",
]

raw_bytes = st.one_of(
    st.binary(max_size=600),
    st.tuples(st.sampled_from(MAGIC), st.binary(max_size=300)).map(lambda t: t[0] + t[1]),
    st.lists(st.text(max_size=40), max_size=12).map(lambda xs: "\n".join(xs).encode()),
)

json_inputs = st.one_of(
    anything.map(_document),
    anything.map(lambda v: _lines(v) if isinstance(v, list) else _lines([v])),
    st.lists(anything, max_size=6).map(_lines),
)

# (c) envelopes: the right skeleton with wrong inside.

content_block = st.fixed_dictionaries(
    {"type": _word("text", "thinking", "tool_use", "tool_result", "image", "input_text",
                   "output_text", "image_url", "refusal")},
    optional={key: wrong for key in ("text", "thinking", "id", "name", "input", "tool_use_id",
                                        "content", "image_url", "signature", "is_error")},
)
content = st.one_of(wrong, st.lists(content_block, max_size=3))

claude_line = st.fixed_dictionaries(
    {
        "type": _word("user", "assistant", "system", "summary", "progress", "attachment",
                      "file-history-snapshot", "queue-operation"),
        "uuid": wrong, "sessionId": wrong, "timestamp": _word("2024-05-01T10:00:00Z"),
        "message": st.one_of(wrong, st.fixed_dictionaries(
            {"role": _word("user", "assistant"), "content": content},
            optional={"id": wrong, "model": wrong, "usage": wrong})),
    },
    optional={key: wrong for key in ("parentUuid", "isSidechain", "isMeta", "toolUseResult",
                                        "subtype", "isCompactSummary", "leafUuid", "agentId",
                                        "requestId", "content")},
)

codex_payload = st.fixed_dictionaries(
    {"type": _word("message", "reasoning", "function_call", "function_call_output",
                   "custom_tool_call", "custom_tool_call_output", "user_message",
                   "agent_message", "agent_reasoning", "token_count", "task_started",
                   "task_complete", "turn_aborted", "context_compacted", "web_search_call")},
    optional={key: wrong for key in ("role", "content", "id", "call_id", "name",
                                        "arguments", "output", "summary", "message", "phase",
                                        "encrypted_content", "turn_id", "info")},
)
codex_line = st.fixed_dictionaries({
    "timestamp": _word("2024-05-01T10:00:00.000Z"),
    "type": _word("session_meta", "response_item", "event_msg", "turn_context", "compacted"),
    "payload": st.one_of(wrong, codex_payload,
                         st.fixed_dictionaries({"message": wrong,
                                                "replacement_history": wrong})),
})

gemini_message = st.fixed_dictionaries(
    {"type": _word("user", "gemini", "info", "error", "warning"), "content": wrong},
    optional={key: wrong for key in ("id", "timestamp", "toolCalls", "thoughts", "tokens",
                                        "model")},
)
gemini_doc = st.fixed_dictionaries(
    {"sessionId": wrong, "messages": st.one_of(wrong, st.lists(gemini_message, max_size=4))},
    optional={"projectHash": wrong, "startTime": wrong, "lastUpdated": wrong},
)

opencode_part = st.fixed_dictionaries(
    {"type": _word("text", "reasoning", "tool", "file", "step-start", "step-finish", "snapshot",
                   "patch", "agent", "retry", "compaction", "subtask")},
    optional={key: wrong for key in ("id", "text", "synthetic", "tool", "callID", "reason",
                                        "auto", "mime", "url", "filename", "time")}
    | {"state": st.one_of(wrong, st.fixed_dictionaries(
        {"status": _word("pending", "running", "completed", "error")},
        optional={k: wrong for k in ("input", "output", "title", "metadata", "time")}))},
)
opencode_info = st.fixed_dictionaries(
    {"id": wrong, "role": _word("user", "assistant"),
     "time": st.one_of(wrong, st.fixed_dictionaries({"created": wrong},
                                                       optional={"completed": wrong}))},
    optional={key: wrong for key in ("sessionID", "error", "summary", "mode", "agent",
                                        "modelID", "tokens", "parentID", "finish")},
)
opencode_doc = st.fixed_dictionaries({
    "info": st.one_of(wrong, st.fixed_dictionaries({"id": wrong},
                                                      optional={"title": wrong})),
    "messages": st.one_of(wrong, st.lists(st.fixed_dictionaries(
        {"info": st.one_of(wrong, opencode_info),
         "parts": st.one_of(wrong, st.lists(opencode_part, max_size=3))}), max_size=4)),
})

chat_message = st.fixed_dictionaries(
    {"role": _word("user", "assistant", "system", "tool", "developer", "model", "function")},
    optional={"content": content, "tool_call_id": wrong, "id": wrong, "name": wrong,
              "timestamp": wrong, "parts": wrong,
              "tool_calls": st.one_of(wrong, st.lists(st.fixed_dictionaries(
                  {"id": wrong, "function": st.one_of(wrong, st.fixed_dictionaries(
                      {"name": wrong, "arguments": wrong}))}), max_size=2))},
)
chat_doc = st.one_of(
    st.fixed_dictionaries({"messages": st.lists(chat_message, max_size=5)},
                          optional={"id": wrong, "model": wrong}),
    st.lists(st.fixed_dictionaries({"messages": st.lists(chat_message, max_size=3)}),
             max_size=3),
)
sharegpt_turn = st.fixed_dictionaries(
    {"from": _word("human", "gpt", "system", "function_call", "observation"),
     "value": wrong},
)
sharegpt_doc = st.fixed_dictionaries(
    {"conversations": st.lists(sharegpt_turn, max_size=5)},
    optional={"id": wrong, "system": wrong},
)

AIDER_LINES = ["# aider chat started at 2024-05-01 10:20:30", "# aider chat started at ",
               "#### ", "####", "#### <blank>", "> ", ">", "> ^C KeyboardInterrupt",
               "^C KeyboardInterrupt", "> ^C again to exit", "> Tokens: 1k sent, 2 received.",
               "> Model: x with diff edit format", "", "```", "/ask"]
aider_text = st.lists(
    st.one_of(st.sampled_from(AIDER_LINES),
              st.tuples(st.sampled_from(AIDER_LINES), st.text(max_size=20)).map("".join)),
    max_size=25,
).map(lambda lines: "\n".join(lines).encode("utf-8", errors="surrogatepass"))

envelopes = st.one_of(
    st.lists(claude_line, max_size=5).map(_lines),
    st.lists(codex_line, max_size=5).map(_lines),
    gemini_doc.map(_document),
    st.lists(gemini_message, max_size=5).map(_lines),
    opencode_doc.map(_document),
    chat_doc.map(_document),
    st.lists(chat_message, max_size=6).map(_lines),
    sharegpt_doc.map(_document),
    st.lists(sharegpt_doc, max_size=3).map(_document),
    aider_text,
)

NAMES = ["session.jsonl", "session.json", ".aider.chat.history.md", "opencode.db", "data"]


# --- the property ------------------------------------------------------------------------------

ROLES = {"user", "assistant", "system"}


def _check_session(session: Session, depth: int = 0) -> None:
    assert isinstance(session, Session)
    assert isinstance(session.turns, list) and isinstance(session.skipped, int)
    assert all(isinstance(warning, str) for warning in session.warnings)
    for index, turn in enumerate(session.turns):
        assert isinstance(turn, Turn)
        assert turn.index == index, "Session.add was bypassed"
        assert isinstance(turn.id, str)
        assert turn.role in ROLES, turn.role
        assert turn.timestamp is None or isinstance(turn.timestamp, str)
        for part in session.full_parts(turn):
            assert isinstance(part, Part)
            assert isinstance(part.kind, str) and isinstance(part.text, str)
    find_empty_turns(session)
    orjson.dumps(scan_session(session).to_json())
    if depth < 3:
        for sidechain in session.sidechains:
            _check_session(sidechain, depth + 1)


def _holds(read: Callable[[], list[Session]]) -> None:
    """`read` returns well-formed sessions or raises ReaderError; anything else fails."""
    try:
        sessions = read()
    except ReaderError as error:
        message = str(error)
        assert message and "\n" not in message.strip(), f"not one line: {message!r}"
        return
    except Exception as error:
        if _known_crash(error):
            return
        raise
    assert isinstance(sessions, list)
    for session in sessions:
        _check_session(session)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@pytest.fixture
def scratch(workdir: Path) -> Callable[[], Iterator[Path]]:
    """A fresh directory per example, removed afterwards."""
    from contextlib import contextmanager

    @contextmanager
    def fresh() -> Iterator[Path]:
        path = Path(tempfile.mkdtemp(dir=workdir))
        try:
            yield path
        finally:
            shutil.rmtree(path, ignore_errors=True)

    return fresh  # type: ignore[return-value]


def _exercise(reader: Reader, directory: Path, name: str, data: bytes) -> None:
    """The reader alone: its sniff, its read, and `load_sessions` with its name."""
    path = directory / name
    path.write_bytes(data)
    try:
        sniffed = reader.sniff(path, data[:HEAD_BYTES])
    except (OSError, ValueError):
        sniffed = False  # detection treats these as "not mine"
    except Exception as error:
        if not _known_crash(error):
            raise
        sniffed = False
    assert isinstance(sniffed, bool)
    _holds(lambda: reader.read(path, None))
    _holds(lambda: load_sessions(path, format=reader.name))
    if reader.directories:
        _holds(lambda: reader.read(directory, None))


def _detect(directory: Path, name: str, data: bytes) -> None:
    """Every reader at once: detection picks one (or none) and it reads cleanly."""
    path = directory / name
    path.write_bytes(data)
    _holds(lambda: load_sessions(path))


REGRESSIONS: list[bytes] = [
    b"\x0b",
    b'{"type": []}\n',
    b'{"type": {}, "payload": []}\n',
    b"[]", b"{}", b"null", b'"x"', b"\n\n",
    b'{"messages": [{"role": [], "content": null}, {"role": "tool", "content": {}}]}',
    b'{"conversations": [{"from": [], "value": 1}, {"from": "gpt", "value": {}}]}',
    b'\xef\xbb\xbf{"role": "user", "content": [[], {"type": []}]}\n',
    b"# aider chat started at\n#### \n> ^C KeyboardInterrupt\n^C KeyboardInterrupt\n",
]
"""Inputs that once broke a reader; every test runs them before the random ones."""


def regressions(test: Callable[..., None]) -> Callable[..., None]:
    """Run every REGRESSIONS input through a `data`/`name` property test first."""
    for data in REGRESSIONS:
        test = example(data=data, name="session.jsonl")(test)
    return test


@pytest.mark.parametrize("reader", _readers())
@FUZZ
@given(data=raw_bytes, name=st.sampled_from(NAMES))
@regressions
def test_arbitrary_bytes(reader: Reader, scratch: Any, data: bytes, name: str) -> None:
    with scratch() as directory:
        _exercise(reader, directory, name, data)


@pytest.mark.parametrize("reader", _readers())
@FUZZ
@given(data=json_inputs, name=st.sampled_from(NAMES))
@regressions
def test_arbitrary_json(reader: Reader, scratch: Any, data: bytes, name: str) -> None:
    with scratch() as directory:
        _exercise(reader, directory, name, data)


@pytest.mark.parametrize("reader", _readers())
@FUZZ
@given(data=envelopes, name=st.sampled_from(NAMES))
@regressions
def test_wrong_types_in_valid_envelopes(reader: Reader, scratch: Any, data: bytes,
                                        name: str) -> None:
    with scratch() as directory:
        _exercise(reader, directory, name, data)


@FUZZ
@given(data=raw_bytes, name=st.sampled_from(NAMES))
@regressions
def test_detection_bytes(scratch: Any, data: bytes, name: str) -> None:
    with scratch() as directory:
        _detect(directory, name, data)


@FUZZ
@given(data=json_inputs, name=st.sampled_from(NAMES))
@regressions
def test_detection_json(scratch: Any, data: bytes, name: str) -> None:
    with scratch() as directory:
        _detect(directory, name, data)


@FUZZ
@given(data=envelopes, name=st.sampled_from(NAMES))
@regressions
def test_detection_envelopes(scratch: Any, data: bytes, name: str) -> None:
    with scratch() as directory:
        _detect(directory, name, data)


def test_every_reader_is_fuzzed() -> None:
    """The generic readers this suite was written with are among those fuzzed."""
    names = {reader.name for reader in READERS}
    assert {"aider", "chat-json", "chat-jsonl", "sharegpt"} <= names


def test_the_property_can_fail() -> None:
    """A reader that lets a TypeError out is caught by the check."""

    def broken() -> list[Session]:
        raise TypeError("boom")

    with pytest.raises(TypeError):
        _holds(broken)
    with pytest.raises(AssertionError):
        _holds(lambda: [Session(path="x", format="y", turns=[Turn(id="a", role="robot")])])

