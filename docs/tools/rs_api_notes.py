"""Why a ReactiveSwift 7.2.1 symbol has no exact counterpart in Mailbox.

Read by rs_api_diff.py. Each note matches ReactiveSwift symbols by `symbol`: a path as the table
shows it (`Type.member(labels:)`, with `Signal.Event` written `Event`), a path followed by `*`
for everything under it, or — with `signature` — only the overloads whose normalised signature
contains that text. `status` is:

- "compatible": Mailbox declares it differently, but every ReactiveSwift call site compiles and
  behaves the same (say how). The script checks that Mailbox has the path (or `mailbox`, the
  path of the declaration that serves the calls).
- "not provided": Mailbox does not have it (say why, and what to use instead). Keep these in
  step with the "Not provided" section of docs/StreamContracts.md.

A note that matches no symbol, or a symbol that now matches exactly, fails the script: notes
cannot go stale silently.
"""

ATOMIC = (
    "The name would clash with the standard library's `Synchronization.Atomic`, which Mailbox and "
    "its users import (every `Atomic` would become ambiguous). Use `Synchronization.Mutex`, a "
    "lock-protected class, or a `MutableProperty` when the value must be observed."
)
BAG = (
    "ReactiveSwift's token-indexed collection is a utility of its own implementation; Mailbox's "
    "equivalent is internal. Use an array or a dictionary keyed by a counter."
)
OBSERVER_BASE = (
    "ReactiveSwift's `open class Observer`, the base class its own operators subclass. "
    "`Signal.Observer` is a final class in Mailbox (one indirect call per event, `Sendable`): "
    "write operators with `Signal { observer, lifetime in … }` or `Signal.Observer { event in … }`; "
    "`Signal.Observer` has `receive(_:)` and `terminate(_:)`."
)
ASYNC_ADVANCE = (
    "Not provided: in `async` code Swift prefers an `async` overload, so these `@MainActor` "
    "variants would silently turn every `scheduler.advance(…)` in async tests (Mailbox's test "
    "kit, simulations) into a hop to the main actor, which a Linux server process does not run. "
    "Call the synchronous `advance`/`run` (deterministic, from any context); "
    "`await Task.yield()` between steps lets other tasks run."
)

NOTES = [
    {"symbol": "Atomic", "status": "not provided", "reason": ATOMIC},
    {"symbol": "Atomic.*", "status": "not provided", "reason": ATOMIC},
    {"symbol": "Bag", "status": "not provided", "reason": BAG},
    {"symbol": "Bag.*", "status": "not provided", "reason": BAG},
    {"symbol": "Observer", "status": "not provided", "reason": OBSERVER_BASE},
    {"symbol": "Observer.*", "status": "not provided", "reason": OBSERVER_BASE},
    {
        "symbol": "Reactive.data(with:)",
        "status": "not provided",
        "reason": "`URLSession` lives in FoundationNetworking on Linux, which would link libcurl "
        "into every program that uses Mailbox. Wrap `URLSession.dataTask(with:completionHandler:)` "
        "in `SignalProducer { observer, lifetime in … }` and cancel the task in "
        "`lifetime.observeEnded`.",
    },
    {"symbol": "TestScheduler.advance()", "signature": "async", "status": "not provided", "reason": ASYNC_ADVANCE},
    {"symbol": "TestScheduler.advance(by:)", "signature": "async", "status": "not provided", "reason": ASYNC_ADVANCE},
    {"symbol": "TestScheduler.advance(to:)", "signature": "async", "status": "not provided", "reason": ASYNC_ADVANCE},
    {"symbol": "TestScheduler.run()", "signature": "async", "status": "not provided", "reason": ASYNC_ADVANCE},
    {
        "symbol": "TestScheduler.schedule(after:interval:leeway:action:)",
        "signature": "leeway: DispatchTimeInterval=",
        "status": "compatible",
        "reason": "Mailbox's `leeway:` has no default here; a call without it resolves to "
        "`DateScheduler.schedule(after:interval:action:)`, which passes a leeway that virtual time "
        "ignores anyway.",
    },
    {
        "symbol": "Signal.dematerializeResults()",
        "status": "compatible",
        "reason": "Declared `where Value: ResultProtocol` (as `dematerialize()` uses `EventProtocol`) "
        "instead of `<Success, Failure> where Value == Result<Success, Failure>`: the same calls "
        "compile and give the same types.",
    },
    {
        "symbol": "SignalProducer.dematerializeResults()",
        "status": "compatible",
        "reason": "Declared `where Value: ResultProtocol`; see `Signal.dematerializeResults()`.",
    },
    {
        "symbol": "SignalProducer.init(values:_:_:)",
        "status": "compatible",
        "mailbox": "SignalProducer.init(values:_:)",
        "reason": "Mailbox declares `init(values first: Value, _ rest: Value...)`: it accepts every "
        "ReactiveSwift call (two values or more), and a single value too.",
    },
]

# The unconditionally unavailable declarations of ReactiveSwift's `Deprecations+Removals.swift`
# (the symbol-graph extractor leaves them out, so they are listed here by hand).
UNAVAILABLE = [
    {
        "status": "not provided",
        "declaration": "Signal.init(_ generator: (Observer) -> Disposable?)",
        "reason": "Unavailable in ReactiveSwift 3 and later; use `Signal { observer, lifetime in … }`.",
    },
    {
        "status": "(Mailbox's own)",
        "declaration": "Lifetime.add(_ d: Disposable?) -> Disposable?",
        "reason": "Unavailable in ReactiveSwift (use `observeEnded(_:)`). Mailbox does declare "
        "`Lifetime.add(_:)` (disposes the disposable when the lifetime ends, as `+=` does).",
    },
]
