"""Format detection of a file whose first line is long (a JSON document on one line, a record
with a megabyte of tool output): the sniffers that judge JSON lines tell "not mine" from the
line's top-level members (`readers.top_members`) without parsing it whole, and every verdict
is the one the whole parse gives."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay.core.readers import claude_code, codex, detect_reader
from replay.core.readers.base import HEAD_BYTES
from replay.core.readers.top_members import LONG_LINE, line_spans
from tests.conftest import REALDATA, SAMPLES

PAD = "p" * (LONG_LINE + 10)
"""A value that makes any line long."""


def _whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every line parsed whole, as before `top_members`."""
    monkeypatch.setattr(claude_code, "LONG_LINE", 1 << 62)
    monkeypatch.setattr(codex, "LONG_LINE", 1 << 62)


KEYS = ["type", "sessionId", "uuid", "parentUuid", "message", "id", "instructions", "git",
        "call_id", "payload", "record_type", "leafUuid", "snapshot", "messageId", "messages",
        "projectHash", "\\u0074ype"]
TYPES = ["user", "assistant", "summary", "system", "progress", "message", "function_call",
         "reasoning", "session_meta", "response_item", "input_text", "gemini",
         "file-history-snapshot"]
BAD = [b'"\xff\xfe"', b'"\\ud800"', b"1e999", b"123456789012345678901234567890",
       b"[" * 1100 + b"]" * 1100, b'"\x01"', b"NaN", b'"\\u0000"']

values = st.recursive(
    st.one_of(st.sampled_from(TYPES), st.integers(-1000, 1000), st.none(), st.booleans(),
              st.just({"role": "user", "content": "hi"})),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.sampled_from(KEYS), inner, max_size=3)),
    max_leaves=6)


@st.composite
def long_lines(draw: st.DrawFn) -> bytes:
    """A line that may be long, may be a record of either format, may be broken."""
    members = draw(st.lists(st.tuples(st.sampled_from(KEYS), values), max_size=6))
    where = draw(st.integers(0, len(members)))
    if draw(st.booleans()):
        members.insert(where, ("pad", PAD))
    # (keys written as JSON text: `\u0074ype` is the key `type`, spelled escaped)
    body = b",".join(b'"' + key.encode() + b'":' + orjson.dumps(value)
                     for key, value in members)
    if draw(st.booleans()):
        body += (b"," if body else b"") + b'"zbad":' + draw(st.sampled_from(BAD))
    line = b"{" + body + b"}"
    shape = draw(st.sampled_from(["whole", "cut", "spaced", "array", "tail"]))
    if shape == "cut":
        line = line[:draw(st.integers(1, len(line)))]
    elif shape == "spaced":
        line = b"  \t" + line + b" \t"
    elif shape == "array":
        line = b"[" + line + b"]"
    elif shape == "tail":
        line += b" x"
    return line


@st.composite
def heads(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(long_lines(), min_size=1, max_size=3))
    head = b"\n".join(lines)
    if draw(st.booleans()):
        head += b"\n"
    if draw(st.booleans()) and len(head) < HEAD_BYTES:
        head += b" " * (HEAD_BYTES - len(head))  # judged as the cut head of a larger file
    return head


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.data_too_large])
@given(head=heads())
def test_the_json_lines_sniffers_say_what_the_whole_parse_says(head: bytes) -> None:
    fast = (claude_code.sniff_content(head), codex.sniff(Path("x.jsonl"), head))
    with pytest.MonkeyPatch.context() as patch:
        _whole(patch)
        whole = (claude_code.sniff_content(head), codex.sniff(Path("x.jsonl"), head))
    assert fast == whole


@pytest.mark.parametrize("bad", [b'"\xff"', b"1e999"], ids=["bad utf-8", "infinite"])
def test_a_long_line_only_msgspec_reads_still_gets_the_cut_record_verdict(bad: bytes) -> None:
    """A line with no top-level type that the whole parse rejects (msgspec does not look so
    deep): the head's last line, judged as a cut record by its keys, as before."""
    line = (b'{"sessionId":"s","uuid":"u","pad":"' + PAD.encode() + b'","m":{"type":"user"},'
            b'"zbad":' + bad + b"}")
    for head in (line, b"{}\n" + line, line + b"\n{}"):
        fast = claude_code.sniff_content(head)
        with pytest.MonkeyPatch.context() as patch:
            _whole(patch)
            assert claude_code.sniff_content(head) == fast
    assert claude_code.sniff_content(line) and not claude_code.sniff_content(line + b"\n{}")


def test_line_spans_are_the_stripped_pieces_of_split() -> None:
    for head in (b"", b"\n", b" a \n\tb\x0b\n\n c", b"x" * 5, b"a\nb\nc\nd", b" \r\n{}\n"):
        for limit in (0, 1, 2, 8, 20):
            assert [head[start:end] for start, end in line_spans(head, limit)] == \
                [piece.strip() for piece in head.split(b"\n", limit)]


def _one_line_gemini(tmp_path: Path) -> Path:
    messages = [{"id": f"m{n}", "timestamp": "2025-12-01T21:45:00Z",
                 "type": "user" if n % 2 == 0 else "gemini",
                 "content": f"message {n} " + "words " * 400} for n in range(600)]
    document = {"sessionId": "5b959dae-0000-4000-8000-000000000000", "projectHash": "ab" * 32,
                "startTime": "2025-12-01T21:45:00Z", "lastUpdated": "2025-12-01T22:45:00Z",
                "messages": messages}
    path = tmp_path / "session-2025-12-01T21-45-5b959dae.json"
    path.write_bytes(orjson.dumps(document))
    assert path.stat().st_size > 1_000_000 and b"\n" not in path.read_bytes()
    return path


def test_a_gemini_recording_on_one_line_is_told_without_parsing_it_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The JSON-lines sniffers before Gemini's used to parse the whole megabyte each."""
    path = _one_line_gemini(tmp_path)
    parsed: list[int] = []
    real = orjson.loads

    def loads(data):  # type: ignore[no-untyped-def]
        parsed.append(len(data))
        return real(data)

    class Counting:
        JSONDecodeError = orjson.JSONDecodeError

        def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
            return loads if name == "loads" else getattr(orjson, name)

    for module in (claude_code, codex):
        monkeypatch.setattr(module, "orjson", Counting())
    assert detect_reader(path).name == "gemini"
    assert not [size for size in parsed if size > LONG_LINE]


def _variants(path: Path) -> dict[str, bytes]:
    """The file, and edge shapes of it: its document on one line, padded past the head at
    either end, its first record made long, hostile bytes deep in a long first line."""
    data = path.read_bytes()
    found = {"as is": data}
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError:
        document = None
    if isinstance(document, dict):
        found["one line"] = orjson.dumps(document)
        found["padded end"] = orjson.dumps({**document, "zpad": PAD * 5})
        found["padded start"] = orjson.dumps({"apad": [PAD * 5], **document})
        found["typed end"] = orjson.dumps({**document, "zpad": PAD, "type": "user"})
    first, _, rest = data.partition(b"\n")
    try:
        record = orjson.loads(first)
    except orjson.JSONDecodeError:
        record = None
    if isinstance(record, dict):
        found["long first"] = orjson.dumps({**record, "zpad": PAD * 5}) + b"\n" + rest
        found["long first, front"] = orjson.dumps({"apad": {"q": PAD * 5}, **record}) \
            + b"\n" + rest
        raw = orjson.dumps({**record, "zpad": PAD * 5})
        for name, bad in zip(("bad utf-8", "surrogate", "infinite", "deep"), BAD[:3] + BAD[4:5],
                             strict=True):
            line = raw[:-1] + b',"zbad":' + bad + b"}"
            found[name] = line + b"\n" + rest
            found[name + ", alone"] = line
    return found


def _files() -> list[Path]:
    files = sorted(path for path in SAMPLES.iterdir() if path.suffix != ".md")
    if REALDATA.is_dir():
        files += sorted(path for path in REALDATA.rglob("*") if path.is_file()
                        and path.suffix != ".md")
    return files


@pytest.mark.parametrize("source", _files(), ids=lambda path: path.name[-60:])
def test_every_real_and_sample_file_and_its_edge_shapes_detect_as_the_whole_parse_says(
        source: Path, tmp_path: Path) -> None:
    for name, data in _variants(source).items():
        path = tmp_path / f"{name.replace(' ', '-').replace(',', '')}-{source.name}"
        path.write_bytes(data)
        detected = []
        for whole in (False, True):
            with pytest.MonkeyPatch.context() as patch:
                if whole:
                    _whole(patch)
                try:
                    detected.append(detect_reader(path).name)
                except Exception as error:  # noqa: BLE001 - the same failure both ways
                    detected.append(f"{type(error).__name__}: {error}")
        assert detected[0] == detected[1], name
