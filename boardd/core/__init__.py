"""The pure core: events in, moves, findings and publications out.

Nothing here does I/O, reads a clock or sleeps: every timestamp comes from an event
(``boardd.core.events``), and replays are deterministic. The daemon
(``boardd.daemon``) and the consumers (``boardd.consumers``) build on this package;
it imports neither of them, nor ``drivers`` (the import-linter contracts in
pyproject.toml check it on every ``make test``).
"""
