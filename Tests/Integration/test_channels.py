"""Channel membership and queries: JOIN (lists, keys, 0), PART, QUIT and NICK broadcasts, TOPIC,
NAMES, LIST, WHO, WHOIS, AWAY, ISON, USERHOST, KICK, INVITE (RFC 2812 sections 3.2, 3.6, 4)."""

import re
import time

from ircclient import IRCClient, Message
from test_modes import ensure_mode


def names_of(burst: list[Message], channel: str) -> list[str]:
    """Nicks with prefixes from the 353 lines for `channel`."""
    out = []
    for m in burst:
        if m.command == "353" and m.param(2).lower() == channel.lower():
            out += m.last.split()
    return out


def count(msgs: list[Message], command: str, nick: str = None) -> int:
    return sum(1 for m in msgs if m.command == command and (nick is None or m.nick == nick))


def wait_marker(client: IRCClient, text: str) -> list[Message]:
    """Everything up to the PRIVMSG whose text is `text` (a causal marker from a peer)."""
    return client.collect_until(lambda m: m.command == "PRIVMSG" and m.last == text)


# ------------------------------------------------------------------------------------------- JOIN
def test_join_echoes_to_joiner_then_names_and_first_member_is_operator(server):
    alice = server.user("alice")
    burst = alice.join("#room")
    join = next(m for m in burst if m.command == "JOIN")
    assert join.nick == "alice" and join.param(0) == "#room", join
    assert burst.index(join) < next(i for i, m in enumerate(burst) if m.command == "353")
    assert names_of(burst, "#room") == ["@alice"], burst
    end = burst[-1]
    assert end.command == "366" and end.param(0) == "alice" and end.param(1) == "#room", end


def test_join_is_broadcast_to_existing_members_and_names_lists_everyone(server):
    alice = server.user("alice", "#room")
    bob = server.user("bob")
    burst = bob.join("#room")
    assert sorted(names_of(burst, "#room")) == ["@alice", "bob"], burst
    m = alice.expect("JOIN")
    assert m.nick == "bob" and m.param(0) == "#room" and "@" in m.prefix, m


def test_join_again_is_silent(server):
    alice = server.user("alice", "#room")
    alice.send("JOIN #room")
    assert [m for m in alice.sync() if m.command == "JOIN"] == []


def test_join_list_with_keys_joins_each_channel(server):
    owner = server.user("owner", "#keyed", "#open")
    owner.send("MODE #keyed +k sesame")
    owner.expect("MODE")
    bob = server.user("bob")
    bob.send("JOIN #keyed,#open,#fresh sesame")
    ends, joined = set(), []
    while ends != {"#keyed", "#open", "#fresh"}:  # (the order of the three is not specified)
        m = bob.expect("JOIN", "366", "475", "403")
        assert m.command in ("JOIN", "366"), m
        if m.command == "JOIN":
            assert m.nick == "bob", m
            joined.append(m.param(0))
        else:
            ends.add(m.param(1))
    assert sorted(joined) == ["#fresh", "#keyed", "#open"], joined


def test_join_zero_parts_every_channel(server):
    alice = server.user("alice", "#one", "#two")
    bob = server.user("bob", "#one", "#two")
    bob.send("JOIN 0")
    bob_parts = set()
    while len(bob_parts) < 2:
        m = bob.expect("PART")
        assert m.nick == "bob", m
        bob_parts.add(m.param(0))
    assert bob_parts == {"#one", "#two"}
    alice_parts = set()
    while len(alice_parts) < 2:
        m = alice.expect("PART")
        assert m.nick == "bob", m
        alice_parts.add(m.param(0))
    bob.send("NAMES #one")
    names = bob.collect_until("366")
    assert "bob" not in [n.lstrip("@+") for n in names_of(names, "#one")]


def test_join_invalid_channel_name_gets_403_or_479(server):
    alice = server.user("alice")
    alice.send("JOIN nochan")
    reply = alice.expect("403", "476", "479")
    assert reply.param(1) == "nochan", reply


# ------------------------------------------------------------------------------------------- PART
def test_part_with_reason_is_broadcast_to_all_members_including_the_parter(server):
    alice = server.user("alice", "#room")
    bob = server.user("bob", "#room")
    carol = server.user("carol", "#room")
    bob.send("PART #room :see you later")
    for c in (alice, bob, carol):
        m = c.expect("PART")
        assert m.nick == "bob" and m.param(0) == "#room" and m.last == "see you later", (c.nick, m)
    # bob is no longer a member: alice's next message is not delivered to him
    alice.send("PRIVMSG #room :after part")
    assert carol.expect("PRIVMSG").last == "after part"
    assert [m for m in bob.sync() if m.command == "PRIVMSG"] == []


def test_part_errors_442_not_on_channel_and_403_no_such_channel(server):
    server.user("alice", "#room")
    bob = server.user("bob")
    bob.send("PART #room")
    assert bob.expect("442").param(1) == "#room"
    bob.send("PART #nosuch")
    assert bob.expect("403", "442").param(1) == "#nosuch"


# ------------------------------------------------------------------------------------------- QUIT
def test_quit_is_broadcast_exactly_once_to_each_peer_sharing_one_or_several_channels(server):
    alice = server.user("alice", "#x", "#y")
    bob = server.user("bob", "#x", "#y", "#z")
    carol = server.user("carol", "#x")
    dave = server.user("dave", "#z")
    erin = server.user("erin")
    alice.send("QUIT :gone fishing")
    closed = alice.expect_closed()
    assert closed and closed[-1].command == "ERROR", closed
    for c in (bob, carol):
        m = c.expect("QUIT")
        assert m.nick == "alice" and "gone fishing" in m.last, (c.nick, m)
    # markers sent after the QUIT was seen: nothing else about alice may come before them
    carol.send("PRIVMSG #x :marker-x")
    seen = wait_marker(bob, "marker-x")
    assert count(seen, "QUIT") == 0, f"bob got a second QUIT: {seen}"
    bob.send("PRIVMSG #z :marker-z")
    seen = wait_marker(dave, "marker-z")
    assert count(seen, "QUIT") == 0, f"dave shares no channel with alice: {seen}"
    assert count(carol.sync(), "QUIT") == 0
    assert count(erin.sync(), "QUIT") == 0


# ------------------------------------------------------------------------------------------- NICK
def test_nick_change_is_broadcast_once_per_peer_and_to_self(server):
    alice = server.user("alice", "#x", "#y")
    bob = server.user("bob", "#x", "#y", "#z")
    carol = server.user("carol", "#x")
    dave = server.user("dave", "#z")
    alice.send("NICK alice2")
    for c in (alice, bob, carol):
        m = c.expect("NICK")
        assert m.nick == "alice" and m.param(0) == "alice2", (c.nick, m)
    carol.send("PRIVMSG #x :marker-x")
    assert count(wait_marker(bob, "marker-x"), "NICK") == 0
    assert count(wait_marker(alice, "marker-x"), "NICK") == 0
    bob.send("PRIVMSG #z :marker-z")
    assert count(wait_marker(dave, "marker-z"), "NICK") == 0
    # the new nick is in use now, the old one is free
    bob.send("PRIVMSG alice2 :to the new nick")
    assert alice.expect("PRIVMSG").last == "to the new nick"
    bob.send("PRIVMSG alice :to the old nick")
    assert bob.expect("401").param(1) == "alice"


def test_nick_change_case_only_is_allowed(server):
    alice = server.user("alice", "#x")
    alice.send("NICK ALICE")
    m = alice.expect("NICK")
    assert m.param(0) == "ALICE", m


# ------------------------------------------------------------------------------------------ TOPIC
def test_topic_unset_331_set_broadcast_then_332_333(server):
    alice = server.user("alice", "#room")
    bob = server.user("bob", "#room")
    alice.send("TOPIC #room")
    assert alice.expect("331", "332").command == "331"
    alice.send("TOPIC #room :the topic of the day")
    for c in (alice, bob):
        m = c.expect("TOPIC")
        assert m.nick == "alice" and m.param(0) == "#room" and m.last == "the topic of the day", m
    bob.send("TOPIC #room")
    t = bob.expect("332")
    assert t.param(0) == "bob" and t.param(1) == "#room" and t.last == "the topic of the day", t
    who = bob.expect("333")
    assert who.param(1) == "#room" and who.param(2).split("!")[0] == "alice", who
    assert abs(int(who.param(3)) - time.time()) < 600, who
    # a new member gets the topic in the JOIN burst
    carol = server.client("carol")
    carol.register("carol")
    burst = carol.join("#room")
    assert any(m.command == "332" and m.last == "the topic of the day" for m in burst), burst


def test_topic_protected_by_plus_t_gives_482_to_non_operators(server):
    alice = server.user("alice", "#room")
    bob = server.user("bob", "#room")
    ensure_mode(alice, "#room", "t", True, bob)
    bob.send("TOPIC #room :mine now")
    assert bob.expect("482").param(1) == "#room"
    ensure_mode(alice, "#room", "t", False, bob)
    bob.send("TOPIC #room :mine now")
    assert alice.expect("TOPIC").last == "mine now"


def test_topic_of_a_channel_one_is_not_on_gets_442_and_missing_channel_403(server):
    server.user("alice", "#room")
    bob = server.user("bob")
    bob.send("TOPIC #room :outside")
    assert bob.expect("442").param(1) == "#room"
    bob.send("TOPIC #nosuch")
    assert bob.expect("403", "442").param(1) == "#nosuch"


def test_empty_topic_clears_it(server):
    alice = server.user("alice", "#room")
    alice.send("TOPIC #room :something")
    alice.expect("TOPIC")
    alice.send("TOPIC #room :")
    assert alice.expect("TOPIC").last == ""
    alice.send("TOPIC #room")
    assert alice.expect("331", "332").command == "331"


# -------------------------------------------------------------------------------------- NAMES/LIST
def test_names_lists_members_with_prefixes_then_366(server):
    alice = server.user("alice", "#room")
    server.user("bob", "#room")
    server.user("carol", "#room")
    alice.send("MODE #room +v bob")
    alice.expect("MODE")
    alice.send("NAMES #room")
    msgs = alice.collect_until("366")
    assert sorted(names_of(msgs, "#room")) == ["+bob", "@alice", "carol"], msgs
    head = next(m for m in msgs if m.command == "353")
    assert head.param(0) == "alice" and head.param(1) in ("=", "*", "@"), head
    assert msgs[-1].param(1) == "#room"


def test_names_of_a_missing_channel_is_just_366(server):
    alice = server.user("alice")
    alice.send("NAMES #nosuch")
    msgs = alice.collect_until("366")
    assert count(msgs, "353") == 0 and msgs[-1].param(1) == "#nosuch", msgs


def test_list_shows_channels_with_member_count_and_topic(server):
    alice = server.user("alice", "#alpha", "#beta")
    server.user("bob", "#alpha")
    alice.send("TOPIC #alpha :alpha topic")
    alice.expect("TOPIC")
    alice.send("LIST")
    msgs = alice.collect_until("323")
    # (ngIRCd also lists its local "&SERVER" channel)
    rows = {m.param(1): m for m in msgs if m.command == "322" and m.param(1).startswith("#")}
    assert set(rows) == {"#alpha", "#beta"}, msgs
    assert rows["#alpha"].param(2) == "2" and rows["#alpha"].last.endswith("alpha topic"), rows["#alpha"]
    assert rows["#beta"].param(2) == "1", rows["#beta"]
    alice.send("LIST #beta")
    msgs = alice.collect_until("323")
    assert [m.param(1) for m in msgs if m.command == "322"] == ["#beta"], msgs


# ------------------------------------------------------------------------------------ WHO / WHOIS
def test_who_channel_lists_members_352_then_315(server):
    alice = server.user("alice", "#room")
    server.user("bob", "#room")
    alice.send("WHO #room")
    msgs = alice.collect_until("315")
    rows = {m.param(5): m for m in msgs if m.command == "352"}
    assert set(rows) == {"alice", "bob"}, msgs
    a = rows["alice"]
    assert a.param(0) == "alice" and a.param(1) == "#room" and a.param(4) == server.name, a
    assert a.param(6).startswith("H") and "@" in a.param(6), a
    assert rows["bob"].param(6) == "H", rows["bob"]
    assert a.last.split(" ", 1)[0].isdigit() and a.last.endswith("Integration alice"), a
    assert msgs[-1].param(1) == "#room"


def test_who_nick(server):
    alice = server.user("alice")
    server.user("bob")
    alice.send("WHO bob")
    msgs = alice.collect_until("315")
    rows = [m for m in msgs if m.command == "352"]
    assert len(rows) == 1 and rows[0].param(5) == "bob", msgs


def test_whois_gives_311_and_318_and_401_for_missing(server):
    alice = server.user("alice")
    server.user("bob", "#room")
    alice.send("WHOIS bob")
    msgs = alice.collect_until("318")
    user = next(m for m in msgs if m.command == "311")
    assert user.param(0) == "alice" and user.param(1) == "bob" and user.param(2).lstrip("~") == "bob", user
    assert user.param(3) and user.last == "Integration bob", user
    chans = [m for m in msgs if m.command == "319"]
    assert chans and "#room" in chans[0].last, msgs
    assert any(m.command == "312" and m.param(2) == server.name for m in msgs), msgs
    assert msgs[-1].param(1) == "bob"
    alice.send("WHOIS nobody")
    msgs = alice.collect_until("318")
    assert any(m.command == "401" and m.param(1) == "nobody" for m in msgs), msgs


# ------------------------------------------------------------------------------------------- AWAY
def test_away_gives_306_then_301_to_senders_then_305(server):
    alice = server.user("alice")
    bob = server.user("bob")
    bob.send("AWAY :out for lunch")
    assert bob.expect("306").param(0) == "bob"
    alice.send("PRIVMSG bob :are you there?")
    away = alice.expect("301")
    assert away.param(1) == "bob" and away.last == "out for lunch", away
    assert bob.expect("PRIVMSG").last == "are you there?"  # still delivered
    alice.send("NOTICE bob :notice while away")
    assert [m for m in alice.sync() if m.command == "301"] == []  # never for NOTICE
    bob.send("AWAY")
    assert bob.expect("305").param(0) == "bob"
    alice.send("PRIVMSG bob :back?")
    assert [m for m in alice.sync() if m.command == "301"] == []


def test_away_shows_in_who_and_userhost(server):
    alice = server.user("alice", "#room")
    bob = server.user("bob", "#room")
    bob.send("AWAY :gone")
    bob.expect("306")
    alice.send("WHO #room")
    rows = {m.param(5): m for m in alice.collect_until("315") if m.command == "352"}
    assert rows["bob"].param(6).startswith("G"), rows["bob"]
    alice.send("USERHOST bob")
    reply = alice.expect("302")
    assert re.match(r"^bob=-~?bob@", reply.last.strip()), reply


# --------------------------------------------------------------------------------- ISON / USERHOST
def test_ison_returns_online_nicks_only(server):
    alice = server.user("alice")
    server.user("Bob")
    alice.send("ISON bob nobody alice")
    reply = alice.expect("303")
    assert sorted(reply.last.split()) == ["Bob", "alice"], reply
    alice.send("ISON nobody")
    assert alice.expect("303").last.strip() == ""


def test_userhost_returns_nick_user_host_entries(server):
    alice = server.user("alice")
    server.user("bob")
    alice.send("USERHOST bob nobody alice")
    reply = alice.expect("302")
    entries = reply.last.split()
    assert len(entries) == 2, reply
    assert re.match(r"^bob=\+~?bob@\S+$", entries[0]) and re.match(r"^alice=\+~?alice@\S+$", entries[1]), reply


# ------------------------------------------------------------------------------------------- KICK
def test_kick_is_broadcast_and_removes_the_member(server):
    alice = server.user("alice", "#room")
    bob = server.user("bob", "#room")
    carol = server.user("carol", "#room")
    alice.send("KICK #room bob :behave")
    for c in (alice, bob, carol):
        m = c.expect("KICK")
        assert m.nick == "alice" and m.param(0) == "#room" and m.param(1) == "bob" and m.last == "behave", m
    alice.send("NAMES #room")
    assert sorted(names_of(alice.collect_until("366"), "#room")) == ["@alice", "carol"]
    carol.send("PRIVMSG #room :bob is out")
    assert alice.expect("PRIVMSG").last == "bob is out"
    assert [m for m in bob.sync() if m.command == "PRIVMSG"] == []


def test_kick_errors_482_non_operator_441_not_on_channel_442_kicker_not_on_channel(server):
    alice = server.user("alice", "#room")
    bob = server.user("bob", "#room")
    server.user("carol")
    dave = server.user("dave")
    bob.send("KICK #room alice")
    assert bob.expect("482").param(1) == "#room"
    alice.send("KICK #room carol")
    r = alice.expect("441")
    assert r.param(1) == "carol" and r.param(2) == "#room", r
    dave.send("KICK #room bob")
    assert dave.expect("442", "482").param(1) == "#room"
    alice.send("KICK #nosuch bob")
    assert alice.expect("403").param(1) == "#nosuch"
    alice.send("KICK #room nobody")
    assert alice.expect("401", "441").param(1) == "nobody"


# ----------------------------------------------------------------------------------------- INVITE
def test_invite_notifies_target_and_replies_341(server):
    alice = server.user("alice", "#room")
    bob = server.user("bob")
    alice.send("INVITE bob #room")
    r = alice.expect("341")
    assert r.param(1) == "bob" and r.param(2) == "#room", r
    m = bob.expect("INVITE")
    assert m.nick == "alice" and m.param(0) == "bob" and m.param(1) == "#room", m


def test_invite_errors_401_missing_nick_443_already_on_channel_442_inviter_not_on(server):
    alice = server.user("alice", "#room")
    bob = server.user("bob", "#room")
    carol = server.user("carol")
    alice.send("INVITE nobody #room")
    assert alice.expect("401").param(1) == "nobody"
    alice.send("INVITE bob #room")
    r = alice.expect("443")
    assert r.param(1) == "bob" and r.param(2) == "#room", r
    carol.send("INVITE alice #room")
    assert carol.expect("442").param(1) == "#room"
    assert [m for m in bob.sync() if m.command == "INVITE"] == []
