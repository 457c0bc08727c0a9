"""Matches analysed by GNU Backgammon after they end (issue 29; docs/analysis.md).

:mod:`server.analysis.gnubg` runs one analysis in a gnubg process;
:mod:`server.analysis.pool` is the bounded queue and its workers, which the tables feed
when a match ends and the ``analysis`` command reads.
"""
