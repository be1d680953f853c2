"""Removing secrets, e-mail addresses and home-folder user names from text before it is shared.

Secrets are found by detect-secrets' plugins (cloud keys, tokens, private keys, passwords in
URLs, high-entropy strings and secret-looking assignments), with its false-positive filters;
e-mail addresses and the user names in home-folder paths by the patterns below. Each finding
becomes `[redacted: <kind>]` (a home folder becomes `~`), and every replacement is counted
by kind, so the command can say how many of each it removed.

One `Redactor` serves one output: a secret found once is replaced wherever it appears in the
texts given after that, even where no detector would have seen it (a token quoted bare in a
later tool output).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from replay.core.annotate.annotations import Annotation
    from replay.core.corpus.report import CorpusReport
    from replay.core.detection.empty import EmptyTurn
    from replay.core.publish.casestudy import CaseStudy

MARK = "[redacted: {kind}]"
"""What a secret or an address becomes."""

EMAIL = "email"
HOME = "home-folder"
"""Kind names of the findings that are not detect-secrets' (the home folder becomes `~`)."""

SKIPPED_PLUGINS = frozenset({"Public IP (ipv4)"})
"""detect-secrets plugins not used: an address is not a credential, and transcripts are full
of them (`127.0.0.1`, versions)."""

KIND_NAMES = {
    "Basic Auth Credentials": "password-in-url",
    "Base64 High Entropy String": "high-entropy-string",
    "Hex High Entropy String": "high-entropy-string",
    "Secret Keyword": "secret-assignment",
    "JSON Web Token": "jwt",
    "NPM tokens": "npm-token",
    "Public IP (ipv4)": "ip-address",
}
"""detect-secrets' secret types under the kind names written in the output; the others are
their type in lower case with dashes (`AWS Access Key` -> `aws-access-key`)."""

ENTROPY_LIMITS = {"Base64 High Entropy String": 4.5, "Hex High Entropy String": 3.0}
"""detect-secrets' own default limits."""

_EMAIL = re.compile(
    r"(?<![\w.%+-])([A-Za-z0-9][A-Za-z0-9._%+-]{0,63})(?<!\.)@((?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}"
    r"[A-Za-z0-9])?\.)+([A-Za-z]{2,24}))(?![\w/-])")
"""An e-mail address: local part, domain, top-level domain; not `pkg@scope.io/name` (an npm
package under a scope)."""

NOT_EMAIL_LOCAL = frozenset({"git"})
"""`git@github.com:owner/repo` is an SSH remote, not a person's address."""

NOT_EMAIL_TLD = frozenset({"png", "jpg", "jpeg", "gif", "svg", "webp", "ico", "js", "ts",
                           "css", "py", "json", "md", "txt", "lock"})
"""`icon@2x.png`, `chunk@1.2.js`: file names, not addresses."""

_HOME = re.compile(
    r"(?P<lead>/home/|/Users/|[A-Za-z]:\\\\?Users\\\\?)(?P<name>[A-Za-z0-9._-]{1,64})"
    r"(?=[/\\\"'\s:,;)\]}]|$)", re.MULTILINE)
"""A user name in a home-folder path (`/home/ana/x`, `/Users/ana`, `C:\\Users\\ana\\x`, the
last also as JSON writes it, with doubled backslashes)."""

_DASHED_HOME = re.compile(r"-(?:home|Users)-(?P<name>[A-Za-z0-9._]{1,64})(?=-)")
"""The same in a folder name made from a path (`~/.claude/projects/-home-ana-proj`)."""

NOT_USER_NAMES = frozenset({"runner", "shared", "Shared", "Public"})
"""Folders under /home or /Users that name no person."""

_PRIVATE_KEY_BLOCK = re.compile(
    r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----.*?(?:-----END[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----"
    r"|(?=\"|$))|PuTTY-User-Key-File-\d:.*?(?:Private-MAC: *[0-9a-fA-F]+|(?=\"|$))",
    re.DOTALL)
"""A whole private key: header to footer (or, cut short, to the end of its string)."""

_TOKEN_TAIL = re.compile(r"[A-Za-z0-9_\-+/=.]+")
"""The rest of a token after what a lazy pattern matched."""

SHORTEST_GLOBAL = 8
"""A secret at least this long is replaced wherever it occurs; a shorter one (a password in
a URL, a value in an assignment) only where it was found, so `pw` is not cut out of words."""


def kind_name(secret_type: str) -> str:
    """The kind written in `[redacted: kind]` for a detect-secrets secret type."""
    return KIND_NAMES.get(secret_type) or re.sub(r"[^a-z0-9]+", "-", secret_type.lower()).strip("-")


@dataclass(slots=True)
class _Detector:
    """detect-secrets' plugins, made once per process (importing them costs about 0.1 s)."""

    plugins: list[tuple[str, Any]]
    """(secret type, plugin) for every plugin used."""
    filters: list[Callable[..., bool]]
    """Its heuristic false-positive filters."""
    keyword_stems: tuple[str, ...]
    """Lower-case words one of which is in any line the keyword plugin could match (a test
    of substrings, far cheaper than its patterns on lines that cannot match)."""

    def may_assign(self, text: str) -> bool:
        """The keyword plugin could match in `text`."""
        lowered = text.lower()
        return any(stem in lowered for stem in self.keyword_stems)


_DETECTOR: list[_Detector] = []


def _detector() -> _Detector:
    if _DETECTOR:
        return _DETECTOR[0]
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.filters import heuristic
    from detect_secrets.plugins.keyword import DENYLIST

    plugins: list[tuple[str, Any]] = []
    # The specific detectors first, entropy last: a value several find is named by the most
    # specific (a GitHub token, not a high-entropy string).
    for secret_type, plugin_class in sorted(
            get_mapping_from_secret_type_to_class().items(),
            key=lambda item: (item[0] in ENTROPY_LIMITS, item[0] == "Secret Keyword", item[0])):
        if secret_type in SKIPPED_PLUGINS:
            continue
        limit = ENTROPY_LIMITS.get(secret_type)
        plugins.append((secret_type, plugin_class(limit=limit) if limit is not None
                        else plugin_class()))
    filters = [heuristic.is_sequential_string, heuristic.is_potential_uuid,
               heuristic.is_templated_secret, heuristic.is_prefixed_with_dollar_sign,
               heuristic.is_not_alphanumeric_string]
    # `api_?key` matches only where `key` is: the longest literal piece of each word.
    stems = tuple(sorted({max(word.split("_?"), key=len).lower() for word in DENYLIST}))
    _DETECTOR.append(_Detector(plugins, filters, stems))
    return _DETECTOR[0]


@dataclass(slots=True)
class Redactor:
    """Replaces what must not leave the machine, counting each kind."""

    counts: Counter[str] = field(default_factory=Counter)
    """Replacements made, by kind."""
    known: dict[str, str] = field(default_factory=dict)
    """Secrets found so far (long enough to replace anywhere), with their kind."""
    home: str = field(default_factory=lambda: _own_home())
    """This machine's home folder when it is not under /home or /Users (`/srv/ana`): replaced
    by `~` too; "" when the patterns cover it."""

    def __call__(self, text: str | None) -> str:
        """`text` with every secret, address and home-folder user name replaced."""
        if not text:
            return text or ""
        text = self._secrets(text)
        text = self._emails(text)
        return self._homes(text)

    def many(self, texts: Iterable[str]) -> list[str]:
        """Each text redacted."""
        return [self(text) for text in texts]

    def summary(self) -> str:
        """`2 aws-access-key, 1 email, 5 home-folder (user name -> ~)`, or `nothing`."""
        if not self.counts:
            return "nothing (no secret, e-mail address or home-folder user name found)"
        pieces = []
        for kind, count in sorted(self.counts.items(), key=lambda item: (-item[1], item[0])):
            pieces.append(f"{count:,} {kind}" + (" (user name -> ~)" if kind == HOME else ""))
        return ", ".join(pieces)

    # ------------------------------------------------------------------ secrets

    def _secrets(self, text: str) -> str:
        detector = _detector()
        # (value, kind, secret type, the line it was found in for an assignment)
        found: list[tuple[str, str, str, str | None]] = []
        for secret_type, plugin in detector.plugins:
            if secret_type == "Secret Keyword":
                if not detector.may_assign(text):
                    continue
                for line in text.splitlines():
                    if detector.may_assign(line):
                        # In JSON (a tool's input) the quotes are escaped: read them as quotes.
                        probe = line.replace('\\"', '"')
                        found.extend((value, kind_name(secret_type), secret_type, line)
                                     for value in self._keyword_values(plugin, probe))
                continue
            for value in _values(secret_type, plugin, text):
                if not value:
                    continue
                if secret_type in ENTROPY_LIMITS and (
                        plugin.calculate_shannon_entropy(value) <= plugin.entropy_limit
                        or _names_no_secret(text, value)):
                    continue
                found.append((value, kind_name(secret_type), secret_type, None))
        for value, kind, secret_type, line in found:
            if self._filtered(value, detector):
                continue
            if secret_type == "Private Key":
                text = self._private_keys(text)
                continue
            if secret_type == "Basic Auth Credentials":
                mark = MARK.format(kind=kind)
                text, count = re.subn(rf"(://[^\s/@:]*:){re.escape(value)}@",
                                      lambda match, mark=mark: f"{match.group(1)}{mark}@", text)
                self.counts[kind] += count
                continue
            if len(value) >= SHORTEST_GLOBAL:
                self.known.setdefault(value, kind)
            elif line is not None and line in text:
                text = text.replace(line, self._in_assignment(line, value, kind))
        if self.known:
            text = self._known(text)
        return text

    def _keyword_values(self, plugin: Any, line: str) -> list[str]:
        """Values the keyword plugin finds in one line, in quoted and in config style."""
        from detect_secrets.plugins.keyword import (
            CONFIG_DENYLIST_REGEX_TO_GROUP,
            QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP,
        )

        values = list(plugin.analyze_string(line, QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP))
        if not values:
            values = [value for value in plugin.analyze_string(line, CONFIG_DENYLIST_REGEX_TO_GROUP)
                      if not _looks_like_code(value)]
        from detect_secrets.filters.heuristic import is_indirect_reference

        if is_indirect_reference(line):
            return []
        return [value.strip().rstrip(";,") for value in values
                if _could_be_secret(value.strip())]

    @staticmethod
    def _filtered(value: str, detector: _Detector) -> bool:
        """detect-secrets' heuristics say it is no secret (a sequence, a UUID, a template)."""
        if value.startswith("[redacted:"):
            return True
        return any(check(value) for check in detector.filters)

    def _private_keys(self, text: str) -> str:
        text, count = _PRIVATE_KEY_BLOCK.subn(MARK.format(kind="private-key"), text)
        self.counts["private-key"] += count
        return text

    def _in_assignment(self, text: str, value: str, kind: str) -> str:
        """A short value replaced only right after the `=` or `:` that assigns it."""
        pattern = re.compile(rf"([=:]\s*\\?[\"'`]?){re.escape(value)}(?=\\|[\"'`]|\s|$|[,;])",
                             re.MULTILINE)
        text, count = pattern.subn(lambda match: f"{match.group(1)}{MARK.format(kind=kind)}",
                                   text)
        self.counts[kind] += count
        return text

    def _known(self, text: str) -> str:
        for value in sorted(self.known, key=len, reverse=True):
            if value in text:
                kind = self.known[value]
                self.counts[kind] += text.count(value)
                text = text.replace(value, MARK.format(kind=kind))
        return text

    # ------------------------------------------------------------------ addresses, homes

    def _emails(self, text: str) -> str:
        if "@" not in text:
            return text

        def replace(match: re.Match[str]) -> str:
            if match.group(1).lower() in NOT_EMAIL_LOCAL or \
                    match.group(3).lower() in NOT_EMAIL_TLD:
                return match.group(0)
            self.counts[EMAIL] += 1
            return MARK.format(kind=EMAIL)

        return _EMAIL.sub(replace, text)

    def _homes(self, text: str) -> str:
        if self.home and self.home in text:
            text, count = re.subn(rf"{re.escape(self.home)}(?=[/\\\"'\s]|$)", "~", text)
            self.counts[HOME] += count
        if "Users" not in text and "home" not in text:
            return text

        def replace(match: re.Match[str]) -> str:
            name = match.group("name")
            if name in NOT_USER_NAMES:
                return match.group(0)
            self.counts[HOME] += 1
            return "~"

        text = _HOME.sub(replace, text)

        def dashed(match: re.Match[str]) -> str:
            if match.group("name") in NOT_USER_NAMES:
                return match.group(0)
            self.counts[HOME] += 1
            return "-~"

        return _DASHED_HOME.sub(dashed, text)


def _values(secret_type: str, plugin: Any, text: str) -> Iterable[str]:
    """What one plugin finds in a text, each value whole.

    A regex plugin's own `analyze_string` yields its capture groups, which for some is only a
    prefix (`ghp` of a GitHub token): here a group is the secret when it is long enough to be
    one (an AWS secret key after `aws_secret_access_key =`), else the whole match is.
    """
    denylist = getattr(plugin, "denylist", None)
    if denylist is None:
        yield from plugin.analyze_string(text)
        return
    for pattern in denylist:
        for match in pattern.finditer(text):
            group = next((found for found in match.groups() if found), None) \
                if pattern.groups else None
            if group and (len(group) >= SHORTEST_GLOBAL or secret_type == "Basic Auth Credentials"):
                yield group
            elif secret_type == "JSON Web Token":
                # Its pattern ends lazily (header and payload): the signature goes too.
                tail = _TOKEN_TAIL.match(text, match.end())
                yield match.group(0) + (tail.group(0) if tail else "")
            else:
                yield match.group(0).strip(" \t\r\n=:\"")


TYPE_NAMES = frozenset({"string", "number", "boolean", "bool", "any", "unknown", "undefined",
                        "null", "none", "str", "int", "float", "bytes", "object", "optional",
                        "required", "true", "false", "secretstr"})
"""Values of a `secret:` or `password:` that are type names or literals in code."""


def _own_home() -> str:
    """The current home folder, when `_HOME` would not see it and it names someone."""
    home = os.path.expanduser("~").rstrip("/")
    if not home or home in ("/root", "~") or _HOME.match(home) or \
            os.path.basename(home) in NOT_USER_NAMES:
        return ""
    return home


def _could_be_secret(value: str) -> bool:
    """A value assigned to `password`, `api_key`, `secret`... that could be one: no white
    space, not a type name, and a digit, a symbol, or 16 characters or more.
    `apiKey: 'ollama'`, `secret: string;` and `password = "npm run x"` are names, types and
    commands, not secrets."""
    value = value.rstrip(";,")
    if not value or re.search(r"\s", value) or value.lower() in TYPE_NAMES:
        return False
    if len(value) >= 16:
        return True
    # Mixed case alone is an identifier (`apiKey`, `secretToken`): a digit or a symbol too.
    return bool(re.search(r"\d", value) or re.search(r"[^\w\-.]", value))


_NO_SECRET_KEY = re.compile(
    r"(?:\b(?:id|uuid|guid|signature|sig|hash|sha\d*|md5|checksum|digest|etag|integrity|nonce|"
    r"commit|revision|rev|snapshot|agentid|tool_use_id|call_id|message_id|request_id|session_?id|"
    r"parent_?uuid)|[a-z](?:Id|ID|Uuid|Hash|Signature))[\"']?\s*[:=]\s*[\"']?$",
    re.IGNORECASE)
"""A key whose value is an identifier or a digest: random-looking, and no secret."""


def _names_no_secret(text: str, value: str) -> bool:
    """The high-entropy `value` is the value of an id, hash or signature key where it first
    appears (`"id":"toolu_01..."`, `"signature":"..."`, `agentId: a36e...`)."""
    at = text.find(value)
    if at < 0:
        return False
    before = text[max(0, at - 40):at]
    return bool(_NO_SECRET_KEY.search(before))


def _looks_like_code(value: str) -> bool:
    """A config-style match that is an expression, not a value (`secret: get_secret(name)`,
    `password = self.password`)."""
    return bool(re.search(r"[()\[\]{}]|^\w+\.\w+|^(?:None|null|true|false|True|False)$", value))


def identity(text: str | None) -> str:
    """No redaction: the text as it is."""
    return text or ""


def redact_note(note: Annotation, redactor: Redactor) -> Annotation:
    """An annotation with its note redacted (a reviewer may quote the transcript)."""
    return replace(note, note=redactor(note.note)) if note.note else note


def redact_empty(empty: EmptyTurn, redactor: Redactor) -> EmptyTurn:
    """An empty turn with its evidence and suggestion reasons redacted (they quote text)."""
    return replace(empty, evidence=redactor.many(empty.evidence),
                   suggestion_reasons=redactor.many(empty.suggestion_reasons))


def redact_studies(studies: Iterable[CaseStudy], redactor: Redactor) -> list[CaseStudy]:
    """Case studies with every transcript-derived string redacted."""
    return [replace(study, session_label=redactor(study.session_label),
                    path=redactor(study.path), empty=redact_empty(study.empty, redactor),
                    annotations=[redact_note(note, redactor) for note in study.annotations],
                    before=[replace(item, text=redactor(item.text)) for item in study.before],
                    after=[replace(item, text=redactor(item.text)) for item in study.after])
            for study in studies]


def redact_report(report: CorpusReport, redactor: Redactor) -> None:
    """Redact, in place, what a corpus report shows of its sessions: titles (often a first
    prompt), paths, evidence and annotation notes."""
    from replay.core.corpus.encoded import EncodedList

    for row in report.sessions:
        row.label = redactor(row.label)
        row.path = redactor(row.path)
        # A new sequence, not the dicts changed in place: an `EncodedList` (a scan's) gives
        # fresh dicts each time it is read, so a change to them would be lost.
        row.empty_turns = EncodedList(
            {**empty, "evidence": redactor.many(empty.get("evidence") or [])}
            for empty in row.empty_turns)
        row.annotations = {turn: [redact_note(note, redactor) for note in notes]
                           for turn, notes in row.annotations.items()}


def redact_rows(rows: Iterable[dict[str, Any]], redactor: Redactor) -> list[dict[str, Any]]:
    """Export rows with every text cell redacted."""
    return [{key: redactor(value) if isinstance(value, str) else value
             for key, value in row.items()} for row in rows]
