"""pytest fixtures: a fresh IRC server per test (ours or ngIRCd), raw clients, skips by server kind.

Options (run.sh passes them):
  --server ours|ngircd     which server to test (default: ours; env IRC_SERVER)
  --chat-server PATH       our binary (default: env CHAT_SERVER, else .build/release/chat-server)

Markers:
  @pytest.mark.ours_only("reason")   skipped against ngIRCd, with the reason (our flags/behaviour)
"""

from __future__ import annotations

import os
import signal
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from servers import ServerOptions, ServerProcess  # noqa: E402

PACKAGE_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def pytest_addoption(parser):
    parser.addoption("--server", default=os.environ.get("IRC_SERVER", "ours"), choices=["ours", "ngircd"],
                     help="server under test: our chat-server or ngIRCd (reference)")
    parser.addoption("--chat-server", default=os.environ.get("CHAT_SERVER") or
                     os.path.join(PACKAGE_ROOT, ".build", "release", "chat-server"),
                     help="path of the chat-server binary")


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def pytest_configure(config):
    # run.sh's time limit sends SIGTERM: end like ^C, so fixtures stop their servers
    signal.signal(signal.SIGTERM, _interrupt)
    config.addinivalue_line("markers", "ours_only(reason): test depends on our server's own flags/behaviour")


def pytest_report_header(config):
    kind = config.getoption("--server")
    extra = f" ({config.getoption('--chat-server')})" if kind == "ours" else ""
    return f"IRC server under test: {kind}{extra}"


def pytest_runtest_setup(item):
    marker = item.get_closest_marker("ours_only")
    if marker is not None and item.config.getoption("--server") != "ours":
        reason = marker.args[0] if marker.args else "depends on chat-server's own behaviour"
        pytest.skip(f"ngIRCd: {reason}")


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, "rep_" + rep.when, rep)


@pytest.fixture
def server_kind(request) -> str:
    return request.config.getoption("--server")


@pytest.fixture
def start_server(request):
    """Factory: start_server(**ServerOptions fields) -> ServerProcess, stopped at teardown.

    At teardown the server must still be running (a crash fails the test), then gets SIGTERM.
    """
    kind = request.config.getoption("--server")
    binary = request.config.getoption("--chat-server")
    started: list[ServerProcess] = []

    def start(**options) -> ServerProcess:
        s = ServerProcess(kind, ServerOptions(**options), binary)
        started.append(s)
        return s

    yield start

    problems = []
    for s in started:
        if not s.signalled and not s.alive():
            problems.append(f"{kind} server exited during the test with code {s.proc.poll()}")
        failed = getattr(request.node, "rep_call", None) is not None and request.node.rep_call.failed
        if failed or problems:
            print(f"\n----- {kind} server log (tail) -----\n{s.log_tail()}\n-----")
        s.cleanup()
    if problems:
        pytest.fail("; ".join(problems))


@pytest.fixture
def server(start_server) -> ServerProcess:
    """A server with default options (flood control off, oper operuser:operpassword)."""
    return start_server()


@pytest.fixture
def seed(request) -> int:
    """A random seed, printed; replay with env MAILBOX_SEED."""
    import random
    env = os.environ.get("MAILBOX_SEED")
    value = int(env) if env else random.SystemRandom().randrange(1, 2**31)
    print(f"seed {value} (replay: MAILBOX_SEED={value})")
    return value
