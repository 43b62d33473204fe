"""Starting and stopping the IRC server under test: our `chat-server` or ngIRCd (the reference).

Each test (or module) starts its own server process on an ephemeral loopback port with the options
it needs (`ServerOptions`), and stops it at the end: SIGTERM, then SIGKILL after a bound. The
server's stdout/stderr are drained by threads into a log file (a full pipe would block the server);
the tail of that log is printed when a test fails.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Optional

from ircclient import IRCClient

#: How long a server may take to print its ready line / to exit after SIGTERM.
START_TIMEOUT = float(os.environ.get("IRC_SERVER_START_TIMEOUT", "20"))
STOP_TIMEOUT = 10.0

READY_RE = re.compile(r"^chat-server listening on (?P<host>\[[^\]]+\]|[^\s:]+):(?P<port>\d+)$")

SERVER_NAME = "irc.mailbox.local"
NETWORK = "Mailbox"
OPER_NAME = "operuser"
OPER_PASSWORD = "operpassword"


@dataclass
class ServerOptions:
    """What a test asks of the server. None means "the server's default"."""

    password: Optional[str] = None
    opers: list = field(default_factory=lambda: [(OPER_NAME, OPER_PASSWORD)])
    motd: Optional[str] = None                 # MOTD text (written to a file)
    sendq: Optional[int] = None
    max_clients: Optional[int] = None
    flood_control: bool = False                # protocol tests run without it; real-client ones with it
    ping_interval: Optional[int] = None
    ping_timeout: Optional[int] = None
    registration_timeout: Optional[int] = None
    server_name: Optional[str] = None          # --server-name (default SERVER_NAME)
    extra_args: list = field(default_factory=list)  # more options (e.g. --cluster URL --verbose)


_running: "set[ServerProcess]" = set()


@atexit.register
def _kill_leftovers() -> None:
    """A run cut short (timeout, ^C) must not leave servers behind."""
    for s in list(_running):
        s.kill()


class ServerProcess:
    """A running server. `kind` is "ours" or "ngircd"."""

    def __init__(self, kind: str, options: ServerOptions, binary: Optional[str]):
        self.kind = kind
        self.options = options
        self.host = "127.0.0.1"
        self.port = 0
        self.name = SERVER_NAME
        self.workdir = tempfile.mkdtemp(prefix=f"irc-{kind}-")
        os.chmod(self.workdir, 0o755)  # ngIRCd drops root for "nobody" and must still read its files
        self.log_path = os.path.join(self.workdir, "server.log")
        self._log = open(self.log_path, "ab", buffering=0)
        self._log_lock = threading.Lock()
        self.stdout_lines: list[str] = []
        self._pumps: list[threading.Thread] = []
        self._ready = threading.Event()
        self._ready_line: Optional[str] = None
        self.clients: list[IRCClient] = []
        self.output_lines: list[str] = []  # stdout and stderr, in the order read
        self._lines_changed = threading.Condition()
        self.proc: Optional[subprocess.Popen] = None
        self.returncode: Optional[int] = None
        self.stopped = False
        self.signalled = False  # the test (or teardown) has asked it to stop
        if kind == "ours":
            self._start_ours(binary)
        elif kind == "ngircd":
            self._start_ngircd()
        else:
            raise ValueError(f"unknown server kind {kind}")

    # ------------------------------------------------------------------------------- our server
    def _start_ours(self, binary: Optional[str]) -> None:
        o = self.options
        if not binary or not os.access(binary, os.X_OK):
            raise RuntimeError(f"chat-server binary not found: {binary!r} (set CHAT_SERVER or --chat-server)")
        self.name = o.server_name or SERVER_NAME
        args = [binary, "--host", "127.0.0.1", "--port", "0", "--server-name", self.name,
                "--network", NETWORK]
        for name, pw in o.opers:
            args += ["--oper", f"{name}:{pw}"]
        if o.motd is not None:
            path = self._write("motd.txt", o.motd)
            args += ["--motd-file", path]
        if o.password is not None:
            args += ["--password", o.password]
        if o.sendq is not None:
            args += ["--sendq", str(o.sendq)]
        if o.max_clients is not None:
            args += ["--max-clients", str(o.max_clients)]
        if not o.flood_control:
            args.append("--no-flood-control")
        if o.ping_interval is not None:
            args += ["--ping-interval", str(o.ping_interval)]
        if o.ping_timeout is not None:
            args += ["--ping-timeout", str(o.ping_timeout)]
        if o.registration_timeout is not None:
            args += ["--registration-timeout", str(o.registration_timeout)]
        args += list(o.extra_args)
        args += os.environ.get("CHAT_SERVER_ARGS", "").split()  # e.g. --verbose, for debugging
        self.args = args
        self._spawn(args, self._watch_ours)
        line = self._wait_ready()
        m = READY_RE.match(line)
        host = m.group("host").strip("[]")
        self.host = host
        self.port = int(m.group("port"))

    def _watch_ours(self, line: str, stream: str) -> None:
        with self._lines_changed:
            self.output_lines.append(line)
            self._lines_changed.notify_all()
        if stream == "stdout":
            self.stdout_lines.append(line)
            if not self._ready.is_set() and READY_RE.match(line):
                self._ready_line = line
                self._ready.set()

    # ------------------------------------------------------------------------------------ ngIRCd
    def _start_ngircd(self) -> None:
        o = self.options
        exe = shutil.which("ngircd") or ("/usr/sbin/ngircd" if os.path.exists("/usr/sbin/ngircd") else None)
        if exe is None:
            raise RuntimeError("ngircd is not installed (run.sh --server ngircd installs it)")
        self.port = _free_port()
        conf = [
            "[Global]",
            f"Name = {SERVER_NAME}",
            f"Network = {NETWORK}",
            "Info = ngIRCd reference server for the integration tests",
            "AdminInfo1 = integration tests",
            "AdminInfo2 = loopback",
            "AdminEMail = nobody@localhost",
            "Listen = 127.0.0.1",
            f"Ports = {self.port}",
        ]
        if o.motd is not None:
            conf.append(f"MotdFile = {self._write('motd.txt', o.motd)}")
        else:
            conf.append("MotdPhrase = Integration tests MOTD phrase")
        if o.password is not None:
            conf.append(f"Password = {o.password}")
        conf += [
            "[Limits]",
            f"MaxConnections = {o.max_clients or 0}",
            "MaxConnectionsIP = 0",
            "MaxJoins = 0",
            # 0 = no penalties (ngIRCd's flood protection); -1 = its default (no limit).
            f"MaxPenaltyTime = {-1 if o.flood_control else 0}",
            # ngIRCd refuses values below 5 s (and uses 5).
            f"PingTimeout = {max(5, o.ping_interval or 120)}",
            f"PongTimeout = {max(5, o.ping_timeout or 20)}",
            "[Options]",
            "DNS = no",
            "Ident = no",
            "PAM = no",
        ]
        for name, pw in o.opers:
            conf += ["[Operator]", f"Name = {name}", f"Password = {pw}"]
        path = self._write("ngircd.conf", "\n".join(conf) + "\n")
        self.args = [exe, "--nodaemon", "--config", path]
        self._spawn(self.args, self._watch_ngircd)
        self._wait_ready()

    def _watch_ngircd(self, line: str, stream: str) -> None:
        if not self._ready.is_set() and re.search(r'Server ".*" .*ready', line):
            self._ready_line = line
            self._ready.set()

    # ------------------------------------------------------------------------------------ common
    def _write(self, name: str, text: str) -> str:
        path = os.path.join(self.workdir, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o644)
        return path

    def _spawn(self, args: list[str], watch) -> None:
        self._log.write(("$ " + " ".join(args) + "\n").encode())
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, start_new_session=True)
        _running.add(self)
        self._pumps = []
        for stream, pipe in (("stdout", self.proc.stdout), ("stderr", self.proc.stderr)):
            t = threading.Thread(target=self._pump, args=(pipe, stream, watch), daemon=True)
            t.start()
            self._pumps.append(t)

    def _pump(self, pipe, stream: str, watch) -> None:
        for raw in iter(pipe.readline, b""):
            with self._log_lock:
                if not self._log.closed:
                    self._log.write(f"[{stream}] ".encode() + raw)
            watch(raw.decode("utf-8", "replace").rstrip("\r\n"), stream)
        pipe.close()
        if stream == "stdout":
            self._ready.set()  # EOF: wake the waiter (it checks the ready line)

    def _wait_ready(self) -> str:
        if not self._ready.wait(START_TIMEOUT) or self._ready_line is None:
            self.kill()
            raise RuntimeError(f"{self.kind} server did not become ready within {START_TIMEOUT}s "
                               f"(exit {self.proc.poll()}); log:\n{self.log_tail()}")
        return self._ready_line

    def wait_for_lines(self, pattern: str, count: int = 1, timeout: float = START_TIMEOUT) -> list[str]:
        """Waits until `count` lines of the server's output (stdout or stderr) match the regex
        `pattern`; returns them. Fails with the log's tail when they do not come in time."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self._lines_changed:
            while True:
                found = [l for l in self.output_lines if regex.search(l)]
                if len(found) >= count:
                    return found
                left = deadline - time.monotonic()
                if left <= 0 or (self.proc is not None and self.proc.poll() is not None and not self._lines_changed.wait(0.2)):
                    raise AssertionError(f"{self.name}: {len(found)} of {count} lines matching {pattern!r} "
                                         f"within {timeout}s (exit {self.proc.poll()}); log:\n{self.log_tail()}")
                self._lines_changed.wait(min(left, 0.5))

    @property
    def ready_line(self) -> Optional[str]:
        return self._ready_line

    def client(self, name: str = "?", **kw) -> IRCClient:
        """A new raw connection (closed at teardown)."""
        c = IRCClient(self.host, self.port, name=name, **kw)
        self.clients.append(c)
        return c

    def user(self, nick: str, *channels: str, **kw) -> IRCClient:
        """A new connection registered as `nick`, joined to `channels`."""
        password = kw.pop("password", self.options.password)
        c = self.client(name=nick, **kw)
        c.register(nick, password=password)
        for ch in channels:
            c.join(ch)
        return c

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def terminate(self, timeout: float = STOP_TIMEOUT) -> int:
        """SIGTERM, wait up to `timeout`; SIGKILL if it is still running. Returns the exit code
        (negative: killed by that signal; None is never returned)."""
        self.signalled = True
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self._log.write(b"[harness] still running after SIGTERM: SIGKILL\n")
                self.kill()
        self.returncode = self.proc.wait()
        self.stopped = True
        _running.discard(self)
        for t in self._pumps:
            t.join(STOP_TIMEOUT)  # the pipes end with the process (ngIRCd children included)
        return self.returncode

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        _running.discard(self)

    def log_tail(self, n: int = 60) -> str:
        try:
            with open(self.log_path, "rb") as f:
                lines = f.read().decode("utf-8", "replace").splitlines()
        except OSError:
            return "(no log)"
        return "\n".join(lines[-n:])

    def crash_summary(self) -> str:
        """The crash report's head (Swift runtime backtrace), or '' when the log shows none."""
        try:
            with open(self.log_path, "rb") as f:
                lines = f.read().decode("utf-8", "replace").splitlines()
        except OSError:
            return ""
        out = [l for l in lines if "Fatal error" in l or "Program crashed" in l]
        for i, l in enumerate(lines):
            if " crashed:" in l and "Thread" in l:
                out += [x for x in lines[i:i + 10] if x.strip()]
                break
        return "\n".join(out)

    def close_clients(self) -> None:
        for c in self.clients:
            c.close()
        self.clients.clear()

    def cleanup(self) -> None:
        self.close_clients()
        if not self.stopped:
            self.terminate()
        with self._log_lock:
            self._log.close()
        shutil.rmtree(self.workdir, ignore_errors=True)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
