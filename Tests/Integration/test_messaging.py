"""PRIVMSG/NOTICE: channel fan-out to many clients, private messages, and their errors
(RFC 2812 section 3.3)."""

from ircclient import Message

CLIENTS = 30
MESSAGES_EACH = 5


def privmsgs(msgs: list[Message], target: str) -> list[Message]:
    return [m for m in msgs if m.command == "PRIVMSG" and m.param(0).lower() == target.lower()]


def test_channel_fanout_every_message_once_in_order_to_every_other_member_never_echoed(server):
    chan = "#fanout"
    users = [server.user(f"fan{i:02d}") for i in range(CLIENTS)]
    for u in users:
        u.join(chan)  # sequential: every member has joined before anyone speaks
    for i, u in enumerate(users):
        u.send_lines([f"PRIVMSG {chan} :msg {i} {seq}" for seq in range(MESSAGES_EACH)])
    expected_each = (CLIENTS - 1) * MESSAGES_EACH
    for i, u in enumerate(users):
        got: dict[int, list[int]] = {}
        count = 0
        while count < expected_each:
            m = u.expect("PRIVMSG")
            assert m.param(0).lower() == chan, m
            _, sender, seq = m.last.split(" ")
            sender, seq = int(sender), int(seq)
            assert sender != i, f"fan{i:02d} received its own message back: {m}"
            assert m.nick == f"fan{sender:02d}", f"prefix does not name the sender: {m}"
            got.setdefault(sender, []).append(seq)
            count += 1
        for s in range(CLIENTS):
            if s != i:
                assert got.get(s) == list(range(MESSAGES_EACH)), \
                    f"fan{i:02d} got from fan{s:02d}: {got.get(s)} (want each once, in order)"
    # Nothing more (no duplicate, no echo): a last marker from fan00 arrives next at every other
    # member, and one from fan01 next at fan00 (the channel delivered everything before it).
    users[0].send(f"PRIVMSG {chan} :marker")
    for u in users[1:]:
        before = u.collect_until("PRIVMSG")
        assert before[-1].last == "marker", f"{u.nick}: unexpected {before[-1]}"
    users[1].send(f"PRIVMSG {chan} :marker2")
    before = users[0].collect_until("PRIVMSG")
    assert before[-1].last == "marker2", before
    for u in users[:2]:
        assert not privmsgs(u.sync(), chan)


def test_private_message_reaches_only_the_target_with_sender_prefix(server):
    alice = server.user("alice")
    bob = server.user("bob")
    carol = server.user("carol")
    alice.send("PRIVMSG bob :hello bob, it is alice")
    m = bob.expect("PRIVMSG")
    assert m.nick == "alice" and "!" in m.prefix and "@" in m.prefix, m
    assert m.param(0) == "bob" and m.last == "hello bob, it is alice", m
    # target in another case
    alice.send("PRIVMSG BOB :again")
    assert bob.expect("PRIVMSG").last == "again"
    assert alice.sync() == []  # no echo, no error
    assert carol.sync() == []
    # text with a colon and leading spaces is kept as is
    bob.send("PRIVMSG alice ::-) with  two  spaces")
    assert alice.expect("PRIVMSG").last == ":-) with  two  spaces"


def test_private_message_to_several_targets(server):
    alice = server.user("alice")
    bob = server.user("bob")
    carol = server.user("carol")
    alice.send("PRIVMSG bob,carol :to both")
    assert bob.expect("PRIVMSG").last == "to both"
    assert carol.expect("PRIVMSG").last == "to both"


def test_privmsg_to_missing_nick_gets_401(server):
    alice = server.user("alice")
    alice.send("PRIVMSG nobody :hello?")
    reply = alice.expect("401")
    assert reply.param(0) == "alice" and reply.param(1) == "nobody", reply


def test_privmsg_to_missing_channel_gets_401_or_403(server):
    alice = server.user("alice")
    alice.send("PRIVMSG #nowhere :hello?")
    reply = alice.expect("401", "403", "404")
    assert reply.param(1) == "#nowhere", reply


def test_privmsg_without_text_gets_412_without_target_411(server):
    alice = server.user("alice")
    server.user("bob")
    alice.send("PRIVMSG bob")
    alice.expect("412")
    alice.send("PRIVMSG")
    alice.expect("411")


def test_notice_never_gets_an_error_reply(server):
    alice = server.user("alice")
    server.user("bob", "#room")
    alice.send_lines(["NOTICE nobody :hello?", "NOTICE #nowhere :hello?", "NOTICE bob",
                      "NOTICE", "NOTICE #room :from outside"])
    replies = alice.sync()
    assert replies == [], f"NOTICE must never be answered: {replies}"


def test_notice_is_delivered_like_privmsg(server):
    alice = server.user("alice", "#room")
    bob = server.user("bob", "#room")
    alice.send("NOTICE bob :private notice")
    m = bob.expect("NOTICE")
    assert m.nick == "alice" and m.param(0) == "bob" and m.last == "private notice", m
    alice.send("NOTICE #room :channel notice")
    m = bob.expect("NOTICE")
    assert m.param(0) == "#room" and m.last == "channel notice", m
    assert [m for m in alice.sync() if m.command in ("NOTICE", "PRIVMSG")] == []  # no echo


def test_lowercase_commands_are_accepted(server):
    alice = server.user("alice")
    bob = server.user("bob")
    alice.send("privmsg bob :lower")
    assert bob.expect("PRIVMSG").last == "lower"
