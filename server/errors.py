"""The server's own exception: a handler stops and answers with FIBS text."""

from __future__ import annotations

from collections.abc import Sequence


class Reply(Exception):
    """Stop the command and send ``lines`` to the user (an error the user caused).

    Dispatch turns it into output in one place; it is never logged as an error.
    """

    def __init__(self, *lines: str, telnet: Sequence[str] = ()) -> None:
        super().__init__(lines[0] if lines else "")
        self.lines: Sequence[str] = lines
        self.telnet: Sequence[str] = telnet
        """Lines sent after :attr:`lines` when the reply is in telnet mode (a telnet
        session, or a ``text!`` command, D376): the explanations of D171/D172 that
        CLIP clients never get. Dispatch decides, so that the tables need not know
        how the command's reply is written."""
