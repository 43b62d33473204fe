#!/usr/bin/env python3
"""Benchmark: a chat line across nodes, p50/p99 latency at a paced rate (default 1,000 lines/s).

Starts its own nats-server (JetStream on, free loopback port) and two `chat-server --cluster`
nodes, then `--senders` clients on node 1 (default 10) send `--rate` lines per second in total
(paced, spread evenly) for `--duration` seconds into one channel, in which `--receivers`
clients on node 2 (the line crosses nodes: one cluster message per line to node 2) and as many
on node 1 (the same line delivered locally, the single-node path, for comparison in the same
run) read them. Latency is receive time - send time, both CLOCK_MONOTONIC in this process.
Prints one JSON line; exit status 0 when nothing was lost.

    python3 Tests/Integration/cluster_chat_bench.py [--chat-server PATH] [--rate 1000] [--duration 10]

Only the standard library; the chat-server binary defaults to .build/release/chat-server.
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_line(proc: subprocess.Popen, needle: str, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline().decode()
        if not line:
            break
        if needle in line:
            return line.strip()
    raise SystemExit(f"cluster_chat_bench: no '{needle}' line within {timeout}s (exit {proc.poll()})")


class Client:
    def __init__(self, port: int, nick: str):
        self.nick = nick
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.send(f"NICK {nick}\r\nUSER {nick} 0 * :{nick}\r\n")
        self.until(lambda l: " 376 " in l or " 422 " in l)

    def send(self, text: str) -> None:
        self.sock.sendall(text.encode())

    def lines(self):
        data = self.sock.recv(65536)
        if not data:
            raise SystemExit(f"cluster_chat_bench: {self.nick} disconnected")
        self.buf += data
        *complete, self.buf = self.buf.split(b"\r\n")
        for raw in complete:
            line = raw.decode("utf-8", "replace")
            if line.startswith("PING"):
                self.send("PONG" + line[4:] + "\r\n")
            yield line

    def until(self, predicate, timeout: float = 30) -> None:
        self.sock.settimeout(timeout)
        while True:
            for line in self.lines():
                if predicate(line):
                    self.sock.settimeout(None)
                    return


def percentile(sorted_values: list[float], p: float) -> float:
    if not sorted_values:
        return float("nan")
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * p))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chat-server", default=os.environ.get("CHAT_SERVER", os.path.join(ROOT, ".build/release/chat-server")))
    parser.add_argument("--nats-server", default=shutil.which("nats-server") or "/usr/sbin/nats-server")
    parser.add_argument("--rate", type=int, default=1000, help="lines per second, all senders together")
    parser.add_argument("--duration", type=float, default=10)
    parser.add_argument("--senders", type=int, default=10)
    parser.add_argument("--receivers", type=int, default=5, help="on each node")
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="chat-bench-nats-")
    procs: list[subprocess.Popen] = []
    try:
        nats_port = free_port()
        procs.append(subprocess.Popen([args.nats_server, "-a", "127.0.0.1", "-p", str(nats_port), "-js", "-sd", workdir],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", nats_port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit("cluster_chat_bench: nats-server did not start")
                time.sleep(0.05)
        ports = []
        for name in ("n1", "n2"):
            proc = subprocess.Popen([args.chat_server, "--port", "0", "--server-name", f"{name}.bench", "--no-flood-control",
                                     "--cluster", f"nats://127.0.0.1:{nats_port}", "--node-name", name, "--cluster-name", "bench"],
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
            procs.append(proc)
            ports.append(int(wait_line(proc, "listening on", 30).rsplit(":", 1)[1]))

        channel = "#bench"
        senders = [Client(ports[0], f"s{i}") for i in range(args.senders)]
        for s in senders:
            s.send(f"JOIN {channel}\r\n")
            s.until(lambda l: " 366 " in l)
        total_members = args.senders + 2 * args.receivers
        receivers: dict[str, list[Client]] = {"local": [], "cross": []}
        for kind, port in (("local", ports[0]), ("cross", ports[1])):
            for i in range(args.receivers):
                c = Client(port, f"{kind[0]}{i}")
                receivers[kind].append(c)
        # Join once the node's copy of the channel has everyone before (lines must not go to a
        # half-known channel): ask NAMES until the count is right.
        joined = args.senders
        for kind in ("local", "cross"):
            for c in receivers[kind]:
                c.send(f"JOIN {channel}\r\n")
                c.until(lambda l: " 366 " in l)
                joined += 1
        for c in receivers["local"] + receivers["cross"]:
            deadline = time.monotonic() + 30
            while True:
                names: list[str] = []
                c.send(f"NAMES {channel}\r\n")
                c.until(lambda l: (" 353 " in l and names.extend(l.rsplit(":", 1)[1].split()) is None and False) or " 366 " in l)
                if len(names) == total_members:
                    break
                if time.monotonic() > deadline:
                    raise SystemExit(f"cluster_chat_bench: {c.nick} sees {len(names)} of {total_members} members")
                time.sleep(0.05)

        expected = int(args.rate * args.duration)
        latencies: dict[str, list[float]] = {"local": [], "cross": []}
        counts = {"local": 0, "cross": 0}
        done = threading.Event()

        def receive() -> None:
            selector = selectors.DefaultSelector()
            for kind, clients in receivers.items():
                for c in clients:
                    c.sock.setblocking(False)
                    selector.register(c.sock, selectors.EVENT_READ, (kind, c))
            want = expected * args.receivers * 2
            got = 0
            end = None
            while got < want:
                if done.is_set():
                    end = end or time.monotonic() + 5    # grace for the last lines
                    if time.monotonic() > end:
                        break
                for key, _ in selector.select(timeout=0.2):
                    kind, c = key.data
                    try:
                        data = c.sock.recv(262144)
                    except BlockingIOError:
                        continue
                    now = time.monotonic_ns()
                    c.buf += data
                    *complete, c.buf = c.buf.split(b"\r\n")
                    for raw in complete:
                        if b" PRIVMSG " in raw:
                            sent = int(raw.rsplit(b" ", 1)[1])
                            latencies[kind].append((now - sent) / 1e6)
                            counts[kind] += 1
                            got += 1
                        elif raw.startswith(b"PING"):
                            c.sock.sendall(b"PONG" + raw[4:] + b"\r\n")

        reader = threading.Thread(target=receive, daemon=True)
        reader.start()
        interval = 1.0 / args.rate
        start = time.monotonic()
        for n in range(expected):
            target = start + n * interval
            while (delay := target - time.monotonic()) > 0:
                time.sleep(delay)
            s = senders[n % len(senders)]
            s.sock.sendall(f"PRIVMSG {channel} :{n} {time.monotonic_ns()}\r\n".encode())
        sent_for = time.monotonic() - start
        done.set()
        reader.join(30)

        result = {"bench": "chat-line-across-nodes", "rate": args.rate, "duration_s": args.duration,
                  "achieved_rate": round(expected / sent_for, 1), "senders": args.senders, "receivers_per_node": args.receivers}
        ok = True
        for kind in ("cross", "local"):
            values = sorted(latencies[kind])
            want = expected * args.receivers
            result[kind] = {"received": counts[kind], "expected": want, "lost": want - counts[kind],
                            "p50_ms": round(percentile(values, 0.50), 3), "p99_ms": round(percentile(values, 0.99), 3),
                            "max_ms": round(values[-1], 3) if values else None}
            ok = ok and counts[kind] == want
        result["ok"] = ok
        print(json.dumps(result))
        return 0 if ok else 1
    finally:
        for proc in reversed(procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
