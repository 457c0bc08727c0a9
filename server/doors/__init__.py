"""The doors: the transport seam (:mod:`server.doors.output`) and what carries it.

Telnet (:mod:`server.doors.telnet`) and the web page's WebSocket (:mod:`server.doors.web`)
turn bytes into clean lines and lines into bytes; :mod:`server.doors.admission` and
:mod:`server.doors.throttle` decide who may come in and how fast they may try. Nothing here
knows a command, a user or a match (docs/architecture.md).
"""
