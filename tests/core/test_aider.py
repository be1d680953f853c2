"""The Aider chat-history reader, on constructed histories (no openly licensed sample exists)."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.core.detection.empty import find_empty_turns
from replay.core.readers import UnreadablePath, detect_reader, get_reader, load_sessions
from replay.core.readers.aider import parse_tokens, prompt_expects_reply
from replay.core.readers.base import read_spans
from replay.core.session.model import Kind, Session, Turn

# Aider ends `####` and `>` lines with two spaces (a markdown line break); kept on purpose.
HISTORY = """
# aider chat started at 2024-05-01 10:20:30

> /usr/bin/aider foo.py  
> Aider v0.50.1  
> Model: claude-3-5-sonnet-20240620 with diff edit format  
> Added foo.py to the chat.  

#### fix the off-by-one in foo.py  
####   
#### keep the tests green  

The loop stops one early.

```python
for i in range(n + 1):
    pass
```

> Tokens: 2.4k sent, 1,204 cache hit, 393 received. Cost: $0.01 message, $0.02 session.  
> Applied edit to foo.py  

#### <blank>  

#### /model gpt-4o  

#### /add bar.py  
> Added bar.py to the chat  
>  
>  
> ^C again to exit  

####   
####   

#### explain bar.py  

> litellm.APIConnectionError: connection reset  
> Retrying in 0.2 seconds...  
>  
>  
> ^C again to exit  

#### go on  

Bar reads the conf
>  
>  
> ^C KeyboardInterrupt  

# aider chat started at 2024-05-01 11:00:00

> Aider v0.50.1  
>  
>  
> ^C again to exit  
>  
>  
> ^C KeyboardInterrupt  

# aider chat started at 2024-05-02 09:00:00

#### /ask why?  

Because the loop
^C KeyboardInterrupt

#### thanks  

You're welcome.
"""


def _summary(turn: Turn) -> tuple[str, str, list[tuple[str, str]]]:
    return turn.id, turn.role, [(part.kind, part.name or part.text) for part in turn.parts]


@pytest.fixture
def history(tmp_path: Path) -> Path:
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(HISTORY, encoding="utf-8")
    return path


@pytest.fixture
def sessions(history: Path) -> list[Session]:
    return load_sessions(history)


def test_detects_aider_history(history: Path) -> None:
    assert detect_reader(history).name == "aider"


def test_one_session_per_header(sessions: list[Session]) -> None:
    assert [s.session_id for s in sessions] == [
        "2024-05-01 10:20:30", "2024-05-01 11:00:00", "2024-05-02 09:00:00"]
    assert [len(s.turns) for s in sessions] == [14, 1, 4]
    assert all(s.format == "aider" and s.skipped == 0 and not s.warnings for s in sessions)
    assert sessions[0].meta == {"started_at": "2024-05-01 10:20:30", "version": "0.50.1",
                                "model": "claude-3-5-sonnet-20240620"}


def test_first_session_turns(sessions: list[Session]) -> None:
    assert [_summary(turn) for turn in sessions[0].turns] == [
        ("1-1", "system", [(Kind.TEXT, "/usr/bin/aider foo.py\nAider v0.50.1\n"
                           "Model: claude-3-5-sonnet-20240620 with diff edit format\n"
                           "Added foo.py to the chat.")]),
        ("1-2", "user", [(Kind.TEXT, "fix the off-by-one in foo.py\n\nkeep the tests green")]),
        ("1-3", "assistant", [(Kind.TEXT, "The loop stops one early.\n\n```python\n"
                               "for i in range(n + 1):\n    pass\n```")]),
        ("1-4", "system", [(Kind.TEXT, "Tokens: 2.4k sent, 1,204 cache hit, 393 received. "
                            "Cost: $0.01 message, $0.02 session.\nApplied edit to foo.py")]),
        ("1-5", "user", [(Kind.TEXT, "")]),
        ("1-6", "user", [(Kind.TEXT, "/model gpt-4o")]),
        ("1-7", "user", [(Kind.TEXT, "/add bar.py")]),
        # ^C at the prompt after a command that gets no reply is aider output, not an abort.
        ("1-8", "system", [(Kind.TEXT, "Added bar.py to the chat\n\n\n^C again to exit")]),
        ("1-9", "user", [(Kind.TEXT, "\n")]),
        ("1-10", "user", [(Kind.TEXT, "explain bar.py")]),
        ("1-11", "system", [(Kind.TEXT, "litellm.APIConnectionError: connection reset\n"
                             "Retrying in 0.2 seconds...")]),
        ("1-12", "assistant", [(Kind.ERROR, "KeyboardInterrupt")]),
        ("1-13", "user", [(Kind.TEXT, "go on")]),
        ("1-14", "assistant", [(Kind.TEXT, "Bar reads the conf"),
                               (Kind.ERROR, "KeyboardInterrupt")]),
    ]


def test_reply_metadata(sessions: list[Session]) -> None:
    turns = sessions[0].turns
    assert turns[2].tokens == {"input": 2400, "cache_read": 1204, "output": 393}
    assert turns[2].model == "claude-3-5-sonnet-20240620"
    assert turns[0].timestamp == "2024-05-01 10:20:30"
    assert turns[0].time is not None
    assert [t.timestamp for t in turns[1:]] == [None] * 13


def test_interrupt_only_session_is_aider_output(sessions: list[Session]) -> None:
    assert [_summary(turn) for turn in sessions[1].turns] == [
        ("2-1", "system", [(Kind.TEXT, "Aider v0.50.1\n\n\n^C again to exit\n\n\n"
                           "^C KeyboardInterrupt")]),
    ]
    assert find_empty_turns(sessions[1]) == []


def test_unprefixed_interrupt_in_reply(sessions: list[Session]) -> None:
    assert [_summary(turn) for turn in sessions[2].turns] == [
        ("3-1", "user", [(Kind.TEXT, "/ask why?")]),
        ("3-2", "assistant", [(Kind.TEXT, "Because the loop"), (Kind.ERROR, "KeyboardInterrupt")]),
        ("3-3", "user", [(Kind.TEXT, "thanks")]),
        ("3-4", "assistant", [(Kind.TEXT, "You're welcome.")]),
    ]
    assert sessions[2].turns[1].parts[1].text == "^C KeyboardInterrupt"


def test_empty_turns(sessions: list[Session]) -> None:
    found = [(e.id, e.role, e.reason) for e in find_empty_turns(sessions[0])]
    assert found == [
        ("1-5", "user", "blank-text"),
        ("1-9", "user", "blank-text"),
        ("1-12", "assistant", "aborted"),
    ]
    assert [(e.id, e.reason) for e in find_empty_turns(sessions[2])] == []


def test_sources_point_at_the_lines(history: Path, sessions: list[Session]) -> None:
    turns = sessions[0].turns
    assert [t.source.line for t in turns if t.source] == [
        4, 9, 13, 20, 23, 25, 27, 28, 33, 36, 38, 42, 44, 46]
    prompt = turns[1].source
    assert prompt is not None and prompt.path == str(history)
    raw = read_spans(prompt.path, prompt.spans)[0].decode()
    assert raw == ("#### fix the off-by-one in foo.py  \n####   \n"
                   "#### keep the tests green  \n")
    interrupt = turns[11].source
    assert interrupt is not None
    assert read_spans(interrupt.path, interrupt.spans)[0] == b"> ^C again to exit  \n"


def test_text_before_first_header_is_session_zero(tmp_path: Path) -> None:
    path = tmp_path / "cut.md"
    path.write_text("the tail of a reply\n\n#### next  \n\n# aider chat started at 2024-01-01 "
                    "00:00:00\n\n#### hi  \n", encoding="utf-8")
    sessions = get_reader("aider").read(path, None)
    assert [s.session_id for s in sessions] == ["#0", "2024-01-01 00:00:00"]
    assert [_summary(t) for t in sessions[0].turns] == [
        ("0-1", "assistant", [(Kind.TEXT, "the tail of a reply")]),
        ("0-2", "user", [(Kind.TEXT, "next")]),
    ]
    assert sessions[0].skipped == 0 and len(sessions[0].warnings) == 1
    assert [_summary(t) for t in sessions[1].turns] == [("1-1", "user", [(Kind.TEXT, "hi")])]


def test_crlf_and_repeated_header_time(tmp_path: Path) -> None:
    path = tmp_path / "crlf.md"
    text = ("# aider chat started at 2024-01-01 00:00:00\r\n\r\n#### a  \r\n\r\nreply\r\n\r\n"
            "# aider chat started at 2024-01-01 00:00:00\r\n\r\n#### b  \r\n")
    path.write_bytes(text.encode())
    sessions = load_sessions(path, format="aider")
    assert [s.session_id for s in sessions] == ["2024-01-01 00:00:00", "2024-01-01 00:00:00 #2"]
    assert [_summary(t) for t in sessions[0].turns] == [
        ("1-1", "user", [(Kind.TEXT, "a")]), ("1-2", "assistant", [(Kind.TEXT, "reply")])]


def test_empty_file_is_one_session_with_no_turns_and_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "empty.md"
    path.write_bytes(b"")
    (session,) = load_sessions(path, format="aider")
    assert (session.turns, session.warnings) == ([], ["the file is empty: 0 turns read"])


def test_missing_path_is_a_clean_error(tmp_path: Path) -> None:
    with pytest.raises(UnreadablePath):
        get_reader("aider").read(tmp_path / "nope.md", None)
    with pytest.raises(UnreadablePath):
        get_reader("aider").read(tmp_path, None)


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b"# aider chat started at 2024-05-01 10:20:30\n", True),
        (b"\n# aider chat started at 2024-05-01 10:20:30\n", True),
        (b"notes\n" * 50 + b"# aider chat started at x\n", True),
        (b'{"text": "# aider chat started at x"}\n', False),
        (b"# other markdown\n#### heading\n", False),
    ],
)
def test_sniff(tmp_path: Path, head: bytes, expected: bool) -> None:
    assert get_reader("aider").sniff(tmp_path / "x.md", head) is expected


def test_prompt_expects_reply() -> None:
    assert [prompt_expects_reply(text) for text in (
        "fix it", "/ask why", "/ARCHITECT plan", "/add x.py", "/model gpt-4o", "!ls", "", "/",
    )] == [True, True, True, False, False, False, False, False]


def test_parse_tokens() -> None:
    assert parse_tokens("Tokens: 12k sent, 1.5k cache write, 393 received.") == {
        "input": 12000, "cache_write": 1500, "output": 393}
    assert parse_tokens("Tokens: lots") == {}


# ------------------------------------------------------------ what aider did with a ^C
# Aider's `Coder.send` catches ^C, writes `> ^C again to exit` and only then the part of the
# reply that had come; a second ^C within two seconds writes `> ^C KeyboardInterrupt` and quits.

def _read(tmp_path: Path, text: str) -> list[Session]:
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(text, encoding="utf-8")
    return load_sessions(path)


def test_a_cut_reply_is_the_text_written_after_the_interrupt(tmp_path: Path) -> None:
    (session,) = _read(tmp_path, "# aider chat started at 2025-01-01 10:00:00\n\n"
                       "#### rewrite the parser  \n\n>  \n>  \n> ^C again to exit  \n\n"
                       "Here is the first half of the\n\n#### shorter please  \n")
    assert [_summary(turn) for turn in session.turns] == [
        ("1-1", "user", [(Kind.TEXT, "rewrite the parser")]),
        ("1-2", "assistant", [(Kind.TEXT, "Here is the first half of the"),
                              (Kind.ERROR, "KeyboardInterrupt")]),
        ("1-3", "user", [(Kind.TEXT, "shorter please")]),
    ]
    assert find_empty_turns(session) == []


def test_an_interrupt_before_any_reply_text_is_an_aborted_reply(tmp_path: Path) -> None:
    (session,) = _read(tmp_path, "# aider chat started at 2025-01-01 10:00:00\n\n"
                       "#### rewrite the parser  \n\n>  \n>  \n> ^C again to exit  \n>  \n"
                       ">  \n> ^C KeyboardInterrupt  \n")
    assert [_summary(turn) for turn in session.turns] == [
        ("1-1", "user", [(Kind.TEXT, "rewrite the parser")]),
        ("1-2", "assistant", [(Kind.ERROR, "KeyboardInterrupt")]),
    ]
    assert [(e.id, e.reason) for e in find_empty_turns(session)] == [("1-2", "aborted")]


def test_quitting_at_the_prompt_after_a_failed_request_is_no_reply(tmp_path: Path) -> None:
    """The request failed (aider said so and asked a question): the ^C pair came at the prompt."""
    (session,) = _read(tmp_path, "# aider chat started at 2025-01-01 10:00:00\n\n"
                       "#### go on  \n> litellm.BadRequestError: LLM Provider NOT provided.  \n"
                       "> Open URL for more info? (Y)es/(N)o/(D)on't ask again [Yes]: y  \n"
                       ">  \n>  \n> ^C again to exit  \n>  \n>  \n> ^C KeyboardInterrupt  \n")
    assert [turn.role for turn in session.turns] == ["user", "system"]
    assert find_empty_turns(session) == []


def test_quitting_after_a_finished_reply_is_aider_output(tmp_path: Path) -> None:
    (session,) = _read(tmp_path, "# aider chat started at 2025-01-01 10:00:00\n\n"
                       "#### explain it  \n\nIt reads the file.\n\n>  \n>  \n"
                       "> ^C again to exit  \n>  \n>  \n> ^C KeyboardInterrupt  \n")
    assert [_summary(turn) for turn in session.turns] == [
        ("1-1", "user", [(Kind.TEXT, "explain it")]),
        ("1-2", "assistant", [(Kind.TEXT, "It reads the file.")]),
        ("1-3", "system", [(Kind.TEXT, "^C again to exit\n\n\n^C KeyboardInterrupt")]),
    ]


def test_a_reflection_cut_after_aiders_own_output(tmp_path: Path) -> None:
    """After an edit error aider sends again by itself; a ^C then cuts that second reply."""
    (session,) = _read(tmp_path, "# aider chat started at 2025-01-01 10:00:00\n\n"
                       "#### add the page  \n\nHere it is.\n\n> Tokens: 2,911 sent, 371 received."
                       "  \n> The LLM did not conform to the edit format.  \n>  \n>  \n"
                       "> ^C again to exit  \n\nHere are the complete\n\n#### stop  \n")
    roles = [(turn.role, [p.kind for p in turn.parts]) for turn in session.turns]
    assert roles == [("user", [Kind.TEXT]), ("assistant", [Kind.TEXT]), ("system", [Kind.TEXT]),
                     ("assistant", [Kind.TEXT, Kind.ERROR]), ("user", [Kind.TEXT])]


def test_an_empty_prompt_says_it_was_not_sent(sessions: list[Session]) -> None:
    empties = {e.id: e for e in find_empty_turns(sessions[0])}
    assert empties["1-5"].evidence[0] == "not sent to the model"
    assert empties["1-9"].evidence[0] == "not sent to the model"
    assert "not sent to the model" not in empties["1-12"].evidence


def test_a_pasted_history_without_its_header_is_read(tmp_path: Path) -> None:
    path = tmp_path / "pasted.md"
    path.write_text("#### fix the import  \n\nDone, the path was wrong.\n\n"
                    "> Tokens: 1.2k sent, 80 received.  \n> Applied edit to app.py  \n\n"
                    "#### <blank>  \n\n#### /undo  \n> Removed: 1a2b3c4 fix import  \n",
                    encoding="utf-8")
    assert detect_reader(path).name == "aider"
    (session,) = load_sessions(path)
    assert (session.session_id, session.warnings, session.skipped) == ("#0", [], 0)
    assert [turn.role for turn in session.turns] == [
        "user", "assistant", "system", "user", "user", "system"]
    assert [(e.id, e.evidence[0]) for e in find_empty_turns(session)] == [
        ("0-4", "not sent to the model")]


@pytest.mark.parametrize("head", [
    b"# Notes\n\n#### A heading\n\n> a quote\n",
    b"#### Step 1  \n\n> Tokens: are counted by the API  \n",
    b'{"messages": [{"role": "user", "content": "#### x\\n> Applied edit to a"}]}\n',
])
def test_markdown_with_headings_and_quotes_is_no_pasted_history(tmp_path: Path,
                                                                head: bytes) -> None:
    assert get_reader("aider").sniff(tmp_path / "x.md", head) is False
