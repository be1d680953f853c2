"""Redaction: a corpus of planted secrets of each kind in user text, tool input, tool output
and file names, found by what `share --redact` writes; look-alikes left alone; the same on
`export --as md|html` and `report --html`; and the real files' findings (tests read them to
keep the count of false redactions where the notes say it is)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from replay.cli import main
from replay.core.publish.redact import Redactor
from replay.core.publish.share_md import markdown_chunks
from replay.core.publish.share_model import share_session
from replay.core.session.labels import DEFAULT_LABELS
from replay.core.session.model import Kind, Part, Session, Turn
from tests.core.share_fixtures import ClaudeCode

REALDATA = Path(__file__).resolve().parents[2].parent / "shared" / "realdata"

PRIVATE_KEY = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0"
               "tRgeLezV6ffAt0gun\nVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18"
               "gnTxK\n-----END RSA PRIVATE KEY-----")

PLANTED: dict[str, tuple[str, str]] = {
    # kind: (the secret that must disappear, a sentence holding it)
    "aws-access-key": ("AKIAQ3EGRJ5MZ7XW4P2N", "key id AKIAQ3EGRJ5MZ7XW4P2N in the profile"),
    "github-token": ("ghp_x7Kp2mQ9vR4tW8yB3nF6hJ1cL5dS0gA2eZ4u",
                     "GH_TOKEN ghp_x7Kp2mQ9vR4tW8yB3nF6hJ1cL5dS0gA2eZ4u works"),
    "gitlab-token": ("glpat-Rk3mW9qT2vX7zB4nL8pY", "use glpat-Rk3mW9qT2vX7zB4nL8pY for CI"),
    "slack-token": ("xoxb-2048163529-4096327158-q8mrt3vw9xyz2abc",
                    "bot xoxb-2048163529-4096327158-q8mrt3vw9xyz2abc posts"),
    "stripe-access-key": ("sk_live_4eC39HqLyjWDarjtT1zdp7dc",
                          "charge with sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    "jwt": ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
            "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3O"
            "DkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
    "private-key": ("MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0",
                    f"the key:\n{PRIVATE_KEY}\n"),
    "password-in-url": ("Tr0ub4dor-77", "psql https://deploy:Tr0ub4dor-77@db.internal.example/app"),
    "secret-assignment": ("w9!Lq2#rT7zK", 'DB_PASSWORD = "w9!Lq2#rT7zK"'),
    "high-entropy-string": ("q8Vz3Lr0Tw9XkYb2Nm5Jc7Hd1Fs4Pg6A",
                            'blob = "q8Vz3Lr0Tw9XkYb2Nm5Jc7Hd1Fs4Pg6A"'),
    "email": ("ana.lopez@corp-mail.example.org", "mail ana.lopez@corp-mail.example.org today"),
    "home-folder": ("anacleta", "see /home/anacleta/notes/todo.txt"),
}

IN_NAMES = ("aws-access-key", "github-token", "password-in-url", "email", "home-folder",
            "jwt", "gitlab-token")
"""The kinds that can sit in a file name or URL."""

LOCATIONS = ("user text", "tool input", "tool output", "file name")

LOOKALIKES = [
    "git clone git@github.com:owner/repo.git",
    "retina icon@2x.png and @types/node@20.1.0",
    "commit 3f9c2e1b7a4d6f8e0c2b4a6d8f0e2c4b6a8d0f2e fixed it",
    "uuid 5f0c3d7e-2a41-4b9c-9e1a-0c6d2f8b7a11",
    'password = get_password(user)',
    "secret: string;",
    'apiKey: process.env.API_KEY',
    '{"id": "toolu_01ABCDEFghijKLMNopqrSTuv", "signature": "EqQBCkYIBxgCKkBv9d3Kx1Zq"}',
    "export PATH=/usr/local/bin:$PATH",
    "the secret to good tests is small fixtures",
    "~/work and /tmp/x stay",
]


def _session(text_by_location: dict[str, str]) -> Session:
    session = Session(path="/tmp/planted.jsonl", format="claude-code", session_id="planted")
    session.add(Turn(id="u1", role="user", parts=[Part(Kind.TEXT, text=text_by_location.get(
        "user text", "hello"))], timestamp="2026-03-01T10:00:00Z", time=1772359200.0))
    parts = [Part(Kind.TEXT, text="running it"),
             Part(Kind.TOOL_CALL, name="Bash", input=json.dumps(
                 {"command": text_by_location.get("tool input", "ls")}),
                  output=text_by_location.get("tool output", "ok"), status="completed")]
    if "file name" in text_by_location:
        parts.append(Part(Kind.FILE, name=text_by_location["file name"]))
    session.add(Turn(id="a1", role="assistant", parts=parts,
                     timestamp="2026-03-01T10:00:05Z", time=1772359205.0))
    return session


def _shared_markdown(session: Session, redactor: Redactor) -> str:
    shared = share_session(session, [], DEFAULT_LABELS, clean=redactor)
    return "".join(markdown_chunks(shared))


def _name_form(kind: str, sentence: str, secret: str) -> str:
    """The secret as part of a file name or URL."""
    if kind == "password-in-url":
        return "https://deploy:Tr0ub4dor-77@files.example/report.pdf"
    if kind == "home-folder":
        return "/home/anacleta/notes/todo.txt"
    return f"/tmp/uploads/{secret}.txt" if kind != "email" else f"/tmp/{secret}/cv.pdf"


def planted_results() -> dict[str, Counter[str]]:
    """Found and planted per kind over every location, from the Markdown `share` writes."""
    results: dict[str, Counter[str]] = {}
    for kind, (secret, sentence) in PLANTED.items():
        tally: Counter[str] = Counter()
        for location in LOCATIONS:
            if location == "file name" and kind not in IN_NAMES:
                continue
            text = _name_form(kind, sentence, secret) if location == "file name" else sentence
            redactor = Redactor()
            written = _shared_markdown(_session({location: text}), redactor)
            tally["planted"] += 1
            json_secret = json.dumps(secret)[1:-1]  # as it sits in a JSON tool input
            # (On a Markdown line the mark's brackets are escaped: `\\[redacted: kind\\]`.)
            marked = f"[redacted: {kind}]" in written or f"\\[redacted: {kind}\\]" in written
            if kind == "home-folder":
                marked = "~/notes" in written
            if secret not in written and json_secret not in written and marked:
                tally["found"] += 1
            else:
                tally[f"missed in {location}"] += 1
        results[kind] = tally
    return results


def test_every_planted_secret_is_found_in_every_location(
        capsys: pytest.CaptureFixture[str]) -> None:
    results = planted_results()
    with capsys.disabled():
        print("\nkind                  found/planted")
        for kind, tally in results.items():
            print(f"{kind:<21} {tally['found']}/{tally['planted']}")
    missed = {kind: {k: v for k, v in tally.items() if k.startswith("missed")}
              for kind, tally in results.items() if tally["found"] != tally["planted"]}
    assert missed == {}


def test_lookalikes_are_left_alone() -> None:
    redactor = Redactor()
    for text in LOOKALIKES:
        assert redactor(text) == text, text
    assert not redactor.counts


def test_a_secret_found_once_is_removed_where_it_appears_bare_later() -> None:
    redactor = Redactor()
    assert redactor('api_key = "Zr8Kq2Lw9Xv4Tb7Nm1Pc5Hd3Fs6Jg0Y"') == \
        'api_key = "[redacted: secret-assignment]"'
    assert redactor("echo Zr8Kq2Lw9Xv4Tb7Nm1Pc5Hd3Fs6Jg0Y") == "echo [redacted: secret-assignment]"


def test_the_summary_counts_each_kind() -> None:
    redactor = Redactor()
    redactor("a@b.example.com c@d.example.com AKIAQ3EGRJ5MZ7XW4P2N /Users/zoe/x")
    assert redactor.counts == {"email": 2, "aws-access-key": 1, "home-folder": 1}
    assert redactor.summary() == \
        "2 email, 1 aws-access-key, 1 home-folder (user name -> ~)"


def _planted_file(tmp_path: Path) -> Path:
    session = ClaudeCode(cwd="/home/anacleta/proj")
    session.user("my key is AKIAQ3EGRJ5MZ7XW4P2N, mail ana.lopez@corp-mail.example.org")
    session.assistant("Checking.", tool=("Bash", {"command": "cat /home/anacleta/.env"},
                                         'DB_PASSWORD = "w9!Lq2#rT7zK"'))
    session.user("", after=120)
    session.assistant("Done.")
    return session.write(tmp_path / "planted.jsonl")


def test_share_redact_says_what_it_removed(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    source = _planted_file(tmp_path)
    for kind in ("html", "md", "cast"):
        out = tmp_path / f"out.{kind}"
        assert main(["share", str(source), "--redact", "-o", str(out)]) == 0
        err = capsys.readouterr().err
        line = next(line for line in err.splitlines() if "redacted" in line)
        # The key is in the first prompt, so in the title too: each place counts.
        assert "2 aws-access-key" in line and "2 email" in line and "secret-assignment" in line
        assert "home-folder (user name -> ~)" in line
        written = out.read_text(encoding="utf-8")
        for secret in ("AKIAQ3EGRJ5MZ7XW4P2N", "ana.lopez@", "w9!Lq2", "anacleta"):
            assert secret not in written and json.dumps(secret)[1:-1] not in written, (kind, secret)
        assert "[redacted: aws-access-key]" in written


def test_export_and_report_redact_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = _planted_file(tmp_path)
    journal = tmp_path / "journal.jsonl"
    assert main(["label", str(source), "--turn", "#3", "--label", "other", "--note",
                 "he pasted AKIAQ3EGRJ5MZ7XW4P2N again", "--annotations", str(journal)]) == 0
    for kind in ("md", "html", "csv"):
        out = tmp_path / f"cases.{kind}"
        assert main(["export", str(source), "--as", kind, "--all-empty", "--redact",
                     "--annotations", str(journal), "-o", str(out)]) == 0
        written = out.read_text(encoding="utf-8-sig")
        assert "AKIAQ3EGRJ5MZ7XW4P2N" not in written and "anacleta" not in written, kind
        assert "[redacted: aws-access-key]" in written
        assert "redacted" in capsys.readouterr().err
    page = tmp_path / "report.html"
    assert main(["report", "--jobs", "1", str(source), "--html", str(page), "--redact",
                 "--annotations", str(journal)]) == 0
    err = capsys.readouterr().err
    assert "redacted" in err and "aws-access-key" in err
    written = page.read_text(encoding="utf-8")
    assert "AKIAQ3EGRJ5MZ7XW4P2N" not in written and "anacleta" not in written
    assert "ana.lopez@" not in written


REAL_SECRETS_EXPECTED = {"secret-assignment": 13, "password-in-url": 1, "high-entropy-string": 3}
"""What the real files hold that the detector takes for secrets, each read by hand: none is a
live credential. 12 are one placeholder a codex session's source already carried
(`apiKey: 'REDACTED_API_KEY'`, each place it appears), 1 a test fixture (`secret: "test123"`),
the URL password is `username:password` in a proxy example, and the three high-entropy
strings are encrypted reasoning blobs (`gAAAAA...`): false redactions, but none hides
anything a reader needs. The e-mail addresses are 26 real-looking ones (people's work
addresses, and two placeholders of the same company's domain)."""


@pytest.mark.skipif(not REALDATA.is_dir(), reason="no ../shared/realdata beside the repo")
def test_the_real_files_findings_are_the_ones_read_by_hand() -> None:
    from replay.core.readers import load_sessions

    found: Counter[str] = Counter()
    for path in sorted(REALDATA.rglob("*")):
        if not path.is_file() or path.suffix == ".md" or path.name.endswith(".meta.json"):
            continue
        for session in load_sessions(path):
            redactor = Redactor()
            for turn in session.turns:
                for part in session.full_parts(turn):
                    for value in (part.text, part.input, part.output, part.name):
                        redactor(value)
            found.update(redactor.counts)
    secrets = {kind: count for kind, count in found.items()
               if kind not in ("email", "home-folder")}
    assert secrets == REAL_SECRETS_EXPECTED
    assert found["email"] == 26


def test_a_home_folder_elsewhere_is_replaced_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/srv/ana")
    redactor = Redactor()
    assert redactor("cat /srv/ana/x, /srv/anatole/y and C:\\Users\\bob\\z") == \
        "cat ~/x, /srv/anatole/y and ~\\z"
    assert redactor.counts == {"home-folder": 2}


def test_a_secret_across_a_big_pages_cut_leaves_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from replay.core.publish import share_model

    monkeypatch.setattr(share_model, "BIG_SOURCE_BYTES", 100)
    monkeypatch.setattr(share_model, "BIG_PART_CHARS", 40)
    session = ClaudeCode()
    session.user("show me the key")
    output = "x" * 30 + PRIVATE_KEY + "\nghp_x7Kp2mQ9vR4tW8yB3nF6hJ1cL5dS0gA2eZ4u"
    session.assistant("Here.", tool=("Bash", {"command": "cat id_rsa"}, output))
    source = session.write(tmp_path / "key.jsonl")
    out = tmp_path / "key.html"
    assert main(["share", str(source), "--redact", "-o", str(out)]) == 0
    assert "1 private-key" in capsys.readouterr().err
    page = out.read_text(encoding="utf-8")
    assert "BEGIN RSA" not in page and "MIIE" not in page
    assert "x" * 30 + "[redacted:" in page  # the mark itself may be cut, never the key
