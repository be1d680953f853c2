"""What leaves the machine: exports, case studies, HTML reports and shared sessions.

`export` (CSV and JSONL rows of annotations), `casestudy` (an empty turn with its context,
as Markdown or HTML), `report_html` (the corpus report as one HTML page), `share_model` with
`share_html`, `share_md` and `share_cast` (a whole session as a page with a player, as
Markdown, as an asciicast recording), `escaping` (untrusted text in HTML and Markdown) and
`redact` (secrets, addresses and home folders removed before anything is shared).
May import: every earlier stage and the core utilities.
"""
