"""``average``'s numbers (D160): users logged in, weighted by time, by hour of the day (UTC)."""

from __future__ import annotations

from protocol.replies import HourUsers
from server.world.user_stats import UsersByHour

DAY = 86_400.0
H = 3_600.0


def test_a_fresh_table_counts_the_hours_it_has_seen() -> None:
    users = UsersByHour(10 * H)
    hours = users.hours(10 * H + 60)
    assert hours[10] == HourUsers(0.0, 0, 0)
    assert hours[9] == HourUsers() and hours[11] == HourUsers()


def test_the_mean_is_weighted_by_time_and_split_at_the_hour() -> None:
    users = UsersByHour(DAY + 10 * H)  # 10:00 UTC of the second day since 1970
    users.observe(DAY + 10 * H + 0.25 * H, 4)  # 0 users for a quarter hour, then 4
    users.observe(DAY + 11 * H + 0.5 * H, 2)  # 4 up to 11:30, then 2
    hours = users.hours(DAY + 12 * H)
    assert hours[10] == HourUsers(3.0, 0, 4)
    assert hours[11] == HourUsers(3.0, 2, 4)
    assert hours[12] == HourUsers(2.0, 2, 2)  # only the instant of 12:00
    assert hours[13] == HourUsers()


def test_the_same_hour_of_other_days_adds_up() -> None:
    users = UsersByHour(5 * H, 1)
    users.observe(6 * H, 0)
    users.observe(DAY + 5 * H, 3)
    hours = users.hours(DAY + 6 * H)
    assert hours[5] == HourUsers(2.0, 1, 3)
    assert hours[6].least == 0 and hours[6].most == 3  # 06:00 of day one, 06:00 of day two
    assert hours[12] == HourUsers(0.0, 0, 0)


def test_a_clock_that_goes_back_adds_nothing() -> None:
    users = UsersByHour(10 * H, 2)
    users.observe(9 * H, 5)
    hours = users.hours(10 * H + 0.5 * H)
    assert hours[10] == HourUsers(5.0, 2, 5)  # 5 from the last change on
    assert hours[9] == HourUsers()
