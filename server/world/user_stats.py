"""How many users were logged in at each hour of the day (UTC), for ``average`` (§4.2, D160).

FIBS's ``average`` is a table of the mean, the fewest and the most users logged in for
every hour of the day. The registry reports every change of its count
(:meth:`UsersByHour.observe`); the time between two changes is added, hour by hour, to the
hour of the day (UTC) it fell in, so the mean is weighted by time, over every day since
the server started. Nothing is stored: the table starts afresh with the server.
"""

from __future__ import annotations

from protocol.replies import HourUsers

HOUR = 3600.0
HOURS_A_DAY = 24


class UsersByHour:
    """Time-weighted users logged in, by hour of the day (UTC)."""

    def __init__(self, now: float, count: int = 0) -> None:
        self._since = now
        """When the count last changed (or was last added up), Unix time."""
        self._count = count
        """Users logged in since :attr:`_since`."""
        self._seconds = [0.0] * HOURS_A_DAY
        """Seconds observed in each hour of the day."""
        self._user_seconds = [0.0] * HOURS_A_DAY
        """Users times seconds in each hour of the day (the mean's numerator)."""
        self._least: list[int | None] = [None] * HOURS_A_DAY
        self._most: list[int | None] = [None] * HOURS_A_DAY
        self._mark(now, count)

    def _mark(self, when: float, count: int) -> None:
        """``count`` users were logged in at ``when``: widen that hour's least and most."""
        hour = int(when // HOUR) % HOURS_A_DAY
        least, most = self._least[hour], self._most[hour]
        self._least[hour] = count if least is None else min(least, count)
        self._most[hour] = count if most is None else max(most, count)

    def observe(self, now: float, count: int) -> None:
        """The count is ``count`` from ``now`` on: add the time since the last change,
        split at hour boundaries, to the hours it covered. A clock that went back adds
        nothing."""
        start, held = self._since, self._count
        while start < now:
            end = min(now, (start // HOUR + 1) * HOUR)
            hour = int(start // HOUR) % HOURS_A_DAY
            self._seconds[hour] += end - start
            self._user_seconds[hour] += (end - start) * held
            self._mark(start, held)
            start = end
        self._since = max(self._since, now)
        self._count = count
        self._mark(self._since, count)

    def hours(self, now: float) -> list[HourUsers]:
        """The 24 hours, 00:00 first, counting up to ``now``; an hour the server has not
        yet run through shows zeros."""
        self.observe(now, self._count)
        table = []
        for hour in range(HOURS_A_DAY):
            least, most = self._least[hour], self._most[hour]
            if least is None or most is None:
                table.append(HourUsers())
                continue
            seconds = self._seconds[hour]
            mean = self._user_seconds[hour] / seconds if seconds else float(most)
            table.append(HourUsers(mean, least, most))
        return table
