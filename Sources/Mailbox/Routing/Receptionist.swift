import Synchronization

/// A registry of actors by service (Akka Typed's `Receptionist`, Erlang's `pg` process groups),
/// one per `ActorSystem` (`system.receptionist`).
///
/// Actors are registered under a `ServiceKey`; anyone can then `find` the actors of a service
/// once, or follow its *listing* as it changes: as a `Property` (`listing(for:)`), a
/// `SignalProducer`/`Signal`, or as messages to an actor (`subscribe(_:_:)`). An actor is
/// deregistered automatically when it terminates; registering the same actor twice, or
/// deregistering one that is not registered, does nothing.
///
/// ```
/// let workers = ServiceKey<Job>("workers")
/// let listing = system.receptionist.listing(for: workers)   // a Property<Set<ActorRef<Job>>>
/// system.receptionist.register(try system.spawn(worker, name: "w1"), with: workers)
/// // listing.value.count == 1; it drops back to 0 when w1 terminates
/// ```
///
/// The listing is local to this system: no cluster. It is kept as one `MutableProperty` per
/// key, so a distribution adapter could later gossip listings by observing them and
/// registering remote refs.
///
/// Thread-safety: every member may be called from any thread, and from inside an observer of a
/// listing (re-entrance: registering from an observer delivers the nested change depth-first,
/// as for any `MutableProperty`). Listings are delivered on the thread that changed them
/// (a registering thread, or the terminating actor's mailbox run); when two threads change a
/// listing at the same moment, an observer may see the same listing twice.
public final class Receptionist: Sendable {
    /// One service's registrations: the death watch of each registered actor, and the listing
    /// derived from them. The table is behind its lock; the listing is a thread-safe property.
    final class Service<Message: Sendable>: Sendable {
        struct Registrations {
            /// The death watch of each registered actor (cancelled when it is deregistered).
            var watches: [ActorRef<Message>: _TerminationWatcher] = [:]
            /// Bumped by every change, so that the newest snapshot wins the listing.
            var version: UInt64 = 0
        }

        let registrations = LockedValueBox(Registrations())
        let listing = MutableProperty<Set<ActorRef<Message>>>([])
        /// The version the listing shows; written only inside the listing's `modify`.
        private let shownVersion = Atomic<UInt64>(0)

        /// Applies `change` to the table; if it changed something, publishes the new listing
        /// and returns `true`.
        func update(_ change: (inout [ActorRef<Message>: _TerminationWatcher]) -> Bool) -> Bool {
            let snapshot = registrations.withLockedValue { registrations -> (Set<ActorRef<Message>>, UInt64)? in
                guard change(&registrations.watches) else { return nil }
                registrations.version += 1
                return (Set(registrations.watches.keys), registrations.version)
            }
            guard let (refs, version) = snapshot else { return false }
            // Sent outside the table's lock (observers may call back in). Two threads changing
            // the table at once may publish in either order: an older snapshot never replaces
            // a newer one (it repeats the listing shown instead).
            listing.modify { shown in
                if version > shownVersion.load(ordering: .relaxed) {
                    shown = refs
                    shownVersion.store(version, ordering: .relaxed)
                }
            }
            return true
        }
    }

    /// The services asked about so far (registered, looked up or followed), by key. A service
    /// is never removed: its listing may be followed while it is empty.
    private let services = LockedValueBox<[_AnyServiceKey: any Sendable]>([:])

    init() {}

    private func service<Message>(_ key: ServiceKey<Message>) -> Service<Message> {
        services.withLockedValue { services in
            if let existing = services[key.erased] {
                // The table is keyed by the message type too, so the cast cannot fail.
                return existing as! Service<Message>
            }
            let created = Service<Message>()
            services[key.erased] = created
            return created
        }
    }

    /// Registers `ref` under `key`: it is in the listing until it is deregistered or
    /// terminates. Registering an actor already registered under `key` does nothing;
    /// registering one that has already terminated adds it and removes it again at once.
    public func register<Message>(_ ref: ActorRef<Message>, with key: ServiceKey<Message>) {
        // The watch starts once the ref is listed, so that an actor already terminated is
        // removed after it was added, never before.
        let watcher = _TerminationWatcher(watching: ref.target, system: ref.target.system) { [weak self] _ in
            self?.deregister(ref, from: key)
        }
        let isNew = service(key).update { watches in
            guard watches[ref] == nil else { return false }
            watches[ref] = watcher
            return true
        }
        if isNew { watcher.start() }
    }

    /// Removes `ref` from `key`'s listing (and stops watching it). Does nothing if it is not
    /// registered there.
    public func deregister<Message>(_ ref: ActorRef<Message>, from key: ServiceKey<Message>) {
        var removed: _TerminationWatcher?
        _ = service(key).update { watches in
            removed = watches.removeValue(forKey: ref)
            return removed != nil
        }
        removed?.cancel()
    }

    /// The actors registered under `key` now (empty if none).
    public func find<Message>(_ key: ServiceKey<Message>) -> Set<ActorRef<Message>> {
        service(key).listing.value
    }

    /// The actors registered under `key`, as a property that follows every registration and
    /// deregistration (Akka's `Subscribe`). Its `producer` sends the current listing, then
    /// each change; its `signal` only the changes.
    public func listing<Message>(for key: ServiceKey<Message>) -> Property<Set<ActorRef<Message>>> {
        Property(capturing: service(key).listing)
    }

    /// Tells `subscriber` the listing of `key` now and after every change, until `subscriber`
    /// terminates or the returned disposable is disposed (Akka's `Subscribe` with an actor).
    /// The listings arrive in the order of the changes.
    @discardableResult
    public func subscribe<Message>(_ key: ServiceKey<Message>, _ subscriber: ActorRef<Listing<Message>>) -> any Disposable {
        let subscription = service(key).listing.producer.startWithValues { refs in
            subscriber.tell(Listing(key: key, refs: refs))
        }
        let watcher = subscriber.whenTerminated { _ in subscription.dispose() }
        return AnyDisposable {
            watcher.cancel()
            subscription.dispose()
        }
    }
}

extension Receptionist {
    /// The actors registered under a key at one moment, as told to a subscriber.
    public struct Listing<Message: Sendable>: Sendable, Hashable {
        /// The service.
        public let key: ServiceKey<Message>
        /// Its actors at that moment.
        public let refs: Set<ActorRef<Message>>
    }
}
