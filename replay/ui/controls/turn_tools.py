"""What the reviewer can do with the current turn besides labelling it: see its source
record, copy it, open a subagent it started, export the session's annotations."""

from __future__ import annotations

from pathlib import Path

from textual import work
from textual.binding import Binding

from replay.core.session.text import plural
from replay.ui.controls.routing import Concern
from replay.ui.messages import OpenSessionRequested
from replay.ui.render import clean, turn_plain_text


class TurnTools(Concern):
    """The raw record (`v`), copy (`y`), subagents (`s`) and the CSV export (`e`)."""

    OWNER = "tools"
    BINDINGS = [
        Binding("v", "raw", "Raw", id="raw-record", show=False,
                tooltip="Show the source record of the turn"),
        Binding("y", "copy", "Copy", id="copy-turn", show=False,
                tooltip="Copy the turn's text to the clipboard (OSC 52)"),
        Binding("s", "sidechain", "Subagent", id="open-sidechain", show=False,
                tooltip="Open a subagent started by this turn"),
        Binding("e", "export", "Export", id="export-csv",
                tooltip="Export to CSV here: the rows of replay export --all-empty"),
    ]

    def action_raw(self) -> None:
        from replay.ui.screens.raw import RawScreen

        host = self.host
        if host.at_placeholder:
            self.notify(f"#{host.index + 1}+ is not in the file: ← then v shows the record of "
                        f"the request #{host.index + 1}.", timeout=3, markup=False)
        elif host.session.turns:
            self.app.push_screen(RawScreen(host.session, host.session.turns[host.index]))

    def action_copy(self) -> None:
        host = self.host
        session = host.session
        if not session.turns:
            return
        turn = session.turns[host.index]
        if host.at_placeholder:
            from replay.ui.placeholder import headline

            # Not in the file: what is known about it, never the request's words.
            text = f"#{turn.index + 1}+ (not in the file) " \
                f"{headline(session, turn.index, live=host.following)}"
            name = f"#{turn.index + 1}+"
        else:
            text = turn_plain_text(session.full_parts(turn)) or f"(empty turn {turn.id})"
            name = f"#{turn.index + 1}"
        self.app.copy_to_clipboard(text)
        self.notify(f"Copied {len(text):,} characters of {name}.", timeout=2, markup=False)

    def action_sidechain(self) -> None:
        host = self.host
        if not host.session.turns:
            return
        sidechains = host.sidechains_of(host.session.turns[host.index])
        if sidechains:
            self.post_message(OpenSessionRequested(sidechains[0]))
            return
        self.notify("No subagent was started from this turn.", timeout=2)

    def action_export(self) -> None:
        self.export_annotations(Path.cwd())

    @work(thread=True, exclusive=True, group="export", exit_on_error=False,
          description="Exporting annotations")
    def export_annotations(self, directory: Path) -> None:
        """Write the rows `replay export --all-empty` writes to a new CSV file (this
        reviewer's alone in a blind review), and say which."""
        from replay.ui.export_file import export_name, export_session

        host = self.host
        session = host.session
        try:
            target, count, scope = export_session(
                session, host.store, host.labels, host.suggester, directory, host.rules,
                only_reviewer=host.blind)
        except OSError as error:
            self.app.call_from_thread(
                self.notify, clean(f"Could not export to {directory}: {error.strerror or error}"),
                title="Export failed", severity="error", markup=False, timeout=10)
            return
        kept = "" if target.name == export_name(session) else \
            f"\n(an earlier {export_name(session)} is kept)"
        self.app.call_from_thread(
            self.notify, clean(f"Exported {plural(count, 'row')} to {target}{kept}\n({scope})"),
            title="Export", markup=False, timeout=8)
