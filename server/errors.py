"""The server's own exception: a handler stops and answers with FIBS text."""

from __future__ import annotations

from collections.abc import Sequence


class Reply(Exception):
    """Stop the command and send ``lines`` to the user (an error the user caused).

    Dispatch turns it into output in one place; it is never logged as an error.
    """

    def __init__(self, *lines: str) -> None:
        super().__init__(lines[0] if lines else "")
        self.lines: Sequence[str] = lines
