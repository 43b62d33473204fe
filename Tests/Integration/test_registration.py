"""Connection registration: NICK/USER, the welcome burst, ISUPPORT, MOTD, CAP, PASS, and the
errors of misuse before and during registration (RFC 2812 section 3.1, 5)."""

import pytest

from ircclient import Message
from servers import SERVER_NAME


def isupport(burst: list[Message]) -> dict:
    """ISUPPORT tokens of all 005 lines: {"CASEMAPPING": "rfc1459", "EXCEPTS": "", ...}."""
    tokens = {}
    for m in burst:
        if m.command == "005":
            for tok in m.params[1:-1]:
                key, _, value = tok.partition("=")
                tokens[key.upper()] = value
    return tokens


def test_nick_user_registration_sends_001_to_005_addressed_to_the_nick(server):
    c = server.client("alice")
    burst = c.register("alice")
    commands = [m.command for m in burst]
    for code in ("001", "002", "003", "004", "005"):
        assert code in commands, f"missing {code} in {commands}"
    # 001..005 come first and in order
    firsts = [c for c in commands if c in ("001", "002", "003", "004")]
    assert firsts == ["001", "002", "003", "004"], commands
    assert commands.index("004") < commands.index("005")
    for m in burst:
        if m.command in ("001", "002", "003", "004", "005"):
            assert m.param(0) == "alice", m
            assert m.prefix == SERVER_NAME, m
    welcome = next(m for m in burst if m.command == "001")
    # RPL_WELCOME ends with the full client identifier nick!user@host
    assert "alice!" in welcome.last and "@" in welcome.last, welcome
    my_info = next(m for m in burst if m.command == "004")
    assert my_info.param(1) == SERVER_NAME, my_info


def test_isupport_has_the_keys_clients_need(server):
    c = server.client("alice")
    tokens = isupport(c.register("alice"))
    for key in ("CASEMAPPING", "CHANTYPES", "PREFIX", "NICKLEN", "CHANMODES"):
        assert key in tokens, f"{key} not in ISUPPORT {tokens}"
    assert "#" in tokens["CHANTYPES"]
    assert "(" in tokens["PREFIX"] and "o" in tokens["PREFIX"] and "v" in tokens["PREFIX"]


@pytest.mark.ours_only("advertises CASEMAPPING=ascii, CHANTYPES=#&+, PREFIX=(qaohv)~&@%+")
def test_isupport_advertises_rfc1459_casemapping_hash_channels_and_ov_prefixes(server):
    c = server.client("alice")
    tokens = isupport(c.register("alice"))
    assert tokens.get("CASEMAPPING") == "rfc1459", tokens
    assert tokens.get("CHANTYPES") == "#", tokens
    assert tokens.get("PREFIX") == "(ov)@+", tokens
    assert tokens.get("NETWORK") == "Mailbox", tokens


def test_registration_ends_with_motd_or_no_motd_error(server):
    c = server.client("alice")
    burst = c.register("alice")
    last = burst[-1]
    assert last.command in ("376", "422"), last
    if last.command == "376":
        commands = [m.command for m in burst]
        assert "375" in commands and commands.index("375") < len(commands) - 1


def test_motd_file_lines_are_sent_between_375_and_376(start_server):
    server = start_server(motd="First line of the integration MOTD\nSecond line, with more words\n")
    c = server.client("alice")
    burst = c.register("alice")
    commands = [m.command for m in burst]
    assert "375" in commands and commands[-1] == "376", commands
    start = commands.index("375")
    body = [m for m in burst[start + 1:-1] if m.command == "372"]
    text = "\n".join(m.last for m in body)
    assert "First line of the integration MOTD" in text and "Second line, with more words" in text, body
    assert all(m.param(0) == "alice" for m in body)
    # MOTD on request gives the same
    c.send("MOTD")
    again = c.collect_until("376")
    assert "First line of the integration MOTD" in "\n".join(m.last for m in again)


def test_lusers_replies_with_user_counts(server):
    c = server.client("alice")
    c.register("alice")
    server.user("bob")
    c.send("LUSERS")
    replies = c.sync()
    codes = {m.command for m in replies}
    assert "251" in codes, replies
    assert "255" in codes, replies


def test_cap_ls_req_end_negotiation_holds_registration_until_cap_end(server):
    c = server.client("alice")
    c.send("CAP LS 302")
    c.send_lines(["NICK alice", "USER alice 0 * :Alice"])
    ls = c.expect("CAP")
    assert ls.param(1) == "LS", ls
    if server.kind == "ours":
        assert ls.last.strip() == "", f"chat-server offers no capabilities: {ls}"
    c.send("CAP REQ :x-no-such-capability")
    before = c.collect_until(lambda m: m.command == "CAP" and m.param(1) == "NAK")
    nak = before[-1]
    assert nak.last.strip() == "x-no-such-capability", nak
    assert not any(m.command == "001" for m in before), f"registered before CAP END: {before}"
    c.send("CAP END")
    burst = c.collect_until("376", "422")
    assert any(m.command == "001" and m.param(0) == "alice" for m in burst), burst


def test_cap_list_and_unknown_subcommand(server):
    c = server.client("alice")
    c.register("alice")
    c.send("CAP LIST")
    reply = c.expect("CAP", "410")
    if reply.command == "CAP":
        assert reply.param(1) == "LIST", reply
    c.send("CAP FROB")
    reply = c.expect("410")
    assert reply.param(1).upper() == "FROB", reply


def assert_password_refused(server, commands, msgs):
    assert "001" not in commands, msgs
    if server.kind == "ngircd":
        # ngIRCd only sends "ERROR :Access denied: Bad password?" (no 464) before closing.
        assert "464" in commands or "ERROR" in commands, msgs
    else:
        assert "464" in commands, msgs


def test_password_required_without_pass_gives_464_and_no_welcome(start_server):
    server = start_server(password="s3cret")
    c = server.client("alice")
    c.send_lines(["NICK alice", "USER alice 0 * :Alice"])
    msgs = c.expect_closed()
    commands = [m.command for m in msgs]
    assert_password_refused(server, commands, msgs)


def test_password_wrong_gives_464_and_no_welcome(start_server):
    server = start_server(password="s3cret")
    c = server.client("alice")
    c.send_lines(["PASS wrong", "NICK alice", "USER alice 0 * :Alice"])
    msgs = c.expect_closed()
    commands = [m.command for m in msgs]
    assert_password_refused(server, commands, msgs)


def test_password_right_registers(start_server):
    server = start_server(password="s3cret")
    c = server.client("alice")
    burst = c.register("alice", password="s3cret")
    assert burst[0].command == "001" or any(m.command == "001" for m in burst)


@pytest.mark.parametrize("command", ["JOIN #room", "PRIVMSG bob :hi", "MODE #room", "WHOIS bob", "TOPIC #room"])
def test_commands_before_registration_get_451(server, command):
    c = server.client("early")
    c.send(command)
    reply = c.expect("451")
    assert reply.prefix == SERVER_NAME


@pytest.mark.parametrize("nick", ["1abc", "-abc", "#abc", "ab!c", "ab@c", "a,b", "a*b", "a:b"])
def test_invalid_nick_gets_432(server, nick):
    c = server.client("bad")
    c.send(f"NICK {nick}")
    reply = c.expect("432")
    assert reply.param(1) == nick, reply


def test_nick_with_specials_is_accepted(server):
    c = server.client("sp")
    burst = c.register("[a]\\`_^{|", user="special")
    assert burst[0].command == "001" and burst[0].param(0) == "[a]\\`_^{|", burst[0]


def test_nick_in_use_gets_433_also_in_other_case(server):
    server.user("Alice")
    c = server.client("second")
    c.send("NICK Alice")
    assert c.expect("433").param(1) == "Alice"
    c.send("NICK aLiCe")
    assert c.expect("433").param(1) == "aLiCe"
    # a free nick then registers
    burst = c.register("alice2")
    assert any(m.command == "001" for m in burst)


@pytest.mark.ours_only("uses CASEMAPPING=ascii, so [ and { are different characters there")
def test_nick_in_use_is_case_insensitive_per_rfc1459(server):
    server.user("Foo[")
    c = server.client("second")
    c.send("NICK foo{")
    assert c.expect("433").param(1) == "foo{"
    server.user("ba\\r")
    c.send("NICK BA|R")
    assert c.expect("433").param(1) == "BA|R"


def test_nick_change_to_a_taken_nick_gets_433(server):
    server.user("alice")
    b = server.user("bob")
    b.send("NICK ALICE")
    assert b.expect("433").param(1) == "ALICE"


def test_nick_without_parameter_gets_431(server):
    c = server.client("x")
    c.send("NICK")
    # RFC 2812: ERR_NONICKNAMEGIVEN; ngIRCd answers 461 (need more params) instead
    c.expect("431", *(["461"] if server.kind == "ngircd" else []))


def test_user_with_too_few_parameters_gets_461(server):
    c = server.client("x")
    c.send("NICK alice")
    c.send("USER alice 0")
    reply = c.expect("461")
    assert reply.param(1) == "USER", reply


def test_user_twice_gets_462(server):
    c = server.user("alice")
    c.send("USER again 0 * :Again")
    c.expect("462")


@pytest.mark.parametrize("command,name", [("JOIN", "JOIN"), ("PART", "PART"), ("MODE", "MODE"),
                                           ("TOPIC", "TOPIC"), ("KICK #c", "KICK"), ("INVITE bob", "INVITE"),
                                           ("OPER operuser", "OPER"), ("USERHOST", "USERHOST"),
                                           ("ISON", "ISON"), ("KILL", "KILL")])
def test_missing_parameters_get_461_naming_the_command(server, command, name):
    c = server.user("alice")
    c.send(command)
    reply = c.expect("461")
    assert reply.param(1).upper() == name, reply


def test_ping_is_answered_with_pong_carrying_the_token(server):
    c = server.user("alice")
    c.send("PING :hello-token")
    pong = c.expect("PONG")
    assert pong.last == "hello-token", pong
    c.send("PING")
    c.expect("409")


def test_quit_before_registration_gets_error_and_close(server):
    c = server.client("x")
    c.send("NICK alice")
    c.send("QUIT :bye")
    msgs = c.expect_closed()
    assert msgs and msgs[-1].command == "ERROR", msgs


def test_quit_after_registration_gets_error_and_close(server):
    c = server.user("alice")
    c.send("QUIT :bye")
    msgs = c.expect_closed()
    assert msgs and msgs[-1].command == "ERROR", msgs


def test_version_and_time_reply(server):
    c = server.user("alice")
    c.send("VERSION")
    v = c.expect("351")
    assert v.param(0) == "alice", v
    c.send("TIME")
    t = c.expect("391")
    assert t.param(1) == SERVER_NAME, t


@pytest.mark.ours_only("has no registration timeout setting")
def test_unregistered_connection_is_closed_after_registration_timeout(start_server):
    server = start_server(registration_timeout=1)
    c = server.client("idle")
    msgs = c.expect_closed(timeout=10)
    assert any(m.command == "ERROR" for m in msgs), msgs
    # a client that registers in time is not affected
    d = server.user("alice")
    d.sync()


@pytest.mark.ours_only("uses CASEMAPPING=ascii, so [] and {} differ in channel names there")
def test_channel_names_are_case_insensitive_per_rfc1459(server):
    alice = server.user("alice", "#Chan[x]\\~")
    bob = server.user("bob")
    bob.send("JOIN #chan{x}|^")
    burst = bob.collect_until("366")
    names = [n for m in burst if m.command == "353" for n in m.last.split()]
    assert sorted(names) == ["@alice", "bob"], burst
    m = alice.expect("JOIN")
    assert m.nick == "bob", m


@pytest.mark.ours_only("ready line is chat-server's own")
def test_ready_line_is_exactly_one_line_naming_the_bound_address(server):
    assert server.stdout_lines[0] == f"chat-server listening on 127.0.0.1:{server.port}"
    assert server.port > 0
