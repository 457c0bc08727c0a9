"""FIBS clients for bots: a CLIP client library and ready-to-run bots (docs/bots.md).

* :mod:`bots.client` - :class:`~bots.client.FibsClient`, one bot account on a server
* :mod:`bots.strategy` - the :class:`~bots.strategy.Strategy` protocol a bot implements
* :mod:`bots.events` - every line read, as a typed event
* :mod:`bots.decide` - what a board asks the bot to do; moves as FIBS commands
* :mod:`bots.backoff`, :mod:`bots.heuristic` - reconnect delays; a fallback evaluation
* :mod:`bots.login`, :mod:`bots.connection`, :mod:`bots.telnet` - login, registration,
  the bot marker, lines and prompts
* :mod:`bots.runner` - the command line shared by the bots (``--count`` accounts)
* :mod:`bots.random`, :mod:`bots.gnubg` - the bots, ``python -m bots.random`` / ``bots.gnubg``

Bots use :mod:`backgammon` and :mod:`protocol` and the standard library only; never the
server (tests/test_architecture.py).
"""
