"""Real IRC clients against the server: Debian's `ii` (file/FIFO based) and `irssi` (under tmux,
driven with send-keys, read with capture-pane). A raw-socket client sits in the same channel and
checks what the real client sends; the real client's files/screen show what the raw one sent.

The servers run with their default flood control here, as real users meet it.
"""

import os
import shutil
import subprocess
import tempfile
import time

import pytest

from ircclient import DEFAULT_TIMEOUT

REQUIRE = os.environ.get("IRC_REQUIRE_CLIENTS") == "1"  # run.sh sets it: a missing client fails
# Flood control stays on here: ngIRCd delays a client's burst of commands by seconds (irssi's
# connect burst takes ~7 s to be served), so waits on the real clients are longer.
SLOW = DEFAULT_TIMEOUT * 6


def need(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        if REQUIRE:
            pytest.fail(f"{tool} is not installed")
        pytest.skip(f"{tool} is not installed (Tests/Integration/run.sh installs it)")
    return path


def wait_for(condition, what: str, timeout: float = DEFAULT_TIMEOUT * 6):
    """Polls `condition()` (a file or the screen: no event to wait on) until true or the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def read(path: str) -> str:
    try:
        with open(path, "r", errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def fifo_write(path: str, line: str) -> None:
    """Writes one line into a FIFO that the client holds open for reading."""
    fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


@pytest.fixture
def workdir():
    d = tempfile.mkdtemp(prefix="irc-client-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def test_ii_joins_talks_receives_and_quits(start_server, workdir):
    ii = need("ii")
    server = start_server(flood_control=True)
    raw = server.user("rawuser", "#iitest")
    log = open(os.path.join(workdir, "ii.stdout"), "wb")
    proc = subprocess.Popen([ii, "-i", workdir, "-s", server.host, "-p", str(server.port),
                             "-n", "iiuser", "-f", "ii user"],
                            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    try:
        base = os.path.join(workdir, server.host)
        # ii creates its "in" FIFO after sending NICK/USER; a first server line in "out" means
        # the server answered the registration
        wait_for(lambda: os.path.exists(os.path.join(base, "in")) and read(os.path.join(base, "out")),
                 "ii to connect")
        fifo_write(os.path.join(base, "in"), "/j #iitest")
        join = raw.expect(lambda m: m.command == "JOIN" and m.nick == "iiuser", timeout=SLOW)
        assert join.param(0) == "#iitest", join
        chan_in = os.path.join(base, "#iitest", "in")
        wait_for(lambda: os.path.exists(chan_in), "ii's channel FIFO")
        fifo_write(chan_in, "hello from ii")
        m = raw.expect("PRIVMSG", timeout=SLOW)
        assert m.nick == "iiuser" and m.param(0) == "#iitest" and m.last == "hello from ii", m

        raw.send("PRIVMSG #iitest :hello from raw")
        raw.send("PRIVMSG iiuser :private from raw")
        chan_out = os.path.join(base, "#iitest", "out")
        wait_for(lambda: "<rawuser> hello from raw" in read(chan_out), "ii's channel out to show raw's message")
        query_out = os.path.join(base, "rawuser", "out")
        wait_for(lambda: "<rawuser> private from raw" in read(query_out), "ii's query out to show the private message")

        fifo_write(os.path.join(base, "in"), "/n iinew")
        nick = raw.expect("NICK", timeout=SLOW)
        assert nick.nick == "iiuser" and nick.param(0) == "iinew", nick
        fifo_write(os.path.join(base, "in"), "/q bye from ii")
        quit_ = raw.expect("QUIT", timeout=SLOW)
        assert quit_.nick == "iinew" and "bye from ii" in quit_.last, quit_
        assert proc.wait(DEFAULT_TIMEOUT * 2) == 0
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()
    raw.sync()


IRSSI_CONFIG = """
servers = (
  {{ address = "{host}"; chatnet = "Test"; port = "{port}"; autoconnect = "yes"; use_tls = "no"; }}
);
chatnets = {{ Test = {{ type = "IRC"; }}; }};
channels = ( {{ name = "#irssi"; chatnet = "Test"; autojoin = "yes"; }} );
settings = {{
  core = {{ real_name = "irssi user"; user_name = "irssiusr"; nick = "irssiusr"; }};
}};
"""


def test_irssi_in_tmux_autojoins_talks_sees_messages_changes_nick_and_quits(start_server, workdir):
    irssi = need("irssi")
    tmux = need("tmux")
    server = start_server(flood_control=True)
    raw = server.user("rawuser", "#irssi")
    with open(os.path.join(workdir, "config"), "w") as f:
        f.write(IRSSI_CONFIG.format(host=server.host, port=server.port))
    sock = os.path.join(workdir, "tmux.sock")
    env = dict(os.environ, TERM="xterm-256color")

    def tmux_cmd(*args, check=True):
        return subprocess.run([tmux, "-S", sock, *args], env=env, check=check, capture_output=True,
                              text=True, timeout=10)

    def type_line(text: str):
        tmux_cmd("send-keys", "-t", "irc", "-l", text)
        tmux_cmd("send-keys", "-t", "irc", "Enter")

    def screen() -> str:
        return tmux_cmd("capture-pane", "-p", "-t", "irc").stdout


    tmux_cmd("new-session", "-d", "-s", "irc", "-x", "160", "-y", "40", f"{irssi} --home={workdir}")
    try:
        join = raw.expect(lambda m: m.command == "JOIN" and m.nick == "irssiusr", timeout=SLOW)
        assert join.param(0) == "#irssi", join
        type_line("/msg #irssi hello from irssi")
        m = raw.expect("PRIVMSG", timeout=SLOW)
        assert m.nick == "irssiusr" and m.param(0) == "#irssi" and m.last == "hello from irssi", m

        raw.send("PRIVMSG #irssi :hello from raw")
        type_line("/window goto #irssi")
        wait_for(lambda: "hello from raw" in screen() and "rawuser" in screen(),
                 "irssi's screen to show raw's message")

        type_line("/nick irssinew")
        nick = raw.expect("NICK", timeout=SLOW)
        assert nick.nick == "irssiusr" and nick.param(0) == "irssinew", nick
        type_line("/quit bye from irssi")
        quit_ = raw.expect("QUIT", timeout=SLOW)
        assert quit_.nick == "irssinew" and "bye from irssi" in quit_.last, quit_
    finally:
        tmux_cmd("kill-server", check=False)
    raw.sync()
