"""The asyncio FIBS server: telnet and CLIP sessions, accounts, who, chat, settings, matches.

The only package that awaits sockets; see docs/server.md.
"""
