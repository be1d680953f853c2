"""Detection: which turns are empty under the rules in force, and the evidence for each.

`empty` holds the default rules (no visible content once empty wrappers are removed), the
optional ones (tool-only turns, requests that got no reply) and the evidence shown beside an
empty turn (reasoning, errors, gaps, compaction).
May import: `session` and the core utilities.
"""
