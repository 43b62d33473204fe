"""Channel modes (+n +t +m +i +k +l +o +v +b) and their errors, user modes, OPER and KILL
(RFC 2812 sections 3.1.5, 3.2.3, 3.7.1; RFC 2811)."""

from ircclient import IRCClient, Message
from servers import OPER_NAME, OPER_PASSWORD


def set_mode(op: IRCClient, *watchers: IRCClient, mode: str) -> Message:
    """The operator sets `mode` on its channel; every watcher (and the op) sees the MODE line."""
    op.send(f"MODE {mode}")
    m = op.expect("MODE")
    for w in watchers:
        w.expect("MODE")
    return m


def channel_modes(client: IRCClient, channel: str) -> str:
    client.send(f"MODE {channel}")
    return client.expect("324").param(2)


def ensure_mode(op: IRCClient, channel: str, letter: str, on: bool, *watchers: IRCClient) -> None:
    """Sets or clears a parameterless channel mode if needed (a new channel may have defaults,
    such as +nt, and servers do not announce a change that changes nothing)."""
    if (letter in channel_modes(op, channel)) == on:
        return
    set_mode(op, *watchers, mode=f"{channel} {'+' if on else '-'}{letter}")
    assert (letter in channel_modes(op, channel)) == on


def test_mode_query_gives_324_and_mode_change_is_broadcast(server):
    alice = server.user("alice", "#room")
    bob = server.user("bob", "#room")
    alice.send("MODE #room +mi")
    for c in (alice, bob):
        m = c.expect("MODE")
        assert m.nick == "alice" and m.param(0) == "#room", m
        assert sorted(m.param(1)) == ["+", "i", "m"], m
    modes = channel_modes(bob, "#room")
    assert modes.startswith("+") and "m" in modes and "i" in modes, modes
    alice.send("MODE #room -m")
    assert bob.expect("MODE").param(1) == "-m"
    assert "m" not in channel_modes(bob, "#room")


def test_mode_on_missing_channel_gets_403_and_non_operator_change_gets_482(server):
    alice = server.user("alice", "#room")
    bob = server.user("bob", "#room")
    alice.send("MODE #nosuch +n")
    # RFC 2812: ERR_NOSUCHCHANNEL; ngIRCd answers 401 (no such nick/channel)
    missing = ("403", "401") if server.kind == "ngircd" else ("403",)
    assert alice.expect(*missing).param(1) == "#nosuch"
    bob.send("MODE #room +m")
    assert bob.expect("482").param(1) == "#room"
    assert [m for m in alice.sync() if m.command == "MODE"] == []


def test_unknown_channel_mode_gets_472(server):
    alice = server.user("alice", "#room")
    alice.send("MODE #room +Y")
    reply = alice.expect("472")
    assert reply.param(1) == "Y", reply


def test_no_external_messages_plus_n_gives_404_to_outsiders(server):
    alice = server.user("alice", "#room")
    bob = server.user("bob")
    ensure_mode(alice, "#room", "n", True)
    bob.send("PRIVMSG #room :from outside")
    assert bob.expect("404").param(1) == "#room"
    bob.send("NOTICE #room :notice from outside")
    assert bob.sync() == []  # NOTICE: no error either
    assert [m for m in alice.sync() if m.command in ("PRIVMSG", "NOTICE")] == []
    ensure_mode(alice, "#room", "n", False)
    bob.send("PRIVMSG #room :from outside again")
    m = alice.expect("PRIVMSG")
    assert m.nick == "bob" and m.last == "from outside again", m


def test_moderated_plus_m_blocks_unvoiced_members_with_404_voice_and_ops_speak(server):
    alice = server.user("alice", "#room")
    bob = server.user("bob", "#room")
    carol = server.user("carol", "#room")
    set_mode(alice, bob, carol, mode="#room +m")
    bob.send("PRIVMSG #room :muted?")
    assert bob.expect("404").param(1) == "#room"
    alice.send("PRIVMSG #room :op speaks")
    assert carol.expect("PRIVMSG").last == "op speaks"
    set_mode(alice, bob, carol, mode="#room +v bob")
    bob.send("PRIVMSG #room :voiced now")
    assert carol.expect("PRIVMSG").last == "voiced now"
    assert alice.expect("PRIVMSG").last == "voiced now"
    set_mode(alice, bob, carol, mode="#room -v bob")
    bob.send("PRIVMSG #room :muted again")
    assert bob.expect("404").param(1) == "#room"


def test_invite_only_plus_i_gives_473_and_invite_lets_in(server):
    alice = server.user("alice", "#room")
    bob = server.user("bob")
    set_mode(alice, mode="#room +i")
    bob.send("JOIN #room")
    assert bob.expect("473").param(1) == "#room"
    alice.send("INVITE bob #room")
    alice.expect("341")
    bob.expect("INVITE")
    burst = bob.join("#room")
    assert any(m.command == "JOIN" and m.nick == "bob" for m in burst), burst
    # a non-operator may not invite to a +i channel
    carol = server.user("carol")
    bob.send("INVITE carol #room")
    assert bob.expect("482").param(1) == "#room"
    carol.send("JOIN #room")
    assert carol.expect("473").param(1) == "#room"


def test_key_plus_k_gives_475_without_or_with_wrong_key(server):
    alice = server.user("alice", "#room")
    bob = server.user("bob")
    set_mode(alice, mode="#room +k sesame")
    assert "k" in channel_modes(alice, "#room")
    bob.send("JOIN #room")
    assert bob.expect("475").param(1) == "#room"
    bob.send("JOIN #room wrong")
    assert bob.expect("475").param(1) == "#room"
    burst = bob.join("#room", key="sesame")
    assert any(m.command == "JOIN" and m.nick == "bob" for m in burst)
    set_mode(alice, bob, mode="#room -k sesame")
    carol = server.user("carol")
    carol.join("#room")


def test_limit_plus_l_gives_471_when_full(server):
    alice = server.user("alice", "#room")
    server.user("bob", "#room")
    set_mode(alice, mode="#room +l 2")
    carol = server.user("carol")
    carol.send("JOIN #room")
    assert carol.expect("471").param(1) == "#room"
    set_mode(alice, mode="#room -l")
    carol.join("#room")


def test_ban_plus_b_blocks_join_with_474_and_ban_list_367_368(server):
    alice = server.user("alice", "#room")
    bob = server.user("bob")
    carol = server.user("carol")
    m = set_mode(alice, mode="#room +b bob")
    assert m.param(1) == "+b" and m.param(2) == "bob!*@*", m  # normalised mask
    bob.send("JOIN #room")
    assert bob.expect("474").param(1) == "#room"
    carol.join("#room")  # others are not affected
    alice.send("MODE #room +b")
    msgs = alice.collect_until("368")
    bans = [m for m in msgs if m.command == "367"]
    assert [(b.param(1), b.param(2)) for b in bans] == [("#room", "bob!*@*")], msgs
    set_mode(alice, carol, mode="#room -b bob!*@*")
    bob.join("#room")


def test_ban_with_wildcard_host_mask(server):
    alice = server.user("alice", "#room")
    bob = server.user("bob")
    set_mode(alice, mode="#room +b *!*@127.0.0.*")
    bob.send("JOIN #room")
    assert bob.expect("474").param(1) == "#room"


def test_operator_plus_o_is_broadcast_and_grants_operator_rights(server):
    alice = server.user("alice", "#room")
    bob = server.user("bob", "#room")
    carol = server.user("carol", "#room")
    ensure_mode(alice, "#room", "t", True, bob, carol)
    alice.send("MODE #room +o bob")
    for c in (alice, bob, carol):
        m = c.expect("MODE")
        assert m.nick == "alice" and m.params[1:] == ["+o", "bob"], m
    bob.send("TOPIC #room :bob is op")
    assert carol.expect("TOPIC").last == "bob is op"
    bob.send("MODE #room -o alice")
    m = carol.expect("MODE")
    assert m.nick == "bob" and m.params[1:] == ["-o", "alice"], m
    alice.send("TOPIC #room :alice is not")
    assert alice.expect("482").param(1) == "#room"


def test_operator_and_voice_on_a_non_member_gets_441(server):
    alice = server.user("alice", "#room")
    server.user("bob")
    alice.send("MODE #room +o bob")
    assert alice.expect("441").param(1) == "bob"
    alice.send("MODE #room +v nobody")
    assert alice.expect("401", "441").param(1) == "nobody"


def test_user_mode_plus_i_and_221_and_502_for_others(server):
    alice = server.user("alice")
    server.user("bob")
    alice.send("MODE alice +i")
    m = alice.expect("MODE")
    assert m.param(0) == "alice" and "+i" in "".join(m.params[1:]), m
    alice.send("MODE alice")
    assert "i" in alice.expect("221").param(1)
    alice.send("MODE bob +i")
    alice.expect("502")
    alice.send("MODE alice -i")
    alice.expect("MODE")
    alice.send("MODE alice")
    assert "i" not in alice.expect("221").param(1)


def test_unknown_user_mode_gets_501(server):
    alice = server.user("alice")
    alice.send("MODE alice +Y")
    alice.expect("501")


def test_oper_wrong_password_464_right_381(server):
    # (ngIRCd delays a client by 10 s after a failed OPER: each failure on its own connection)
    alice = server.user("alice")
    alice.send(f"OPER {OPER_NAME} wrong")
    alice.expect("464")
    bob = server.user("bob")
    bob.send(f"OPER nosuchoper {OPER_PASSWORD}")
    bob.expect("464", "491")
    carol = server.user("carol")
    carol.send(f"OPER {OPER_NAME} {OPER_PASSWORD}")
    msgs = carol.collect_until("381")
    assert msgs[-1].param(0) == "carol"
    carol.send("MODE carol")
    assert "o" in carol.expect("221").param(1)


def test_oper_then_user_mode_shows_o(server):
    alice = server.user("alice")
    alice.send(f"OPER {OPER_NAME} {OPER_PASSWORD}")
    msgs = alice.collect_until("381")
    assert msgs[-1].param(0) == "alice"
    alice.send("MODE alice")
    assert "o" in alice.expect("221").param(1)


def test_kill_by_non_operator_gets_481(server):
    alice = server.user("alice")
    bob = server.user("bob")
    alice.send("KILL bob :no rights")
    alice.expect("481")
    bob.sync()  # bob is still connected


def test_kill_by_operator_disconnects_victim_and_peers_see_quit_once(server):
    oper = server.user("oper")
    victim = server.user("victim", "#room", "#other")
    peer = server.user("peer", "#room", "#other")
    oper.send(f"OPER {OPER_NAME} {OPER_PASSWORD}")
    oper.expect("381")
    if server.kind == "ours":  # ngIRCd silently ignores a KILL of a missing nick
        oper.send("KILL nobody :who?")
        assert oper.expect("401").param(1) == "nobody"
    oper.send("KILL victim :spamming")
    msgs = victim.expect_closed()
    assert any(m.command == "ERROR" for m in msgs), msgs
    q = peer.expect("QUIT")
    assert q.nick == "victim", q
    extra = [m for m in peer.sync() if m.command == "QUIT"]
    assert extra == [], extra
    # the server goes on serving, and the nick is free again
    again = server.user("victim", "#room")
    again.sync()
