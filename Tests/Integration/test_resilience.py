"""Resource limits and failures: slow consumers, clients that die mid-line, the client limit,
graceful shutdown, and keep-alive PINGs."""

import socket
import threading
import time

import pytest

from ircclient import IRCClient, pump


def test_slow_consumer_is_cut_while_healthy_members_get_every_message(start_server):
    server = start_server(sendq=8192)
    chan = "#slow"
    sender = server.user("sender", chan)
    healthy = [server.user(f"healthy{i}", chan) for i in range(2)]
    slow = server.client("slow", rcvbuf=4096)
    slow.register("slow")
    slow.join(chan)  # ... and never reads again
    for c in [sender] + healthy:
        c.collect_until(lambda m: m.command == "JOIN" and m.nick == "slow")

    quit_seen = threading.Event()
    progress = threading.Condition()
    received = {h.name: 0 for h in healthy}
    results: dict[str, tuple[list[int], int, str]] = {}

    def reader(client: IRCClient) -> None:
        seqs: list[int] = []
        quits = 0
        error = ""
        try:
            while True:
                m = client.expect("PRIVMSG", "QUIT", timeout=60)
                if m.command == "QUIT":
                    if m.nick == "slow":
                        quits += 1
                        quit_seen.set()
                    continue
                if m.last == "END":
                    break
                seqs.append(int(m.last.split(" ", 1)[0]))
                if len(seqs) % 50 == 0:
                    with progress:
                        received[client.name] = len(seqs)
                        progress.notify_all()
        except AssertionError as e:  # reported below
            error = str(e)
        with progress:
            received[client.name] = 1 << 60  # done (or failed): never hold the sender back
            progress.notify_all()
        results[client.name] = (seqs, quits, error)

    threads = [threading.Thread(target=reader, args=(h,), daemon=True) for h in healthy]
    for t in threads:
        t.start()
    payload = "p" * 380
    sent = 0
    batch = 100
    window = 300  # the sender runs at most this far ahead of the healthy readers (~120 KB)
    max_messages = 40_000  # ~16 MB: far beyond the send queue and the kernel's socket buffers
    deadline = time.monotonic() + 60
    while not quit_seen.is_set() and sent < max_messages and time.monotonic() < deadline:
        with progress:
            progress.wait_for(lambda: min(received.values()) >= sent - window or quit_seen.is_set(),
                              timeout=max(0.0, deadline - time.monotonic()))
        sender.send_lines([f"PRIVMSG {chan} :{sent + i} {payload}" for i in range(batch)])
        sent += batch
        sender.drain()  # the sender reads too (JOIN/QUIT), so it is never a slow consumer itself
    # the cut may take a moment to show (a server may try to flush its farewell for a while)
    quit_seen.wait(max(0.0, deadline - time.monotonic()) + 15)
    sender.send(f"PRIVMSG {chan} :END")
    for t in threads:
        t.join(90)
    assert quit_seen.is_set(), f"the slow consumer was not disconnected after {sent} messages"
    for h in healthy:
        seqs, quits, error = results[h.name]
        assert not error, error
        assert quits == 1, f"{h.name} saw the slow client's QUIT {quits} times"
        assert seqs == list(range(sent)), \
            f"{h.name} got {len(seqs)} of {sent} messages (first gap at {_first_gap(seqs)})"
    # the slow client's connection is closed: what is buffered, then EOF (or a reset)
    rest = slow.expect_closed(timeout=30)
    assert slow.eof, rest[-3:]
    sender.sync()


def _first_gap(seqs: list[int]):
    for i, s in enumerate(seqs):
        if s != i:
            return i
    return None


@pytest.mark.parametrize("how", ["reset", "close"])
def test_client_killed_mid_line_is_seen_quitting_once_and_its_partial_line_is_dropped(server, how):
    alice = server.user("alice", "#room", "#other")
    bob = server.user("bob", "#room")
    victim = server.user("victim", "#room", "#other")
    victim.send_raw(b"PRIVMSG #room :partial line that never ends")
    if how == "reset":
        victim.abort()  # SO_LINGER 0: RST
    else:
        victim.close()
    q = alice.expect("QUIT")
    assert q.nick == "victim", q
    assert bob.expect("QUIT").nick == "victim"
    bob.send("PRIVMSG #room :marker")
    before = alice.collect_until(lambda m: m.command == "PRIVMSG" and m.last == "marker")
    assert [m for m in before if m.command == "QUIT"] == [], f"second QUIT: {before}"
    assert [m for m in before[:-1] if m.command == "PRIVMSG"] == [], f"partial line delivered: {before}"
    again = server.user("victim", "#room")  # the nick is free, the server serves
    assert alice.expect("JOIN").nick == "victim"
    again.sync()


def test_many_clients_reset_at_once_each_quit_seen_once(server):
    watcher = server.user("watcher", "#crowd")
    victims = [server.user(f"v{i:02d}", "#crowd") for i in range(12)]
    watcher.collect_until(lambda m: m.command == "JOIN" and m.nick == "v11")
    for v in victims:
        v.send_raw(b"PRIVMSG #crowd :half")
        v.abort()
    quits: dict[str, int] = {}
    while len(quits) < len(victims):
        m = watcher.expect("QUIT")
        quits[m.nick] = quits.get(m.nick, 0) + 1
    extra = [m for m in watcher.sync() if m.command in ("QUIT", "PRIVMSG")]
    assert extra == [] and set(quits.values()) == {1}, (quits, extra)


def test_max_clients_refuses_the_next_connection_with_error(start_server):
    server = start_server(max_clients=2)
    first = server.user("first")
    server.user("second")
    third = server.client("third")
    msgs = third.expect_closed()
    assert any(m.command == "ERROR" for m in msgs) or third.reset, msgs
    first.send("QUIT :making room")
    first.expect_closed()
    # the freed slot is usable once the server has processed the close (bounded retries)
    deadline = time.monotonic() + 5
    while True:
        c = server.client("fourth")
        c.send_lines(["NICK fourth", "USER fourth 0 * :Fourth"])
        m = c.expect("001", "ERROR")
        if m.command == "001":
            break
        c.close()  # each try is a full round trip with the server, so no pacing is needed
        assert time.monotonic() < deadline, "the freed slot was never reusable"


def test_graceful_shutdown_sends_error_to_every_client_then_eof_and_exits_0(server):
    members = [server.user(f"m{i}", "#room") for i in range(3)]
    loner = server.user("loner")
    unregistered = server.client("unreg")
    unregistered.send("NICK halfway")
    unregistered.send("PING :x")
    unregistered.expect("PONG", "451")  # any answer: the server has this connection
    members[0].sync()
    code_box = []
    stopper = threading.Thread(target=lambda: code_box.append(server.terminate(timeout=15)), daemon=True)
    stopper.start()
    outcomes = {c.name: c.expect_closed(timeout=15) for c in members + [loner, unregistered]}
    stopper.join(20)
    for name, msgs in outcomes.items():
        errors = [m for m in msgs if m.command == "ERROR"]
        assert errors, f"{name}: no ERROR before EOF: {msgs}; exit code {code_box}\n{server.crash_summary()}"
        assert msgs[-1].command == "ERROR", f"{name}: ERROR must be the last line: {msgs}"
        if server.kind == "ours":
            assert "shutting down" in errors[-1].last.lower(), errors[-1]
    assert code_box == [0], f"exit code {code_box}\n{server.crash_summary() or server.log_tail()}"
    with pytest.raises(OSError):
        socket.create_connection((server.host, server.port), timeout=2).close()


def test_ping_keepalive_drops_a_silent_client_and_keeps_one_that_answers(start_server):
    server = start_server(ping_interval=1, ping_timeout=2)
    interval = max(5, 1) if server.kind == "ngircd" else 1  # ngIRCd's minimum is 5 s each
    timeout = max(5, 2) if server.kind == "ngircd" else 2
    bound = interval + timeout + 10
    silent = server.client("silent", auto_pong=False)
    silent.register("silent")
    silent.join("#keep")
    answerer = server.user("answerer", "#keep")
    peer = server.user("peer", "#keep")
    everyone = [silent, answerer, peer]

    pump(everyone, lambda: silent.eof, timeout=bound)
    silent_msgs = list(silent.pending)
    assert any(m.command == "PING" for m in silent_msgs), f"no PING before the drop: {silent_msgs}"
    assert any(m.command == "ERROR" for m in silent_msgs), f"no ERROR before EOF: {silent_msgs}"
    pump([answerer, peer], lambda: any(m.command == "QUIT" and m.nick == "silent" for m in peer.pending),
         timeout=5)
    # the answering client was pinged and is still here after the silent one was dropped;
    # it survives one more PING round too
    pings = lambda: sum(1 for m in answerer.history if m.command == "PING")  # noqa: E731
    assert pings() >= 1, answerer.history[-10:]
    target = pings() + 1
    pump([answerer, peer], lambda: pings() >= target, timeout=bound)
    assert not answerer.eof
    answerer.pending.clear()
    answerer.sync()
    peer.pending.clear()
    peer.sync()
