"""A small raw-socket IRC client for the integration tests.

Every wait has a deadline (``IRC_TEST_TIMEOUT`` seconds, 5 by default) that only a broken server
misses; nothing sleeps to wait for correctness: reads block in ``select`` until data, EOF or the
deadline.

Typical use::

    c = IRCClient(server.host, server.port)
    c.register("alice")
    c.send("JOIN #room")
    c.expect("366")
    c.send("PRIVMSG nobody :hi")
    reply = c.expect("401")
"""

from __future__ import annotations

import itertools
import os
import select
import socket
import struct
import time
from collections import deque
from typing import Callable, Iterable, Optional, Union

#: Deadline of one wait (seconds). Generous: only a broken server misses it.
DEFAULT_TIMEOUT = float(os.environ.get("IRC_TEST_TIMEOUT", "5"))

_sync_counter = itertools.count(1)


class Message:
    """One parsed IRC line: optional tags and prefix, a command, parameters."""

    __slots__ = ("raw", "tags", "prefix", "command", "params")

    def __init__(self, raw: bytes, tags, prefix, command: str, params: list[str]):
        self.raw = raw
        self.tags = tags
        self.prefix = prefix
        self.command = command
        self.params = params

    @classmethod
    def parse(cls, raw: bytes) -> "Message":
        text = raw.decode("utf-8", "replace")
        tags = prefix = None
        rest = text.lstrip(" ")
        if rest.startswith("@"):
            tags, _, rest = rest[1:].partition(" ")
            rest = rest.lstrip(" ")
        if rest.startswith(":"):
            prefix, _, rest = rest[1:].partition(" ")
            rest = rest.lstrip(" ")
        trailing: Optional[str] = None
        idx = rest.find(" :")
        if idx >= 0:
            rest, trailing = rest[:idx], rest[idx + 2:]
        words = [w for w in rest.split(" ") if w]
        command = words[0].upper() if words else ""
        params = words[1:]
        if trailing is not None:
            params.append(trailing)
        return cls(raw, tags, prefix, command, params)

    @property
    def nick(self) -> Optional[str]:
        """The nick of a ``nick!user@host`` prefix (or the whole prefix of a server)."""
        if self.prefix is None:
            return None
        return self.prefix.split("!", 1)[0]

    @property
    def last(self) -> str:
        """The last parameter ('' when there is none)."""
        return self.params[-1] if self.params else ""

    def param(self, index: int, default: str = "") -> str:
        return self.params[index] if len(self.params) > index else default

    def __repr__(self) -> str:
        return self.raw.decode("utf-8", "backslashreplace")

    __str__ = __repr__


Matcher = Union[str, Callable[[Message], bool]]


def matcher(*what: Matcher) -> Callable[[Message], bool]:
    """A predicate from commands/numerics (``"PRIVMSG"``, ``"433"``) and/or predicates (any match)."""
    commands = {w.upper() for w in what if isinstance(w, str)}
    preds = [w for w in what if not isinstance(w, str)]

    def match(m: Message) -> bool:
        return m.command in commands or any(p(m) for p in preds)

    return match


class ServerClosed(AssertionError):
    """The server closed the connection while the test waited for something else."""


class IRCClient:
    """A line-oriented IRC client on a blocking TCP socket, read with deadlines.

    Received messages are queued; ``expect``/``collect_until`` consume them in order, so nothing the
    server sends is lost between waits. ``history`` keeps every message ever received (for failure
    messages). Server PINGs are answered automatically unless ``auto_pong`` is False (they still
    appear in the stream).
    """

    def __init__(self, host: str, port: int, *, timeout: float = DEFAULT_TIMEOUT,
                 rcvbuf: Optional[int] = None, auto_pong: bool = True, name: str = "?"):
        self.timeout = timeout
        self.auto_pong = auto_pong
        self.name = name
        self.nick: Optional[str] = None
        self.sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf is not None:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(timeout)
        self.sock.connect((host, port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._buf = b""
        self.pending: deque[Message] = deque()
        self.history: list[Message] = []
        self.eof = False
        self.reset = False
        self.closed_locally = False

    # ----------------------------------------------------------------------------------- sending
    def send(self, line: Union[str, bytes]) -> None:
        """Sends one line; CRLF is appended."""
        data = line.encode("utf-8") if isinstance(line, str) else line
        self.send_raw(data + b"\r\n")

    def send_lines(self, lines: Iterable[Union[str, bytes]]) -> None:
        """Sends several lines in one write."""
        data = b"".join((l.encode("utf-8") if isinstance(l, str) else l) + b"\r\n" for l in lines)
        self.send_raw(data)

    def send_raw(self, data: bytes) -> None:
        """Sends bytes as they are (no terminator added)."""
        self.sock.settimeout(self.timeout)
        self.sock.sendall(data)

    # ----------------------------------------------------------------------------------- reading
    def _fill(self, deadline: float) -> bool:
        """Reads once (waiting until `deadline`). False on timeout; sets eof on EOF/reset."""
        if self.eof:
            return True
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        ready, _, _ = select.select([self.sock], [], [], remaining)
        if not ready:
            return False
        try:
            data = self.sock.recv(65536)
        except (ConnectionResetError, ConnectionAbortedError):
            self.reset = True
            data = b""
        except OSError:
            data = b""
        if not data:
            self.eof = True
            if self._buf:
                self._push(self._buf)
                self._buf = b""
            return True
        self._buf += data
        while True:
            # Servers end lines with CRLF; accept a bare LF too.
            idx = self._buf.find(b"\n")
            if idx < 0:
                break
            line, self._buf = self._buf[:idx], self._buf[idx + 1:]
            if line.endswith(b"\r"):
                line = line[:-1]
            if line:
                self._push(line)
        return True

    def _push(self, line: bytes) -> None:
        msg = Message.parse(line)
        self.history.append(msg)
        self.pending.append(msg)
        if self.auto_pong and msg.command == "PING" and not self.closed_locally:
            try:
                self.send("PONG :" + msg.last)
            except OSError:
                pass

    def next(self, timeout: Optional[float] = None) -> Optional[Message]:
        """The next message, None at EOF; raises AssertionError when nothing comes in time."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while not self.pending:
            if self.eof:
                return None
            if not self._fill(deadline):
                raise AssertionError(f"{self.name}: no message within the deadline; {self._recent()}")
        return self.pending.popleft()

    def collect_until(self, *what: Matcher, timeout: Optional[float] = None) -> list[Message]:
        """Messages up to and including the first that matches; fails on EOF or the deadline."""
        match = matcher(*what)
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        out: list[Message] = []
        while True:
            while self.pending:
                m = self.pending.popleft()
                out.append(m)
                if match(m):
                    return out
            if self.eof:
                raise ServerClosed(f"{self.name}: connection closed while waiting for {what}; "
                                   f"got {short(out[-15:])}; {self._recent()}")
            if not self._fill(deadline):
                raise AssertionError(f"{self.name}: timed out waiting for {what}; got {short(out[-15:])}")

    def expect(self, *what: Matcher, timeout: Optional[float] = None) -> Message:
        """The first message matching `what` (skipping others); fails on EOF or the deadline."""
        return self.collect_until(*what, timeout=timeout)[-1]

    def expect_closed(self, timeout: Optional[float] = None) -> list[Message]:
        """Reads until the server closes the connection; returns what came before EOF."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        out: list[Message] = []
        while True:
            while self.pending:
                out.append(self.pending.popleft())
            if self.eof:
                return out
            if not self._fill(deadline):
                raise AssertionError(f"{self.name}: connection still open after the deadline; "
                                     f"got {short(out[-15:])}")

    def sync(self, timeout: Optional[float] = None) -> list[Message]:
        """Round trip: sends PING with a unique token, returns every message before its PONG.

        The server handles one client's lines in order, so every reply to an earlier command of
        this client has been sent before the PONG: an empty result proves "no reply".
        """
        token = f"sync{next(_sync_counter)}"
        self.send(f"PING :{token}")
        msgs = self.collect_until(lambda m: m.command == "PONG" and m.last == token, timeout=timeout)
        return [m for m in msgs[:-1] if m.command != "PING"]

    def drain(self) -> list[Message]:
        """Everything already received and not yet consumed (reads what the kernel holds, no wait)."""
        while not self.eof:
            r, _, _ = select.select([self.sock], [], [], 0)
            if not r:
                break
            self._fill(time.monotonic() + 0.001)
        out = list(self.pending)
        self.pending.clear()
        return out

    def _recent(self) -> str:
        return "last received: " + short(self.history[-10:])

    # ------------------------------------------------------------------------------ conveniences
    def register(self, nick: str, user: Optional[str] = None, realname: Optional[str] = None,
                 password: Optional[str] = None) -> list[Message]:
        """PASS?/NICK/USER, then waits for the end of the MOTD (376 or 422). Returns the burst."""
        lines = []
        if password is not None:
            lines.append(f"PASS {password}")
        lines += [f"NICK {nick}", f"USER {user or nick.lower()} 0 * :{realname or 'Integration ' + nick}"]
        self.send_lines(lines)
        burst = self.collect_until("376", "422")
        assert any(m.command == "001" for m in burst), f"{nick}: no 001 in {burst}"
        self.nick = nick
        return burst

    def join(self, channel: str, key: Optional[str] = None) -> list[Message]:
        """JOIN and wait for its 366 (end of NAMES)."""
        self.send(f"JOIN {channel}" + (f" {key}" if key else ""))
        return self.collect_until(lambda m: m.command == "366" and m.param(1).lower() == channel.lower())

    def abort(self) -> None:
        """Closes with SO_LINGER 0: the peer gets a TCP reset."""
        self.closed_locally = True
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
        self.sock.close()

    def close(self) -> None:
        self.closed_locally = True
        try:
            self.sock.close()
        except OSError:
            pass


def short(msgs: list[Message], width: int = 160) -> str:
    """Messages for a failure report, each cut to `width` characters."""
    out = []
    for m in msgs:
        text = repr(m)
        out.append(text if len(text) <= width else text[:width] + f"...(+{len(text) - width})")
    return "[" + ", ".join(out) + "]"


def pump(clients: list[IRCClient], until: Callable[[], bool], timeout: float) -> None:
    """Reads all `clients` at once (answering PINGs of those with auto_pong) until `until()` is
    true; fails when the deadline passes first. Messages stay queued in each client's `pending`."""
    deadline = time.monotonic() + timeout
    while not until():
        open_socks = {c.sock: c for c in clients if not c.eof and not c.closed_locally}
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError("condition not met before the deadline; recent: " +
                                 "; ".join(f"{c.name}: {short(c.history[-5:])}" for c in clients))
        if not open_socks:
            if until():
                return
            raise AssertionError("every connection closed before the condition was met: " +
                                 "; ".join(f"{c.name}: {short(c.history[-5:])}" for c in clients))
        ready, _, _ = select.select(list(open_socks), [], [], remaining)
        for s in ready:
            open_socks[s]._fill(time.monotonic() + 0.001)
