"""The FIBS wire protocol: every text the server reads and writes, as pure functions.

Nothing here touches a socket, a clock or a database (shared/docs/architecture.md); the
server chooses *what* to say and *to whom*, this package says it byte for byte as
shared/docs/fibs-protocol.md (the spec, cited as §n) requires. Modules:

* :mod:`protocol.commands`, :mod:`protocol.parser` - command table, line parser (§4.1, §4.2)
* :mod:`protocol.replies` - every human-readable message (§1-§6)
* :mod:`protocol.clip` - CLIP messages 1-20 (§2)
* :mod:`protocol.board_view`, :mod:`protocol.board_fibs` - one viewer's ``board:`` line (§3.1-§3.5)
* :mod:`protocol.board_ascii` - the ASCII boards of styles 1 and 2 (§3.6, §3.7)
"""
