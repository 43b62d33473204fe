"""Hostile and malformed input: over-long lines, endless lines, NUL, bare CR, invalid UTF-8, empty
lines, unknown commands, seeded fuzzing. The server must answer per RFC where it can, keep the
connection when the input is merely bad, cut it only for an endless line, and never crash (the
fixture fails a test whose server died)."""

import random

import pytest

from ircclient import IRCClient, ServerClosed


def alive_and_serving(server, *clients: IRCClient) -> None:
    """Every given client still gets answers, and a brand-new client can register."""
    for c in clients:
        c.sync()
    fresh = server.client("fresh")
    fresh.register("fresh")
    fresh.close()


@pytest.mark.ours_only("closes the connection with ERROR :Request too long instead of 417")
def test_line_over_512_bytes_gets_417_and_the_connection_goes_on(server):
    alice = server.user("alice")
    bob = server.user("bob")
    line = "PRIVMSG bob :" + "x" * (600 - len("PRIVMSG bob :"))
    alice.send(line)
    reply = alice.expect("417")
    assert reply.param(0) == "alice", reply
    alice.send("PRIVMSG bob :short one")
    got = bob.expect("PRIVMSG")
    assert got.last == "short one", f"the over-long line must be dropped, not delivered: {got}"
    alive_and_serving(server, alice, bob)


def test_line_of_exactly_512_bytes_is_accepted(server):
    alice = server.user("alice")
    bob = server.user("bob")
    head = "PRIVMSG bob :"
    text = "y" * (510 - len(head))
    alice.send(head + text)  # 510 + CRLF = 512
    got = bob.expect("PRIVMSG")
    # relayed with a prefix, the line may be cut to 512 bytes: a prefix of the text arrives
    # (ngIRCd marks the cut with "[CUT]")
    body = got.last[:-5] if server.kind == "ngircd" and got.last.endswith("[CUT]") else got.last
    assert body and text.startswith(body), got
    assert len(got.raw) <= 510, len(got.raw)
    assert alice.sync() == []


@pytest.mark.ours_only("stops reading a client whose 2 KiB buffer fills without a line end "
                       "(no ERROR, no close)")
def test_megabytes_without_newline_get_error_and_close_while_others_are_served(server):
    alice = server.user("alice", "#room")
    bob = server.user("bob", "#room")
    flood = b"PRIVMSG #room :" + b"z" * (3 * 1024 * 1024)
    try:
        alice.send_raw(flood)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server may close before taking everything
    msgs = alice.expect_closed(timeout=15)
    assert any(m.command == "ERROR" for m in msgs) or alice.reset, msgs
    q = bob.expect("QUIT")
    assert q.nick == "alice", q
    assert [m for m in bob.sync() if m.command == "PRIVMSG"] == []
    alive_and_serving(server, bob)


@pytest.mark.ours_only("keeps lines as C strings: a NUL stalls the connection's line parsing")
def test_nul_bytes_do_not_break_the_connection(server):
    alice = server.user("alice")
    bob = server.user("bob")
    alice.send_raw(b"PRIVMSG bob :nul\x00inside\r\n\x00\r\nPRIVMSG bob :after nul\r\n")
    got = [m for m in bob.collect_until(lambda m: m.command == "PRIVMSG" and m.last == "after nul")
           if m.command == "PRIVMSG"]
    # a line with a NUL is dropped or has it replaced; it never carries the NUL to others
    for m in got:
        assert b"\x00" not in m.raw, m
    alive_and_serving(server, alice, bob)


def test_bare_cr_and_bare_lf_end_lines(server):
    alice = server.user("alice")
    alice.send_raw(b"PING :cr-one\rPING :cr-two\rPING :lf-three\nPING :crlf-four\r\n")
    tokens = [alice.expect("PONG").last for _ in range(4)]
    assert tokens == ["cr-one", "cr-two", "lf-three", "crlf-four"], tokens


def test_line_split_over_many_writes_is_reassembled(server):
    alice = server.user("alice")
    bob = server.user("bob")
    for b in b"PRIVMSG bob :byte by byte\r\n":
        alice.send_raw(bytes([b]))
    assert bob.expect("PRIVMSG").last == "byte by byte"


def test_invalid_utf8_is_relayed_and_the_connection_goes_on(server):
    alice = server.user("alice")
    bob = server.user("bob")
    alice.send_raw(b"PRIVMSG bob :bad \xff\xfe\xc3 utf8 \xe2\x82\r\n")
    got = bob.expect("PRIVMSG")
    assert got.nick == "alice" and got.last.startswith("bad ") and "utf8" in got.last, got
    assert alice.sync() == []
    alive_and_serving(server, alice, bob)


def test_empty_and_blank_lines_get_no_reply(server):
    alice = server.user("alice")
    alice.send_raw(b"\r\n\r\n\n\n\r\r\n")
    assert alice.sync() == []


def test_unknown_command_gets_421(server):
    alice = server.user("alice")
    alice.send("FOOBAR with params")
    reply = alice.expect("421")
    assert reply.param(0) == "alice" and reply.param(1).upper() == "FOOBAR", reply
    alice.sync()


def test_extra_spaces_between_parameters_are_tolerated(server):
    alice = server.user("alice")
    bob = server.user("bob")
    alice.send("   PRIVMSG    bob    :spaced   text")
    got = bob.expect("PRIVMSG")
    assert got.param(0) == "bob" and got.last == "spaced   text", got


def test_message_with_prefix_from_client_is_not_spoofed(server):
    alice = server.user("alice")
    bob = server.user("bob")
    # RFC 1459 2.3: a prefix that is not the client's own is ignored (the message dropped or
    # relayed with the true source), never believed; cutting the spoofer off is fine too
    # (ngIRCd: ERROR :Spoofed prefix)
    alice.send(":bob!evil@spoof PRIVMSG bob :who sent this?")
    alice.send("PRIVMSG bob :marker")
    try:
        alice.sync()
    except ServerClosed:
        assert [m for m in bob.sync() if m.command == "PRIVMSG"] == []
        return
    got = [m for m in bob.collect_until(lambda m: m.command == "PRIVMSG" and m.last == "marker")
           if m.command == "PRIVMSG"]
    for m in got:
        assert m.nick == "alice" and "spoof" not in m.prefix, m


def test_crlf_injection_in_a_message_cannot_forge_lines(server):
    alice = server.user("alice")
    bob = server.user("bob")
    # the CR ends the line: the rest is a separate (unknown/invalid) command from alice, never
    # a server line for bob
    alice.send_raw(b"PRIVMSG bob :part one\r:irc.mailbox.local 001 bob :forged\r\n")
    got = bob.expect("PRIVMSG")
    assert got.last == "part one", got
    assert [m for m in bob.sync() if m.command == "001"] == []


def _fuzz_lines(rng: random.Random, count: int, allow_nul_and_long: bool) -> list[bytes]:
    templates = [b"PRIVMSG #fuzz :hello there", b"NOTICE bob :note", b"JOIN #fuzz", b"PART #fuzz :x",
                 b"MODE #fuzz +nt", b"TOPIC #fuzz :t", b"NAMES #fuzz", b"WHO #fuzz", b"WHOIS bob",
                 b"PING :p", b"USERHOST bob", b"ISON bob", b"MODE fuzzer +i", b"LIST", b"CAP LS 302",
                 b"KICK #fuzz bob :x", b"INVITE bob #fuzz", b"AWAY :a", b"AWAY", b"PRIVMSG bob :hi"]
    out = []
    for _ in range(count):
        kind = rng.random()
        if kind < 0.3:
            n = rng.randrange(0, 120)
            line = bytes(rng.randrange(1, 256) for _ in range(n))
        else:
            line = bytearray(rng.choice(templates))
            for _ in range(rng.randrange(1, 6)):
                op = rng.random()
                pos = rng.randrange(0, len(line) + 1)
                if op < 0.4:
                    line[pos:pos] = bytes([rng.randrange(1, 256)])
                elif op < 0.7 and line:
                    del line[min(pos, len(line) - 1)]
                elif line:
                    line[min(pos, len(line) - 1)] = rng.randrange(1, 256)
            line = bytes(line)
        if allow_nul_and_long and rng.random() < 0.05:
            line += b"\x00" + line
        if allow_nul_and_long and rng.random() < 0.03:
            line += b"L" * rng.randrange(500, 2000)
        # no line may quit or change the fuzzer's registration by accident
        line = line.replace(b"\r", b" ").replace(b"\n", b" ")
        if line.strip().upper().startswith((b"QUIT", b"NICK", b"USER", b"PASS", b"OPER")):
            line = b"X" + line
        out.append(line)
    return out


def test_seeded_fuzz_of_random_and_mutated_lines_never_kills_the_server(server, seed):
    rng = random.Random(seed)
    fuzzer = server.user("fuzzer", "#fuzz")
    bob = server.user("bob", "#fuzz")
    lines = _fuzz_lines(rng, 400, allow_nul_and_long=server.kind == "ours")
    for i in range(0, len(lines), 50):
        fuzzer.send_lines(lines[i:i + 50])
        fuzzer.sync(timeout=10)  # the connection goes on after every batch
    alive_and_serving(server, fuzzer, bob)
