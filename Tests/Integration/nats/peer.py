#!/usr/bin/env python3
"""An independent NATS client (the PyPI nats-py library) for the interop tests of MailboxNATS.

Run with the virtual environment's python (Tests/Integration/nats/venv.sh prints its path;
Tests/Integration/nats.sh exports it as $MAILBOX_NATS_PY and this file as $MAILBOX_NATS_PEER):

  peer.py echo SUBJECT [--count N]   reply to each request with b"py:" + payload and the request's
                                     headers; prints "ready" once subscribed (after a flush); exits
                                     after N messages, or when its stdin reaches EOF (unless
                                     --no-stdin); messages without a reply subject are counted, not
                                     answered
  peer.py publish SUBJECT N          publish msg-0 .. msg-(N-1), each with the header "X-From: py",
                                     flush, print "done"
  peer.py subscribe SUBJECT N        print "ready" once subscribed (after a flush), then each of N
                                     payloads on its own line (as JSON objects with data, headers and
                                     reply with --json), then "done"; exit code 1 after --timeout
                                     seconds (default 30) without all of them
  peer.py request SUBJECT PAYLOAD    send one request, print the reply's payload (a JSON object with
                                     data and headers with --json); exit code 1 after --timeout
                                     seconds (default 5), or at once when no one listens

Common options: --url (default $MAILBOX_NATS_URL, else nats://127.0.0.1:4222; a comma-separated
list for a cluster), --header K=V (repeatable; added to what publish and request send), --queue
GROUP (echo and subscribe), --reconnect-attempts N (per server, 0.5 s apart, the first connection
included; default 10; 0 = fail at the first refusal, e.g. a wrong password).
Everything is printed on stdout, flushed line by line; diagnostics go to stderr.
"""

import argparse
import asyncio
import json
import os
import sys

import nats
from nats.errors import NoRespondersError, TimeoutError as NatsTimeoutError


def out(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def err(line):
    sys.stderr.write("peer.py: " + line + "\n")
    sys.stderr.flush()


def parse_headers(pairs):
    headers = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep:
            raise SystemExit("peer.py: --header wants KEY=VALUE, got %r" % pair)
        headers[key] = value
    return headers


async def connect(args):
    async def on_error(e):
        err("connection error: %r" % (e,))

    return await nats.connect(
        servers=[u.strip() for u in args.url.split(",") if u.strip()],
        name="mailbox-peer.py",
        error_cb=on_error,
        connect_timeout=5,
        # nats-py takes 0 (and any negative number) as "forever": 0 here means no reconnecting
        # at all, so a refused first connection (a wrong password) fails at once.
        allow_reconnect=args.reconnect_attempts > 0,
        max_reconnect_attempts=max(args.reconnect_attempts, 1),
        reconnect_time_wait=0.5,
    )


async def stdin_eof():
    """Returns when stdin reaches EOF (or is closed)."""
    loop = asyncio.get_running_loop()
    while True:
        chunk = await loop.run_in_executor(None, sys.stdin.buffer.read1, 4096)
        if not chunk:
            return


async def mode_echo(args):
    nc = await connect(args)
    finished = asyncio.Event()
    seen = 0

    async def handler(msg):
        nonlocal seen
        if msg.reply:
            await nc.publish(msg.reply, b"py:" + msg.data, headers=msg.headers or None)
        seen += 1
        if args.count is not None and seen >= args.count:
            finished.set()

    await nc.subscribe(args.subject, queue=args.queue or "", cb=handler)
    await nc.flush()
    out("ready")
    waiters = [asyncio.ensure_future(finished.wait())]
    if not args.no_stdin:
        waiters.append(asyncio.ensure_future(stdin_eof()))
    await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    for w in waiters:
        w.cancel()
    try:
        await nc.drain()
    except Exception as e:  # e.g. while reconnecting: the answers given are what counts
        err("drain: %s: %s" % (type(e).__name__, e))
        await nc.close()
    out("done %d" % seen)
    return 0


async def mode_publish(args):
    nc = await connect(args)
    headers = {"X-From": "py"}
    headers.update(parse_headers(args.header))
    for i in range(args.n):
        await nc.publish(args.subject, ("msg-%d" % i).encode(), headers=headers)
    await nc.flush()
    await nc.close()
    out("done")
    return 0


async def mode_subscribe(args):
    nc = await connect(args)
    sub = await nc.subscribe(args.subject, queue=args.queue or "")
    await nc.flush()
    out("ready")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + args.timeout
    for i in range(args.n):
        remaining = deadline - loop.time()
        try:
            if remaining <= 0:
                raise NatsTimeoutError
            msg = await sub.next_msg(timeout=remaining)
        except (NatsTimeoutError, asyncio.TimeoutError):
            err("timeout: %d of %d messages on %r after %.0f s" % (i, args.n, args.subject, args.timeout))
            await nc.close()
            return 1
        if args.json:
            out(json.dumps({
                "data": msg.data.decode("utf-8", "backslashreplace"),
                "headers": msg.headers or {},
                "reply": msg.reply or None,
            }, sort_keys=True))
        else:
            out(msg.data.decode("utf-8", "backslashreplace"))
    await nc.close()
    out("done")
    return 0


async def mode_request(args):
    nc = await connect(args)
    try:
        reply = await nc.request(args.subject, args.payload.encode(),
                                 timeout=args.timeout, headers=parse_headers(args.header) or None)
    except NoRespondersError:
        err("no responders on %r" % args.subject)
        await nc.close()
        return 1
    except (NatsTimeoutError, asyncio.TimeoutError):
        err("timeout: no reply on %r after %.1f s" % (args.subject, args.timeout))
        await nc.close()
        return 1
    if args.json:
        out(json.dumps({"data": reply.data.decode("utf-8", "backslashreplace"),
                        "headers": reply.headers or {}}, sort_keys=True))
    else:
        out(reply.data.decode("utf-8", "backslashreplace"))
    await nc.close()
    return 0


def main(argv):
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--url", default=os.environ.get("MAILBOX_NATS_URL", "nats://127.0.0.1:4222"))
    common.add_argument("--header", action="append", metavar="K=V")
    common.add_argument("--reconnect-attempts", type=int, default=10,
                        help="per server, 0.5 s apart, also for the first connection (0: none)")

    parser = argparse.ArgumentParser(description="NATS interop peer (nats-py)")
    modes = parser.add_subparsers(dest="mode", required=True)

    p = modes.add_parser("echo", parents=[common])
    p.add_argument("subject")
    p.add_argument("--count", type=int)
    p.add_argument("--queue")
    p.add_argument("--no-stdin", action="store_true", help="do not exit on stdin EOF")

    p = modes.add_parser("publish", parents=[common])
    p.add_argument("subject")
    p.add_argument("n", type=int)

    p = modes.add_parser("subscribe", parents=[common])
    p.add_argument("subject")
    p.add_argument("n", type=int)
    p.add_argument("--timeout", type=float, default=30.0)
    p.add_argument("--queue")
    p.add_argument("--json", action="store_true")

    p = modes.add_parser("request", parents=[common])
    p.add_argument("subject")
    p.add_argument("payload")
    p.add_argument("--timeout", type=float, default=5.0)
    p.add_argument("--json", action="store_true")

    args = parser.parse_args(argv)
    handler = {"echo": mode_echo, "publish": mode_publish,
               "subscribe": mode_subscribe, "request": mode_request}[args.mode]
    try:
        return asyncio.run(handler(args))
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # a clear one-line cause for the test's log
        err("%s failed: %s: %s" % (args.mode, type(e).__name__, e))
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
