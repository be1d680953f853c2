"""Story 4, refactor (Claude Code)."""

from __future__ import annotations

from samples.claude_code import ClaudeCodeSession
from samples.common import Json

RF_CWD = "/Users/ana/code/ledgerline"

RF_OLD_MODULE = '''"""Import bank statements into ledgerline transactions."""

from __future__ import annotations

import csv
import io
from datetime import date, datetime
from decimal import Decimal

from ledgerline.model import Transaction


def _parse_decimal_comma(value: str) -> Decimal:
    """'1.234,56' -> Decimal('1234.56')."""
    return Decimal(value.strip().replace(".", "").replace(",", "."))


def _parse_us_date(value: str) -> date:
    return datetime.strptime(value.strip(), "%m/%d/%Y").date()


def parse_northbank(text: str) -> list[Transaction]:
    rows = csv.DictReader(io.StringIO(text), delimiter=";")
    out = []
    for row in rows:
        out.append(Transaction(
            date=datetime.strptime(row["Buchungstag"], "%d.%m.%Y").date(),
            amount=_parse_decimal_comma(row["Betrag"]),
            payee=row["Empfaenger"].strip(),
            memo=row["Verwendungszweck"].strip(),
        ))
    return out


def parse_riverbank(text: str) -> list[Transaction]:
    rows = csv.DictReader(io.StringIO(text))
    out = []
    for row in rows:
        debit = Decimal(row["Debit"] or "0")
        credit = Decimal(row["Credit"] or "0")
        out.append(Transaction(
            date=_parse_us_date(row["Date"]),
            amount=credit - debit,
            payee=row["Description"].split("  ")[0].strip(),
            memo=row["Description"].strip(),
        ))
    return out


def parse_harbor_credit(text: str) -> list[Transaction]:
    out = []
    for line in text.splitlines()[1:]:
        if not line.strip():
            continue
        when, merchant, amount, ref = line.split("|")
        out.append(Transaction(
            date=_parse_us_date(when),
            amount=-Decimal(amount),  # card statements list charges as positive numbers
            payee=merchant.strip(),
            memo=ref.strip(),
        ))
    return out


def detect_bank(text: str) -> str:
    header = text.splitlines()[0] if text else ""
    if "Buchungstag" in header:
        return "northbank"
    if header.startswith("Date,Description,Debit,Credit"):
        return "riverbank"
    if header.startswith("TRANSACTION DATE|"):
        return "harbor"
    raise ValueError("unknown statement format")


def import_statement(text: str, bank: str | None = None) -> list[Transaction]:
    bank = bank or detect_bank(text)
    if bank == "northbank":
        return parse_northbank(text)
    elif bank == "riverbank":
        return parse_riverbank(text)
    elif bank == "harbor":
        return parse_harbor_credit(text)
    raise ValueError(f"unknown bank {bank!r}")
'''

RF_TESTS = '''from decimal import Decimal

import pytest

from ledgerline.importers import _parse_decimal_comma, detect_bank, import_statement

from .fixtures import HARBOR, NORTHBANK, RIVERBANK


@pytest.mark.parametrize("raw, expected", [("1.234,56", "1234.56"), ("-12,00", "-12.00")])
def test_decimal_comma(raw, expected):
    assert _parse_decimal_comma(raw) == Decimal(expected)


@pytest.mark.parametrize("text, bank", [(NORTHBANK, "northbank"), (RIVERBANK, "riverbank"),
                                        (HARBOR, "harbor")])
def test_detect(text, bank):
    assert detect_bank(text) == bank


def test_unknown_format():
    with pytest.raises(ValueError):
        detect_bank("foo,bar\\n1,2\\n")


def test_harbor_charges_are_negative():
    rows = import_statement(HARBOR)
    assert [row.amount for row in rows] == [Decimal("-42.10"), Decimal("-7.99")]
'''

RF_BASE = '''"""What every statement importer provides, and the registry that finds them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal

from ledgerline.model import Transaction


@dataclass(frozen=True)
class Importer:
    """A bank statement format: how to recognise it and how to parse it."""

    code: str
    matches: Callable[[str], bool]
    parse: Callable[[str], list[Transaction]]


REGISTRY: dict[str, Importer] = {}


def register(importer: Importer) -> Importer:
    REGISTRY[importer.code] = importer
    return importer


def parse_decimal_comma(value: str) -> Decimal:
    """'1.234,56' -> Decimal('1234.56')."""
    return Decimal(value.strip().replace(".", "").replace(",", "."))


def parse_us_date(value: str) -> date:
    return datetime.strptime(value.strip(), "%m/%d/%Y").date()
'''

RF_NORTHBANK = '''"""Northbank CSV exports (semicolon separated, German headers)."""

from __future__ import annotations

import csv
import io
from datetime import datetime

from ledgerline.importers.base import Importer, parse_decimal_comma, register
from ledgerline.model import Transaction


def parse(text: str) -> list[Transaction]:
    rows = csv.DictReader(io.StringIO(text), delimiter=";")
    return [
        Transaction(
            date=datetime.strptime(row["Buchungstag"], "%d.%m.%Y").date(),
            amount=parse_decimal_comma(row["Betrag"]),
            payee=row["Empfaenger"].strip(),
            memo=row["Verwendungszweck"].strip(),
        )
        for row in rows
    ]


IMPORTER = register(Importer("northbank", lambda header: "Buchungstag" in header, parse))
'''

RF_RIVERBANK = '''"""Riverbank CSV exports (separate debit and credit columns)."""

from __future__ import annotations

import csv
import io
from decimal import Decimal

from ledgerline.importers.base import Importer, parse_us_date, register
from ledgerline.model import Transaction


def parse(text: str) -> list[Transaction]:
    out = []
    for row in csv.DictReader(io.StringIO(text)):
        debit = Decimal(row["Debit"] or "0")
        credit = Decimal(row["Credit"] or "0")
        out.append(Transaction(
            date=parse_us_date(row["Date"]),
            amount=credit - debit,
            payee=row["Description"].split("  ")[0].strip(),
            memo=row["Description"].strip(),
        ))
    return out


IMPORTER = register(Importer(
    "riverbank", lambda header: header.startswith("Date,Description,Debit,Credit"), parse))
'''

RF_HARBOR = '''"""Harbor Credit card statements (pipe separated)."""

from __future__ import annotations

from decimal import Decimal

from ledgerline.importers.base import Importer, parse_us_date, register
from ledgerline.model import Transaction


def parse(text: str) -> list[Transaction]:
    out = []
    for line in text.splitlines()[1:]:
        if not line.strip():
            continue
        when, merchant, amount, ref = line.split("|")
        out.append(Transaction(
            date=parse_us_date(when),
            amount=-Decimal(amount),  # card statements list charges as positive numbers
            payee=merchant.strip(),
            memo=ref.strip(),
        ))
    return out


IMPORTER = register(Importer(
    "harbor", lambda header: header.startswith("TRANSACTION DATE|"), parse))
'''

RF_INIT = '''"""Import bank statements into ledgerline transactions, one module per bank."""

from __future__ import annotations

import csv

from ledgerline.importers import harbor, northbank, riverbank
from ledgerline.importers.base import REGISTRY, Importer, register
from ledgerline.model import Transaction

parse_northbank = northbank.parse
parse_riverbank = riverbank.parse
parse_harbor_credit = harbor.parse


def detect_bank(text: str) -> str:
    header = text.splitlines()[0] if text else ""
    for importer in REGISTRY.values():
        if importer.matches(header):
            return importer.code
    raise ValueError("unknown statement format")


def import_statement(text: str, bank: str | None = None) -> list[Transaction]:
    code = bank or detect_bank(text)
    if code not in REGISTRY:
        raise ValueError(f"unknown bank {code!r}")
    return REGISTRY[code].parse(text)


__all__ = ["Importer", "REGISTRY", "detect_bank", "import_statement", "parse_harbor_credit",
           "parse_northbank", "parse_riverbank", "register"]
'''


def refactor() -> list[Json]:
    """A Claude Code session of about thirty turns."""
    s = ClaudeCodeSession(5150, cwd=RF_CWD, start="2026-03-10T09:14:02.318Z", version="2.1.97",
                          branch="refactor/importers", model="claude-opus-4-6")
    s.event({"type": "permission-mode", "permissionMode": "acceptEdits",
             "sessionId": s.session_id})
    old_path, tests_path = f"{RF_CWD}/ledgerline/importers.py", f"{RF_CWD}/tests/test_importers.py"
    pkg = f"{RF_CWD}/ledgerline/importers"
    s.files[old_path], s.files[tests_path] = RF_OLD_MODULE, RF_TESTS

    s.prompt("importers.py has become one long if/elif over banks. split it into a package "
             "with one module per bank and a small registry, so adding a bank means adding a "
             "file. behaviour must stay exactly the same and the tests must stay green")
    r = s.respond()
    r.think(2.4).say("I'll read the module and its tests before moving anything.")
    r.bash("wc -l ledgerline/importers.py tests/test_importers.py && git status --short",
           f"      {len(RF_OLD_MODULE.splitlines())} ledgerline/importers.py\n"
           f"      {len(RF_TESTS.splitlines())} tests/test_importers.py\n"
           f"     {len(RF_OLD_MODULE.splitlines()) + len(RF_TESTS.splitlines())} total",
           description="Count lines and check the working tree")
    r.send()
    s.respond().read(old_path, RF_OLD_MODULE).send()
    s.respond().read(tests_path, RF_TESTS).send()
    r = s.respond()
    r.bash("python -m pytest -q", "........................................." 
           "\n41 passed in 0.84s", description="Run the test suite", seconds=2.9)
    r.send()
    todos = [
        {"content": "Create importers/base.py with Importer, REGISTRY and shared parsers",
         "status": "in_progress", "activeForm": "Creating the importer base module"},
        {"content": "Move each bank parser into its own module",
         "status": "pending", "activeForm": "Moving bank parsers into modules"},
        {"content": "Rebuild detect_bank and import_statement on the registry",
         "status": "pending", "activeForm": "Rebuilding detection on the registry"},
        {"content": "Keep the old import paths working", "status": "pending",
         "activeForm": "Keeping the old import paths"},
        {"content": "Run the full test suite", "status": "pending",
         "activeForm": "Running the test suite"},
    ]
    r = s.respond(first_token=3.1)
    r.think(5.2, 900).say(
        "Plan: `ledgerline/importers/` becomes a package. `base.py` holds a small `Importer` "
        "record (code, header matcher, parser), the `REGISTRY` and the two shared parsing "
        "helpers. Each bank gets a module that registers itself. The package `__init__` keeps "
        "`detect_bank`, `import_statement` and the three `parse_*` names so callers don't "
        "change. Detection order stays northbank, riverbank, harbor, because that is the order "
        "the modules are imported in.")
    r.todo(todos, [])
    r.send()
    s.respond().write(f"{pkg}/base.py", RF_BASE).send()
    s.respond().write(f"{pkg}/northbank.py", RF_NORTHBANK).send()
    s.respond().write(f"{pkg}/riverbank.py", RF_RIVERBANK).send()
    s.respond().write(f"{pkg}/harbor.py", RF_HARBOR).send()
    r = s.respond()
    r.bash("git rm -q ledgerline/importers.py && git status --short",
           "D  ledgerline/importers.py\n?? ledgerline/importers/",
           description="Remove the old module")
    r.send()
    s.respond().write(f"{pkg}/__init__.py", RF_INIT).send()
    r = s.respond()
    r.bash("python -m pytest -q", "", stderr=(
        "==================================== ERRORS ====================================\n"
        "_________________ ERROR collecting tests/test_importers.py _____________________\n"
        "ImportError while importing test module 'tests/test_importers.py'.\n"
        "tests/test_importers.py:5: in <module>\n"
        "    from ledgerline.importers import _parse_decimal_comma, detect_bank, "
        "import_statement\n"
        "E   ImportError: cannot import name '_parse_decimal_comma' from "
        "'ledgerline.importers'\n"
        "=========================== short test summary info ============================\n"
        "ERROR tests/test_importers.py\n"
        "!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!!\n"
        "1 error in 0.41s"), description="Run the test suite", seconds=2.2, exit_error=True)
    r.send()
    r = s.respond()
    r.think(1.8, 300).say("The tests import the private `_parse_decimal_comma`. I'll keep that "
                          "name as an alias rather than change the test.")
    r.edit(f"{pkg}/__init__.py",
           "from ledgerline.importers.base import REGISTRY, Importer, register\n",
           "from ledgerline.importers.base import REGISTRY, Importer, register\n"
           "from ledgerline.importers.base import parse_decimal_comma as _parse_decimal_comma\n")
    r.send()
    r = s.respond()
    r.bash("python -m pytest -q", "........................................."
           "\n41 passed in 0.79s", description="Run the test suite", seconds=2.7)
    r.send()
    done = [{**todo, "status": "completed"} for todo in todos]
    r = s.respond()
    r.todo(done, todos)
    r.send()
    r = s.respond()
    r.say("Done. `ledgerline/importers/` is now a package:\n\n"
          "- `base.py`: `Importer(code, matches, parse)`, `REGISTRY`, `register()`, and the "
          "shared `parse_decimal_comma` / `parse_us_date` helpers.\n"
          "- `northbank.py`, `riverbank.py`, `harbor.py`: one parser each, registered at "
          "import.\n"
          "- `__init__.py`: `detect_bank` and `import_statement` walk the registry; "
          "`parse_northbank`, `parse_riverbank`, `parse_harbor_credit` and "
          "`_parse_decimal_comma` stay importable from the old path.\n\n"
          "All 41 tests pass unchanged. Adding a bank is now one new module plus an import "
          "line in `__init__.py`.")
    r.send()
    s.turn_done()

    # the reviewer checks the permission rules; the command prints nothing
    s.pause(96.4)
    s.local_command("permissions", "")
    s.pause(41.7)
    s.prompt("also run ruff and mypy on the package before you commit")
    r = s.respond()
    r.bash("ruff check ledgerline/importers", "", stderr=(
        "ledgerline/importers/__init__.py:5:8: F401 [*] `csv` imported but unused\n"
        "ledgerline/importers/base.py:33:5: D103 Missing docstring in public function\n"
        "Found 2 errors.\n[*] 1 fixable with the `--fix` option."),
        description="Lint the package", seconds=0.4, exit_error=True)
    r.send()
    r = s.respond()
    r.edit(f"{pkg}/__init__.py", "import csv\n\n", "")
    r.send()
    r = s.respond()
    r.edit(f"{pkg}/base.py", "def parse_us_date(value: str) -> date:\n",
           "def parse_us_date(value: str) -> date:\n    \"\"\"'03/09/2026' -> date(2026, 3, "
           "9).\"\"\"\n")
    r.send()
    r = s.respond()
    r.bash("ruff check ledgerline/importers && mypy ledgerline/importers",
           "All checks passed!\nSuccess: no issues found in 5 source files",
           description="Lint and type-check the package", seconds=6.8)
    r.send()
    # a response that thought and then stopped without a word
    r = s.respond(first_token=2.9)
    r.think(11.6, 1400)
    r.send("end_turn")
    s.turn_done()
    s.pause(63.2)
    s.prompt("go on")
    r = s.respond()
    r.say("Lint and types are clean, committing.")
    r.bash("git add -A ledgerline tests && git commit -q -m \"Split importers into a package "
           "with one module per bank\" && git log --oneline -1 && git show --stat --oneline "
           "HEAD | tail -n 7",
           "8e1f2c4 Split importers into a package with one module per bank\n"
           " ledgerline/importers.py            | 83 ---------------------\n"
           " ledgerline/importers/__init__.py   | 33 ++++++++\n"
           " ledgerline/importers/base.py       | 37 ++++++++++\n"
           " ledgerline/importers/harbor.py     | 28 +++++++\n"
           " ledgerline/importers/northbank.py  | 26 +++++++\n"
           " ledgerline/importers/riverbank.py  | 27 +++++++\n"
           " 6 files changed, 151 insertions(+), 83 deletions(-)",
           description="Commit the refactor", seconds=0.6)
    r.send()
    r = s.respond()
    r.say("Committed as `8e1f2c4` on `refactor/importers`: ruff and mypy are clean, 41 tests "
          "pass.")
    r.send()
    s.turn_done()
    s.pause(118.5)
    s.prompt("one more thing: registering two importers with the same bank code should fail "
             "loudly instead of silently replacing the first one")
    r = s.respond()
    r.edit(f"{pkg}/base.py",
           "def register(importer: Importer) -> Importer:\n"
           "    REGISTRY[importer.code] = importer\n",
           "def register(importer: Importer) -> Importer:\n"
           "    \"\"\"Add an importer; a second importer with the same code is a bug.\"\"\"\n"
           "    if importer.code in REGISTRY:\n"
           "        raise ValueError(f\"importer {importer.code!r} is already registered\")\n"
           "    REGISTRY[importer.code] = importer\n")
    r.send()
    r = s.respond()
    r.edit(tests_path,
           "def test_harbor_charges_are_negative():\n",
           "def test_duplicate_code_is_rejected():\n"
           "    from ledgerline.importers import Importer, register\n\n"
           "    with pytest.raises(ValueError, match=\"already registered\"):\n"
           "        register(Importer(\"harbor\", lambda header: False, lambda text: []))\n\n\n"
           "def test_harbor_charges_are_negative():\n")
    r.send()
    r = s.respond()
    r.bash("python -m pytest -q && ruff check ledgerline tests",
           ".........................................."
           "\n42 passed in 0.81s\nAll checks passed!",
           description="Run tests and lint", seconds=3.1)
    r.send()
    r = s.respond()
    r.bash("git commit -qam \"Reject duplicate importer codes\" && git log --oneline -2",
           "b73d9a0 Reject duplicate importer codes\n"
           "8e1f2c4 Split importers into a package with one module per bank",
           description="Commit the change")
    r.send()
    r = s.respond()
    r.say("`register()` now raises `ValueError: importer 'harbor' is already registered` on a "
          "duplicate code, with a test for it (42 tests pass). Committed as `b73d9a0`.")
    r.send()
    s.turn_done()
    s.event({"type": "last-prompt", "lastPrompt": "one more thing: registering two importers "
             "with the same bank code should fail loudly instead of silently replacing the "
             "first one", "sessionId": s.session_id})
    return s.lines
