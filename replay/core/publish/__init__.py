"""What leaves the machine: exports, case studies and HTML reports.

`export` (CSV and JSONL rows of annotations), `casestudy` (an empty turn with its context,
as Markdown or HTML), `report_html` (the corpus report as one HTML page).
May import: every earlier stage and the core utilities.
"""
