"""The tables: running matches, their invitations and watchers, and an action's way.

A match at the table (:mod:`server.tables.match_lifecycle`), one action acted, settled,
announced, saved and sent (:mod:`server.tables.match_flow`), its boards, its clock and its
dice statistics (docs/architecture.md).
"""
