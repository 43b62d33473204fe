import Dispatch
import Foundation
import Mailbox

/// How a key/value bucket is made (`NATSConnection.createKeyValue`).
public struct NATSKeyValueConfiguration: Sendable {
    /// The bucket's name: letters, digits, `-` and `_`.
    public var bucket: String
    /// Values kept per key (1 to 64); older revisions are discarded.
    public var history = 1
    /// How long a value lives; nil: for ever.
    public var ttl: Duration?
    /// Largest value in bytes; nil: the server's limit.
    public var maxValueSize: Int?
    /// Keep the bucket in memory instead of files.
    public var inMemory = false
    /// Copies across a JetStream cluster (1 on a single server).
    public var replicas = 1

    /// A configuration for `bucket`, every other field at its default.
    public init(bucket: String) {
        self.bucket = bucket
    }
}

/// What a key/value entry records.
public enum NATSKeyValueOperation: String, Sendable, Hashable {
    case put
    /// The key was deleted (its history is kept).
    case delete
    /// The key was purged (its history is gone).
    case purge
}

/// One revision of a key.
public struct NATSKeyValueEntry: Sendable, Hashable {
    /// The bucket it is in.
    public var bucket: String
    /// The key.
    public var key: String
    /// The value (empty for a delete or purge).
    public var value: [UInt8]
    /// The revision: the bucket's stream sequence number of this entry. Compare-and-set
    /// (`update`) takes the revision it expects to be the key's last.
    public var revision: UInt64
    /// A put, or a delete or purge marker.
    public var operation: NATSKeyValueOperation

    /// The value decoded as UTF-8.
    public var string: String { String(decoding: value, as: UTF8.self) }
}

/// What a watch sends.
public enum NATSKeyValueWatchEvent: Sendable, Hashable {
    /// A key's latest value when the watch started, or a change after.
    case entry(NATSKeyValueEntry)
    /// Every value that existed when the watch started has been sent (once, possibly first).
    case upToDate
}

/// A JetStream key/value bucket: a stream `KV_<bucket>` on subjects `$KV.<bucket>.<key>`, as
/// nats.go and the `nats` CLI make it, so buckets are shared with clients of other languages.
///
/// Keys are subject tokens: letters, digits, `-`, `_`, `=`, `/` and `.` between tokens.
///
/// Thread-safety: every method may be called from any thread. Each operation is a request to
/// the server, so it fails like `NATSConnection.request` (`timedOut`, `noResponders` when
/// JetStream is not enabled, `disconnected`), and with `jetStream` when the API refuses.
public final class NATSKeyValue: Sendable {
    /// The bucket's name.
    public let bucket: String
    let connection: NATSConnection
    let timeout: Duration

    var streamName: String { "KV_\(bucket)" }
    func subject(for key: String) -> String { "$KV.\(bucket).\(key)" }

    init(bucket: String, connection: NATSConnection, timeout: Duration) {
        self.bucket = bucket
        self.connection = connection
        self.timeout = timeout
    }

    /// Sets `key` to `value` whatever it was; returns the new revision.
    @discardableResult
    public func put(_ key: String, _ value: [UInt8]) async throws(NATSError) -> UInt64 {
        try await publish(key, value, headers: nil)
    }

    /// Sets `key` only if it has no value (never set, deleted or purged); returns the revision.
    /// Of two clients creating the same key, exactly one succeeds.
    ///
    /// - Throws: `keyExists` when the key has a value.
    @discardableResult
    public func create(_ key: String, _ value: [UInt8]) async throws(NATSError) -> UInt64 {
        do {
            return try await update(key, value, expectedRevision: 0)
        } catch where error.code == .wrongLastRevision {
            // The last entry may be a delete or purge marker: then creating is updating it.
            guard let last = try await entry(key), last.operation != .put else {
                throw NATSError(.keyExists, "\(bucket)/\(key) has a value")
            }
            do {
                return try await update(key, value, expectedRevision: last.revision)
            } catch where error.code == .wrongLastRevision {
                throw NATSError(.keyExists, "\(bucket)/\(key) was created meanwhile")
            }
        }
    }

    /// Sets `key` only if its last revision is `expectedRevision` (compare-and-set); returns
    /// the new revision. Of two clients updating from the same revision, exactly one succeeds.
    ///
    /// - Throws: `wrongLastRevision` when another revision came in between.
    @discardableResult
    public func update(_ key: String, _ value: [UInt8], expectedRevision: UInt64) async throws(NATSError) -> UInt64 {
        var headers = NATSHeaders()
        headers.append(String(expectedRevision), for: "Nats-Expected-Last-Subject-Sequence")
        return try await publish(key, value, headers: headers)
    }

    /// The key's value, or nil when it has none (never set, deleted or purged).
    public func get(_ key: String) async throws(NATSError) -> NATSKeyValueEntry? {
        guard let entry = try await entry(key), entry.operation == .put else { return nil }
        return entry
    }

    /// Deletes `key` (a marker entry; the history stays until purged). Returns its revision.
    /// With `expectedRevision`, only if the key's last revision is that one (compare-and-delete).
    ///
    /// - Throws: `wrongLastRevision` when `expectedRevision` is given and another revision
    ///   came in between.
    @discardableResult
    public func delete(_ key: String, expectedRevision: UInt64? = nil) async throws(NATSError) -> UInt64 {
        var headers = NATSHeaders()
        headers.append("DEL", for: "KV-Operation")
        if let expectedRevision { headers.append(String(expectedRevision), for: "Nats-Expected-Last-Subject-Sequence") }
        return try await publish(key, [], headers: headers)
    }

    /// Purges `key`: its history is dropped, a purge marker remains. Returns its revision.
    @discardableResult
    public func purge(_ key: String) async throws(NATSError) -> UInt64 {
        var headers = NATSHeaders()
        headers.append("PURGE", for: "KV-Operation")
        headers.append("sub", for: "Nats-Rollup")
        return try await publish(key, [], headers: headers)
    }

    // MARK: - Internals

    /// The key's last entry, whatever its operation, or nil.
    func entry(_ key: String) async throws(NATSError) -> NATSKeyValueEntry? {
        try Self.checkKey(key)
        let body = try JSONSerialization.data(withJSONObject: ["last_by_subj": subject(for: key)])
        let reply = try await connection.jetStreamRequest("STREAM.MSG.GET.\(streamName)", body: Array(body), timeout: timeout)
        struct Response: Decodable {
            struct Stored: Decodable { var subject: String; var seq: UInt64; var hdrs: String?; var data: String? }
            var message: Stored?
            var error: _JetStreamAPIError?
        }
        let response = try Self.decode(Response.self, reply)
        if let error = response.error {
            if error.err_code == 10037 || error.code == 404 { return nil }  // no message found
            throw error.natsError("get \(bucket)/\(key)")
        }
        guard let stored = response.message else { throw NATSError(.jetStream, "get \(bucket)/\(key): no message in the reply") }
        var operation = NATSKeyValueOperation.put
        if let hdrs = stored.hdrs, let bytes = Data(base64Encoded: hdrs) {
            let headers = try? NATSHeaders(parsing: Array(bytes)[...])
            operation = Self.operation(headers)
        }
        let value = stored.data.flatMap { Data(base64Encoded: $0) }.map(Array.init) ?? []
        return NATSKeyValueEntry(bucket: bucket, key: key, value: value, revision: stored.seq, operation: operation)
    }

    /// Publishes to the key's subject and waits for JetStream's acknowledgement; the revision.
    private func publish(_ key: String, _ value: [UInt8], headers: NATSHeaders?) async throws(NATSError) -> UInt64 {
        try Self.checkKey(key)
        let reply = try await connection.request(value, to: subject(for: key), headers: headers, timeout: timeout)
        struct Ack: Decodable { var seq: UInt64?; var error: _JetStreamAPIError? }
        let ack = try Self.decode(Ack.self, reply)
        if let error = ack.error {
            if error.err_code == 10071 { throw NATSError(.wrongLastRevision, "\(bucket)/\(key): \(error.description ?? "wrong last sequence")", jetStreamCode: 10071) }
            throw error.natsError("\(bucket)/\(key)")
        }
        guard let seq = ack.seq else { throw NATSError(.jetStream, "\(bucket)/\(key): an acknowledgement without a sequence") }
        return seq
    }

    static func operation(_ headers: NATSHeaders?) -> NATSKeyValueOperation {
        switch headers?["KV-Operation"] {
        case "DEL": .delete
        case "PURGE": .purge
        default: .put
        }
    }

    /// Keys are subject tokens without wildcards.
    static func checkKey(_ key: String) throws(NATSError) {
        guard NATSFrames.isValidSubject(key), !key.utf8.contains(where: { $0 == 42 || $0 == 62 }) else {
            throw NATSError(.invalidSubject, "key \(key.debugDescription)")
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, _ message: NATSMessage) throws(NATSError) -> T {
        do {
            return try JSONDecoder().decode(type, from: Data(message.payload))
        } catch {
            throw NATSError(.jetStream, "an answer that is not the expected JSON: \(message.string.prefix(200))")
        }
    }
}

/// The `error` object of a JetStream API answer.
struct _JetStreamAPIError: Decodable, Sendable {
    var code: Int
    var err_code: Int?
    var description: String?

    func natsError(_ context: String) -> NATSError {
        NATSError(.jetStream, "\(context): \(description ?? "error \(code)")", jetStreamCode: err_code)
    }
}

extension JSONSerialization {
    /// `data(withJSONObject:)` with a typed error.
    static func data(withJSONObject object: [String: Any]) throws(NATSError) -> Data {
        do {
            return try data(withJSONObject: object, options: [.sortedKeys])
        } catch {
            throw NATSError(.jetStream, "cannot encode a request: \(error)")
        }
    }
}

extension NATSConnection {
    /// Creates the bucket (or finds it, if it exists with the same configuration).
    ///
    /// - Throws: `jetStream` when the server has no JetStream (`noResponders` on some
    ///   servers), the name is invalid, or a bucket of that name exists with another
    ///   configuration (`jetStreamCode` 10058).
    public func createKeyValue(_ configuration: NATSKeyValueConfiguration, timeout: Duration = .seconds(5)) async throws(NATSError) -> NATSKeyValue {
        let bucket = configuration.bucket
        guard !bucket.isEmpty, bucket.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 | 0x20 >= 97 && $0 | 0x20 <= 122) || $0 == 45 || $0 == 95 }) else {
            throw NATSError(.invalidSubject, "bucket name \(bucket.debugDescription)")
        }
        precondition((1...64).contains(configuration.history), "NATSKeyValueConfiguration.history must be 1...64")
        var stream: [String: Any] = [
            "name": "KV_\(bucket)",
            "subjects": ["$KV.\(bucket).>"],
            "retention": "limits",
            "max_consumers": -1,
            "max_msgs": -1,
            "max_bytes": -1,
            "max_msgs_per_subject": configuration.history,
            "max_msg_size": configuration.maxValueSize ?? -1,
            "storage": configuration.inMemory ? "memory" : "file",
            "discard": "new",
            "num_replicas": configuration.replicas,
            "allow_rollup_hdrs": true,
            "deny_delete": true,
            "deny_purge": false,
            "allow_direct": true,
            "duplicate_window": 120_000_000_000,
        ]
        if let ttl = configuration.ttl {
            let nanoseconds = ttl.components.seconds * 1_000_000_000 + ttl.components.attoseconds / 1_000_000_000
            stream["max_age"] = nanoseconds
            stream["duplicate_window"] = min(nanoseconds, 120_000_000_000)
        } else {
            stream["max_age"] = 0
        }
        let body = try JSONSerialization.data(withJSONObject: stream)
        let reply = try await jetStreamRequest("STREAM.CREATE.KV_\(bucket)", body: Array(body), timeout: timeout)
        struct Response: Decodable { var error: _JetStreamAPIError? }
        if let error = try NATSKeyValue.decode(Response.self, reply).error {
            throw error.natsError("create bucket \(bucket)")
        }
        return NATSKeyValue(bucket: bucket, connection: self, timeout: timeout)
    }

    /// An existing bucket.
    /// - Throws: `jetStream` with `jetStreamCode` 10059 when there is no such bucket.
    public func keyValue(_ bucket: String, timeout: Duration = .seconds(5)) async throws(NATSError) -> NATSKeyValue {
        let reply = try await jetStreamRequest("STREAM.INFO.KV_\(bucket)", body: [], timeout: timeout)
        struct Response: Decodable { var error: _JetStreamAPIError? }
        if let error = try NATSKeyValue.decode(Response.self, reply).error {
            throw error.natsError("bucket \(bucket)")
        }
        return NATSKeyValue(bucket: bucket, connection: self, timeout: timeout)
    }

    /// Deletes a bucket and everything in it.
    public func deleteKeyValue(_ bucket: String, timeout: Duration = .seconds(5)) async throws(NATSError) {
        let reply = try await jetStreamRequest("STREAM.DELETE.KV_\(bucket)", body: [], timeout: timeout)
        struct Response: Decodable { var error: _JetStreamAPIError? }
        if let error = try NATSKeyValue.decode(Response.self, reply).error {
            throw error.natsError("delete bucket \(bucket)")
        }
    }

    /// A request to the JetStream API (`$JS.API.<api>`). No responders means no JetStream.
    func jetStreamRequest(_ api: String, body: [UInt8], timeout: Duration) async throws(NATSError) -> NATSMessage {
        do {
            return try await request(body, to: "$JS.API.\(api)", timeout: timeout)
        } catch where error.code == .noResponders {
            throw NATSError(.jetStream, "JetStream is not enabled on the server (no responders on $JS.API.\(api))")
        }
    }
}
