import Mailbox
import MailboxNATS

/// Names one node of a cluster owns at a time — a nick, a singleton, a shard — kept in a NATS
/// key/value bucket (JetStream) and changed only by compare-and-set, so NATS is the arbiter:
/// of two nodes claiming the same key at once, exactly one wins.
///
/// ```swift
/// let nicks = try await cluster.claims("nicks")
/// if try await nicks.claim("alice") { /* this node owns "alice" */ }
/// try await nicks.release("alice")
/// ```
///
/// - A claim records its owner's `ClusterNode` (name and incarnation). It is released by its
///   owner (`release`), or, when the owner is downed or leaves, by the surviving member with
///   the smallest node name; a claim whose owner is gone — downed, restarted under a new
///   incarnation, or served by nobody (NATS "no responders" on its node subject) — is also
///   taken over by the next `claim`. A live owner's claim is never taken: an unreachable but
///   not yet downed owner still owns it.
/// - `lost` tells this node when a key it owned was taken or deleted by another node (after
///   this node was downed by the others, say): whatever it guarded must stop.
/// - Keys are any non-empty strings; they are stored escaped (letters, digits, `-` and `_`
///   as they are, every other byte as `=XX`), so `nats kv ls` shows them readably.
///
/// Thread-safety: every method may be called from any thread, concurrently. Failure modes:
/// the methods throw `ClusterError` `.claimFailed` when the bucket does not answer (its
/// `nats` error says why) or a key changed under this node eight times in a row.
public final class ClusterClaims: Sendable {
    private struct State: Sendable {
        /// Every key's owner and revision, as the bucket's watch last said (escaped keys).
        var owners: [String: Owned] = [:]
        /// The keys this node owns, with the revision that made them its own.
        var mine: [String: UInt64] = [:]
        var watch: (any Disposable)?
        var memberWatch: (any Disposable)?
    }

    private struct Owned: Sendable {
        var owner: ClusterNode?
        var revision: UInt64
    }

    /// The bucket's name on the NATS server (`<clusterName>_<name>`).
    public let bucket: String
    /// Keys (unescaped) this node owned and another node took or deleted, in the order seen.
    public let lost: Signal<String, Never>

    private let keyValue: NATSKeyValue
    private let core: _ClusterCore
    private let lostInput: Signal<String, Never>.Observer
    private let state = LockedValueBox(State())

    init(keyValue: NATSKeyValue, core: _ClusterCore) {
        self.keyValue = keyValue
        self.bucket = keyValue.bucket
        self.core = core
        (lost, lostInput) = Signal<String, Never>.pipe()
    }

    deinit {
        state.withLockedValue { state in
            state.watch?.dispose()
            state.memberWatch?.dispose()
        }
    }

    /// Starts following the bucket and the members (for `lost` and for releasing a downed
    /// node's claims).
    func start() {
        let watch = keyValue.watch().startWithValues { [weak self] event in
            if case let .entry(entry) = event { self?.changed(entry) }
        }
        let members = core.memberEvents.observeValues { [weak self] event in
            guard let self, event.member.status == .down || event.member.status == .removed else { return }
            Task { await self.releaseClaims(of: event.member.node) }
        }
        state.withLockedValue { state in
            state.watch = watch
            state.memberWatch = members
        }
    }

    /// Claims `key` for this node.
    ///
    /// - Returns: true when this node owns `key` now (it claimed it, or already owned it, or
    ///   took it over from a gone owner); false when a live node owns it.
    /// - Throws: `ClusterError` `.claimFailed` (the bucket did not answer; `nats` says why),
    ///   `.invalidName` for an empty key.
    public func claim(_ key: String) async throws(ClusterError) -> Bool {
        let escaped = try Self.escape(key)
        let me = core.me
        let mine = Array(me.description.utf8)
        for _ in 0 ..< 8 {
            let entry = try await run("read \(key)") { () async throws(NATSError) in try await self.keyValue.get(escaped) }
            guard let entry else {
                do throws(NATSError) {
                    own(escaped, revision: try await keyValue.create(escaped, mine))
                    return true
                } catch where error.code == .keyExists {
                    continue  // another node was faster: look again
                } catch {
                    throw Self.failed("claim \(key)", error)
                }
            }
            let owner = Self.node(entry.value)
            if owner == me {
                own(escaped, revision: entry.revision)
                return true
            }
            guard let owner, await core.isGone(owner) else { return false }
            do throws(NATSError) {
                own(escaped, revision: try await keyValue.update(escaped, mine, expectedRevision: entry.revision))
                return true
            } catch where error.code == .wrongLastRevision {
                continue
            } catch {
                throw Self.failed("claim \(key)", error)
            }
        }
        throw ClusterError(code: .claimFailed, text: "\(bucket)/\(key) changed eight times while \(me) claimed it")
    }

    /// Releases `key` if this node owns it; does nothing otherwise (not owned, or owned by
    /// another node).
    ///
    /// - Throws: `ClusterError` `.claimFailed` (the bucket did not answer), `.invalidName`
    ///   for an empty key.
    public func release(_ key: String) async throws(ClusterError) {
        let escaped = try Self.escape(key)
        _ = state.withLockedValue { $0.mine.removeValue(forKey: escaped) }
        let entry = try await run("read \(key)") { () async throws(NATSError) in try await self.keyValue.get(escaped) }
        guard let entry, Self.node(entry.value) == core.me else { return }
        do throws(NATSError) {
            try await keyValue.delete(escaped, expectedRevision: entry.revision)
        } catch where error.code == .wrongLastRevision {
            // Changed meanwhile: no longer this node's to release.
        } catch {
            throw Self.failed("release \(key)", error)
        }
    }

    /// The live node owning `key`, or nil when nobody does (never claimed, released, or its
    /// owner is gone).
    ///
    /// - Throws: `ClusterError` `.claimFailed` (the bucket did not answer), `.invalidName`
    ///   for an empty key.
    public func owner(of key: String) async throws(ClusterError) -> ClusterNode? {
        let escaped = try Self.escape(key)
        let entry = try await run("read \(key)") { () async throws(NATSError) in try await self.keyValue.get(escaped) }
        guard let entry, let owner = Self.node(entry.value) else { return nil }
        if owner == core.me { return owner }
        return await core.isGone(owner) ? nil : owner
    }

    /// The keys this node owns (unescaped), as far as it knows.
    public var owned: Set<String> {
        Set(state.withLockedValue { Array($0.mine.keys) }.map(Self.unescape))
    }

    // MARK: - Internals

    private func own(_ escaped: String, revision: UInt64) {
        state.withLockedValue { state in
            if let known = state.mine[escaped], known >= revision { return }
            state.mine[escaped] = revision
        }
    }

    /// A change seen on the bucket: remembered, and told as `lost` when it takes a key of
    /// this node's (a revision after the one that made it this node's).
    private func changed(_ entry: NATSKeyValueEntry) {
        let owner = entry.operation == .put ? Self.node(entry.value) : nil
        let me = core.me
        let lost = state.withLockedValue { state -> Bool in
            state.owners[entry.key] = owner == nil ? nil : Owned(owner: owner, revision: entry.revision)
            guard let since = state.mine[entry.key], entry.revision > since, owner != me else { return false }
            state.mine[entry.key] = nil
            return true
        }
        if lost { lostInput.send(value: Self.unescape(entry.key)) }
    }

    /// Deletes the claims of `node` (downed or left) if this node is the live member with the
    /// smallest name; the others leave it to that one (and to `claim`'s take-over).
    private func releaseClaims(of node: ClusterNode) async {
        let up = core.membersProperty.value.filter { $0.status == .up }.map(\.node)
        guard let first = up.min(by: { $0.description < $1.description }), first == core.me else { return }
        let theirs = state.withLockedValue { state in
            state.owners.compactMap { $0.value.owner == node ? ($0.key, $0.value.revision) : nil }
        }
        for (key, revision) in theirs {
            // A key changed meanwhile (taken over, released) is not theirs any more: skip it.
            _ = try? await keyValue.delete(key, expectedRevision: revision)
        }
    }

    private func run<T>(_ what: String, _ body: () async throws(NATSError) -> T) async throws(ClusterError) -> T {
        do throws(NATSError) {
            return try await body()
        } catch {
            throw Self.failed(what, error)
        }
    }

    private static func failed(_ what: String, _ error: NATSError) -> ClusterError {
        ClusterError(code: .claimFailed, text: "cannot \(what)", nats: error)
    }

    private static func node(_ value: [UInt8]) -> ClusterNode? {
        let text = String(decoding: value, as: UTF8.self)
        guard let colon = text.lastIndex(of: ":"), let incarnation = UInt64(text[text.index(after: colon)...], radix: 16) else { return nil }
        return ClusterNode(name: String(text[..<colon]), incarnation: incarnation)
    }

    /// Letters, digits, `-` and `_` stay; every other UTF-8 byte becomes `=XX`.
    static func escape(_ key: String) throws(ClusterError) -> String {
        guard !key.isEmpty else { throw ClusterError(code: .invalidName, text: "an empty claim key") }
        return _Escaping.escape(key)
    }

    static func unescape(_ escaped: String) -> String {
        _Escaping.unescape(escaped)
    }
}

extension ClusterSystem {
    /// The claims kept in this cluster's bucket `name` (`<clusterName>_<name>`, made if it
    /// does not exist; the same object for the same name on this node).
    ///
    /// - Parameters:
    ///   - name: Letters, digits, `-` and `_`.
    ///   - replicas: Copies of the bucket across a JetStream cluster (1 on a single server;
    ///     3 so that claims outlive one server of three). Used only when the bucket is made.
    /// - Throws: `ClusterError` `.invalidName` for a bad name; `.claimFailed` when the bucket
    ///   cannot be made (JetStream off: start nats-server with `-js`).
    public func claims(_ name: String, replicas: Int = 1) async throws(ClusterError) -> ClusterClaims {
        if let claims = claimsByName.withLockedValue({ $0[name] }) { return claims }
        guard !name.isEmpty, name.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 | 0x20 >= 97 && $0 | 0x20 <= 122) || $0 == 45 || $0 == 95 }) else {
            throw ClusterError(code: .invalidName, text: "claims \(name.debugDescription): letters, digits, '-' and '_' only")
        }
        var bucket = NATSKeyValueConfiguration(bucket: "\(configuration.clusterName)_\(name)")
        bucket.replicas = replicas
        let keyValue: NATSKeyValue
        do throws(NATSError) {
            keyValue = try await connection.createKeyValue(bucket)
        } catch {
            throw ClusterError(code: .claimFailed, text: "cannot make the claims bucket \(bucket.bucket) (is JetStream enabled?)", nats: error)
        }
        let made = ClusterClaims(keyValue: keyValue, core: core)
        let claims = claimsByName.withLockedValue { claims in
            if let earlier = claims[name] { return earlier }
            claims[name] = made
            return made
        }
        if claims === made { made.start() }
        return claims
    }
}

extension _ClusterCore {
    /// Whether `owner` is gone for good: downed here, this node's own earlier start or one a
    /// newer start of the same name replaced, or, when no member, served by nobody. A member
    /// that is up, joining or only unreachable is not gone.
    func isGone(_ owner: ClusterNode) async -> Bool {
        if owner.name == me.name { return owner != me }
        let known = state.withLockedValue { state -> Bool? in
            if state.membership.isDowned(owner) { return true }
            if state.membership.status(of: owner) != nil { return false }
            if state.membership.members.contains(where: { $0.node.name == owner.name && $0.status == .up }) { return true }
            return nil
        }
        if let known { return known }
        return await probeUnknownNode(owner)
    }
}
