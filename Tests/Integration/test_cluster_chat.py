"""The chat server on several nodes: a nats-server with JetStream started by the test, three
`chat-server --cluster` processes on --port 0, and real clients on different nodes (the raw
line client, and two PyPI `irc` library bots).

Scenarios: a shared channel (lines cross nodes, NAMES shows everyone), a nick collision across
nodes (433), PRIVMSG and WHOIS across nodes, and a node killed with SIGKILL (its users QUIT once
on the others, the survivors keep chatting, its nicks are free again, and a node started again
in its place serves again). Everything waits on events (lines printed, replies) under generous
deadlines; a failure says what was awaited and shows the servers' logs.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid

import pytest

from ircclient import DEFAULT_TIMEOUT
from servers import ServerProcess, ServerOptions, _free_port

#: Deadline for cluster events (a node found, a node downed, a line across nodes).
CLUSTER_TIMEOUT = float(os.environ.get("CHAT_CLUSTER_TIMEOUT", "30"))


def _nats_binary() -> str | None:
    for candidate in (os.environ.get("MAILBOX_NATS_SERVER_BIN"), shutil.which("nats-server"), "/usr/sbin/nats-server"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


class NATSServer:
    """A nats-server with JetStream on a free loopback port, its store in a temporary directory."""

    def __init__(self, binary: str):
        self.dir = tempfile.mkdtemp(prefix="chat-nats-")
        self.port = _free_port()
        self.url = f"nats://127.0.0.1:{self.port}"
        self.log_path = os.path.join(self.dir, "nats.log")
        self.proc = subprocess.Popen([binary, "-a", "127.0.0.1", "-p", str(self.port), "-js", "-sd", self.dir,
                                      "-l", self.log_path], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + CLUSTER_TIMEOUT
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"nats-server did not open port {self.port} (exit {self.proc.poll()}); "
                                       f"log:\n{self.log_tail()}")
                time.sleep(0.05)

    def log_tail(self, n: int = 30) -> str:
        try:
            with open(self.log_path, "rb") as f:
                return "\n".join(f.read().decode("utf-8", "replace").splitlines()[-n:])
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def chat_cluster(request):
    """Factory: chat_cluster(n) -> [ServerProcess] of n chat-server nodes on one NATS server,
    each having found the others. `start_node(name)` starts one more (or one again)."""
    if request.config.getoption("--server") != "ours":
        pytest.skip("several nodes are chat-server's own (ngIRCd links servers its own way)")
    binary = _nats_binary()
    if binary is None:
        if os.environ.get("IRC_REQUIRE_CLIENTS"):
            pytest.fail("nats-server is not installed (apt-get install nats-server)")
        pytest.skip("nats-server is not installed")
    chat = request.config.getoption("--chat-server")
    nats = NATSServer(binary)
    cluster_name = "chat" + uuid.uuid4().hex[:8]
    started: list[ServerProcess] = []

    def start_node(name: str) -> ServerProcess:
        options = ServerOptions(server_name=f"{name}.chat.test",
                                extra_args=["--cluster", nats.url, "--node-name", name, "--cluster-name", cluster_name,
                                            "--verbose"])
        node = ServerProcess("ours", options, chat)
        node.node_name = name
        started.append(node)
        return node

    def start(count: int) -> list[ServerProcess]:
        nodes = [start_node(f"n{i + 1}") for i in range(count)]
        for node in nodes:
            node.wait_for_lines(r"chat-server: node \S+ up$", count=count - 1, timeout=CLUSTER_TIMEOUT)
        return nodes

    start.start_node = start_node
    yield start

    failed = getattr(request.node, "rep_call", None) is not None and request.node.rep_call.failed
    problems = [f"{n.node_name} exited during the test with code {n.proc.poll()}"
                for n in started if not n.signalled and not n.alive()]
    if failed or problems:
        for node in started:
            print(f"\n----- {node.node_name} log (tail) -----\n{node.log_tail(80)}")
        print(f"\n----- nats-server log (tail) -----\n{nats.log_tail()}\n-----")
    for node in started:
        node.cleanup()
    nats.stop()
    if problems:
        pytest.fail("; ".join(problems))


def names(client, channel: str) -> list[str]:
    """NAMES `channel` as `client` sees it, without the @/+ prefixes, sorted."""
    client.send(f"NAMES {channel}")
    replies = client.collect_until("366")
    return sorted(n.lstrip("@+") for m in replies if m.command == "353" for n in m.last.split())


def wait_for_names(client, channel: str, expected: list[str]) -> None:
    """Asks NAMES until it shows `expected` (another node's JOIN may still be on its way)."""
    deadline = time.monotonic() + CLUSTER_TIMEOUT
    while (seen := names(client, channel)) != sorted(expected):
        assert time.monotonic() < deadline, f"{client.name}: NAMES {channel} is {seen}, not {sorted(expected)}"
        time.sleep(0.05)


def test_shared_channel_lines_cross_nodes_and_names_shows_everyone(chat_cluster):
    n1, n2, n3 = chat_cluster(3)
    alice = n1.user("alice", "#mesh")
    bob = n2.user("bob")
    carol = n3.user("carol")
    wait_for_names(bob, "#mesh", ["alice"])        # n2's copy of #mesh has alice
    bob.join("#mesh")
    carol.join("#mesh")
    for client in (alice, bob, carol):
        wait_for_names(client, "#mesh", ["alice", "bob", "carol"])
    alice.drain(); bob.drain(); carol.drain()

    for i in range(20):
        alice.send(f"PRIVMSG #mesh :from n1 {i}")
    for client in (bob, carol):
        got = [m.last for m in client.collect_until(lambda m: m.command == "PRIVMSG" and m.last == "from n1 19",
                                                    timeout=CLUSTER_TIMEOUT) if m.command == "PRIVMSG"]
        assert got == [f"from n1 {i}" for i in range(20)], f"{client.name} got {got}"
    carol.send("PRIVMSG #mesh :from n3")
    for client in (alice, bob):
        m = client.expect(lambda m: m.command == "PRIVMSG" and m.last == "from n3", timeout=CLUSTER_TIMEOUT)
        assert m.nick == "carol"
    assert [m for m in carol.sync() if m.command == "PRIVMSG"] == [], "the sender saw its own line"

    alice.send("TOPIC #mesh :across nodes")      # alice made #mesh: its operator
    for client in (bob, carol):
        m = client.expect("TOPIC", timeout=CLUSTER_TIMEOUT)
        assert m.nick == "alice" and m.last == "across nodes"
    bob.send("PART #mesh :later")
    for client in (alice, carol):
        m = client.expect("PART", timeout=CLUSTER_TIMEOUT)
        assert m.nick == "bob"
    wait_for_names(alice, "#mesh", ["alice", "carol"])


def test_nick_collision_across_nodes_is_433(chat_cluster):
    n1, n2, _ = chat_cluster(3)
    n1.user("Alice")
    impostor = n2.client("impostor")
    impostor.send_lines(["NICK alice", "USER x 0 * :X"])
    m = impostor.expect("433", timeout=CLUSTER_TIMEOUT)
    assert m.param(1) == "alice", m
    impostor.send("NICK ALICE")
    impostor.expect("433", timeout=CLUSTER_TIMEOUT)
    impostor.send("NICK imp")
    impostor.expect("376", "422", timeout=CLUSTER_TIMEOUT)


def test_privmsg_notice_and_whois_reach_a_nick_on_another_node(chat_cluster):
    n1, n2, _ = chat_cluster(3)
    alice = n1.user("alice", "#x")
    bob = n2.user("bob")
    wait_for_names(bob, "#x", ["alice"])
    bob.join("#x")
    bob.send("AWAY :at lunch")
    bob.expect("306")
    # bob's record (away) and membership reach n1 in order; WHOIS until it shows both.
    deadline = time.monotonic() + CLUSTER_TIMEOUT
    while True:
        alice.send("WHOIS bob")
        reply = alice.collect_until("318")
        codes = {m.command: m for m in reply}
        if "311" in codes and "319" in codes and "301" in codes:
            break
        assert time.monotonic() < deadline, f"WHOIS bob on n1: {reply}"
        time.sleep(0.05)
    assert codes["311"].param(2) == "~bob", codes["311"]
    assert codes["319"].last.strip() == "#x", codes["319"]
    assert codes["312"].param(2) == "n2", codes["312"]
    assert codes["301"].last == "at lunch"

    alice.send("PRIVMSG bob :psst")
    alice.send("NOTICE bob :noted")
    m = bob.expect("PRIVMSG", timeout=CLUSTER_TIMEOUT)
    assert (m.nick, m.param(0), m.last) == ("alice", "bob", "psst")
    m = bob.expect("NOTICE", timeout=CLUSTER_TIMEOUT)
    assert (m.nick, m.last) == ("alice", "noted")
    assert alice.expect("301").last == "at lunch"     # away reply for the PRIVMSG
    bob.send("PRIVMSG alice :back")
    assert alice.expect("PRIVMSG", timeout=CLUSTER_TIMEOUT).last == "back"
    alice.send("PRIVMSG nobody :hm")
    assert alice.expect("401").param(1) == "nobody"


def test_killed_node_users_quit_once_survivors_keep_chatting_and_a_restarted_node_serves(chat_cluster):
    n1, n2, n3 = chat_cluster(3)
    alice = n1.user("alice", "#a", "#b")
    carol = n3.user("carol")
    bob = n2.user("bob")
    betty = n2.user("betty")
    # Each joins once its node's copy of the channel has the members before it.
    wait_for_names(carol, "#a", ["alice"])
    carol.join("#a")
    wait_for_names(bob, "#a", ["alice", "carol"])
    bob.join("#a")
    bob.join("#b")
    wait_for_names(betty, "#b", ["alice", "bob"])
    betty.join("#b")
    wait_for_names(alice, "#a", ["alice", "bob", "carol"])
    wait_for_names(alice, "#b", ["alice", "betty", "bob"])
    wait_for_names(carol, "#a", ["alice", "bob", "carol"])
    alice.drain(); carol.drain()

    n2.proc.send_signal(signal.SIGKILL)
    n2.signalled = True
    killed_at = time.monotonic()
    # alice shares #a and #b with bob, #b with betty: one QUIT each. carol: one for bob.
    for client, gone in ((alice, {"bob", "betty"}), (carol, {"bob"})):
        seen: list[str] = []
        while set(seen) != gone:
            m = client.expect("QUIT", timeout=CLUSTER_TIMEOUT)
            seen.append(m.nick)
        quits = seen + [m.nick for m in client.sync() if m.command == "QUIT"]
        assert sorted(quits) == sorted(gone), f"{client.name} saw QUITs {quits}"
    print(f"QUITs seen {time.monotonic() - killed_at:.2f}s after SIGKILL")
    for node in (n1, n3):
        node.wait_for_lines(r"chat-server: node n2:\S+ down: \d+ of its users quit", timeout=CLUSTER_TIMEOUT)

    alice.send("PRIVMSG #a :still here")
    assert carol.expect("PRIVMSG", timeout=CLUSTER_TIMEOUT).last == "still here"
    carol.send("PRIVMSG alice :me too")
    assert alice.expect("PRIVMSG", timeout=CLUSTER_TIMEOUT).last == "me too"
    assert names(alice, "#a") == ["alice", "carol"]
    assert names(alice, "#b") == ["alice"]

    # bob's nick was released by the survivors: it can be taken on n1 now (the release is a
    # KV write on its way: ask again until it is done).
    newbob = n1.client("newbob")
    newbob.send_lines(["NICK bob", "USER nb 0 * :NB"])
    deadline = time.monotonic() + CLUSTER_TIMEOUT
    while (m := newbob.expect(lambda m: m.command in ("433", "001"), timeout=CLUSTER_TIMEOUT)).command == "433":
        assert time.monotonic() < deadline, "bob's nick stayed taken after its node was killed"
        time.sleep(0.1)
        newbob.send("NICK bob")

    # A node started again in n2's place (a new incarnation) serves and shares the channels.
    n2b = chat_cluster.start_node("n2")
    n2b.wait_for_lines(r"chat-server: node \S+ up$", count=2, timeout=CLUSTER_TIMEOUT)
    dave = n2b.user("dave")
    wait_for_names(dave, "#a", ["alice", "carol"])
    dave.join("#a")
    for client in (alice, carol):
        assert client.expect("JOIN", timeout=CLUSTER_TIMEOUT).nick == "dave"
    dave.send("PRIVMSG #a :back on n2")
    for client in (alice, carol):
        assert client.expect("PRIVMSG", timeout=CLUSTER_TIMEOUT).last == "back on n2"
    alice.send("PRIVMSG #a :welcome dave")
    assert dave.expect("PRIVMSG", timeout=CLUSTER_TIMEOUT).last == "welcome dave"


def test_irc_library_bots_on_two_nodes_talk_in_a_channel_and_privately(chat_cluster):
    irc_client = pytest.importorskip("irc.client", reason="the PyPI 'irc' package is not installed")
    n1, n2 = chat_cluster(2)
    reactor = irc_client.Reactor()
    events: list[tuple] = []
    reactor.add_global_handler("all_events", lambda c, e: events.append(
        (c.get_nickname(), e.type, getattr(e.source, "nick", None), tuple(e.arguments))), -10)

    def run_until(condition, what: str):
        deadline = time.monotonic() + CLUSTER_TIMEOUT
        while not condition():
            assert time.monotonic() < deadline, f"timed out waiting for {what}; events: {events[-15:]}"
            reactor.process_once(timeout=0.1)

    def has(bot, kind, source=None, text=None):
        return any(e[0] == bot and e[1] == kind and (source is None or e[2] == source) and
                   (text is None or (e[3] and e[3][0] == text)) for e in events)

    one = reactor.server().connect(n1.host, n1.port, "libone", ircname="Bot on n1")
    two = reactor.server().connect(n2.host, n2.port, "libtwo", ircname="Bot on n2")
    try:
        run_until(lambda: has("libone", "welcome") and has("libtwo", "welcome"), "both welcomes")
        one.join("#lib")
        run_until(lambda: has("libone", "endofnames"), "libone's JOIN")
        # n2's copy of #lib learns of libone's JOIN on its own time: join once it is there.
        two.names(["#lib"])
        run_until(lambda: any(e[0] == "libtwo" and e[1] == "namreply" and "libone" in e[3][-1] for e in events) or
                  (two.names(["#lib"]) and False), "#lib with libone on n2")
        two.join("#lib")
        run_until(lambda: has("libone", "join", "libtwo"), "libone to see libtwo join")
        one.privmsg("#lib", "hello from n1")
        run_until(lambda: has("libtwo", "pubmsg", "libone", "hello from n1"), "the line on n2")
        two.privmsg("libone", "privately from n2")
        run_until(lambda: has("libone", "privmsg", "libtwo", "privately from n2"), "the private line on n1")
        two.quit("bye from n2")
        run_until(lambda: has("libone", "quit", "libtwo"), "libone to see libtwo quit")
    finally:
        for c in (one, two):
            if c.is_connected():
                c.disconnect("test over")
