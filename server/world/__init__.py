"""The world of users: the presence seam (:mod:`server.world.presence`) and its back end.

Who is online, the lines between users, a session's own state and output, visitors,
password hashing and the users-by-hour counts. Handlers and tables reach other users only
through :class:`server.world.presence.Presence` (docs/architecture.md).
"""
