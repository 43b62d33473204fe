"""A scenario with the PyPI `irc` library (jaraco): two bots on one irc.client.Reactor join a
channel, exchange channel and private messages, one changes its nick, one quits.

The server runs with its default flood control, as for any real client.
"""

import time

import pytest

irc_client = pytest.importorskip("irc.client", reason="the PyPI 'irc' package is not installed")

from ircclient import DEFAULT_TIMEOUT  # noqa: E402


class Recorder:
    def __init__(self):
        self.events: list[tuple[str, str, str, str, tuple]] = []  # (bot, type, source nick, target, args)

    def __call__(self, connection, event):
        source = event.source.nick if hasattr(event.source, "nick") and event.source else str(event.source)
        self.events.append((connection.get_nickname(), event.type, source, str(event.target or ""),
                            tuple(event.arguments)))

    def has(self, bot=None, type_=None, source=None, target=None, text=None) -> bool:
        return any((bot is None or e[0] == bot) and (type_ is None or e[1] == type_) and
                   (source is None or e[2] == source) and (target is None or e[3].lower() == target.lower()) and
                   (text is None or (e[4] and e[4][0] == text)) for e in self.events)


def test_two_irc_library_bots_join_talk_change_nick_and_quit(start_server):
    server = start_server(flood_control=True)
    reactor = irc_client.Reactor()
    rec = Recorder()
    reactor.add_global_handler("all_events", rec, -10)

    def run_until(condition, what: str):
        deadline = time.monotonic() + DEFAULT_TIMEOUT * 6  # ngIRCd delays bursts by seconds
        while not condition():
            assert time.monotonic() < deadline, f"timed out waiting for {what}; events: {rec.events[-15:]}"
            reactor.process_once(timeout=0.1)

    one = reactor.server().connect(server.host, server.port, "libbot1", ircname="Library bot one")
    two = reactor.server().connect(server.host, server.port, "libbot2", ircname="Library bot two")
    try:
        run_until(lambda: rec.has("libbot1", "welcome") and rec.has("libbot2", "welcome"), "both welcomes")
        one.join("#lib")
        run_until(lambda: rec.has("libbot1", "join", "libbot1", "#lib") and
                  rec.has("libbot1", "endofnames"), "libbot1 to join")
        two.join("#lib")
        run_until(lambda: rec.has("libbot1", "join", "libbot2", "#lib"), "libbot1 to see libbot2 join")
        run_until(lambda: rec.has("libbot2", "namreply"), "libbot2's NAMES")
        names = [e for e in rec.events if e[0] == "libbot2" and e[1] == "namreply"][-1][4][-1].split()
        assert sorted(names) == ["@libbot1", "libbot2"], names

        one.privmsg("#lib", "hello from bot one")
        run_until(lambda: rec.has("libbot2", "pubmsg", "libbot1", "#lib", "hello from bot one"), "pubmsg at two")
        two.privmsg("#lib", "hello back from two")
        run_until(lambda: rec.has("libbot1", "pubmsg", "libbot2", "#lib", "hello back from two"), "pubmsg at one")
        one.privmsg("libbot2", "a private word")
        run_until(lambda: rec.has("libbot2", "privmsg", "libbot1", "libbot2", "a private word"), "privmsg at two")
        two.notice("libbot1", "a notice")
        run_until(lambda: rec.has("libbot1", "privnotice", "libbot2", "libbot1", "a notice"), "notice at one")

        two.nick("libbot3")
        run_until(lambda: rec.has("libbot1", "nick", "libbot2", "libbot3"), "libbot1 to see the nick change")
        assert two.get_nickname() == "libbot3"
        two.quit("bot two leaves")
        run_until(lambda: rec.has("libbot1", "quit", "libbot3"), "libbot1 to see the QUIT")
        run_until(lambda: rec.has(None, "disconnect") and not two.is_connected(), "bot two's disconnect")
        quit_event = next(e for e in rec.events if e[0] == "libbot1" and e[1] == "quit")
        assert "bot two leaves" in quit_event[4][0], quit_event

        # never echoed to the sender
        assert not rec.has("libbot1", "pubmsg", "libbot1"), rec.events
        assert not rec.has("libbot2", "pubmsg", "libbot2"), rec.events
        assert [e for e in rec.events if e[1] == "error" and e[0] != "libbot3"] == [], rec.events
        assert one.is_connected()
    finally:
        for c in (one, two):
            if c.is_connected():
                c.disconnect("test over")
