import Foundation

/// The NATS benchmarks' reference client: the Go program `nats-gobench`
/// (`Tests/Integration/nats/gobench/main.go`, nats.go as Debian packages it), built by
/// `bash Tests/Integration/nats/go-bench.sh --build-only` into `.build/nats-gobench`.
///
/// `mailbox-bench` runs it as a child process, one mode and one payload size per run, against
/// the same server and with the same message count as its own run, and reads the one JSON line
/// it prints. The path comes from `MAILBOX_NATS_GOBENCH` (default `.build/nats-gobench`,
/// relative to the working directory, the package root under `nats.sh`).
struct GoReference: Sendable {
    /// One line of `nats-gobench`'s output.
    struct Result: Sendable, Decodable {
        var mode: String
        var payload: Int
        var messages: Int
        var seconds: Double
        var msgsPerSec: Double
        var p50us: Double?
        var p99us: Double?

        enum CodingKeys: String, CodingKey {
            case mode, payload, messages, seconds
            case msgsPerSec = "msgs_per_sec", p50us = "p50_us", p99us = "p99_us"
        }
    }

    /// The benchmark modes of `nats-gobench -modes`.
    enum Mode: String, Sendable {
        case pub, pubsub, request
    }

    let path: String
    let url: String

    /// The reference named by the environment, or why there is none (a note for the JSON line).
    static func fromEnvironment(url: String) -> (reference: GoReference?, note: String?) {
        let path = ServerCPU.environment("MAILBOX_NATS_GOBENCH") ?? ".build/nats-gobench"
        guard FileManager.default.isExecutableFile(atPath: path) else {
            return (nil, "no nats.go reference: \(path) is missing (bash Tests/Integration/nats/go-bench.sh --build-only builds it)")
        }
        return (GoReference(path: path, url: url), nil)
    }

    /// Runs `mode` once for `payload` bytes and `count` messages (or round trips); the result,
    /// or a one-line reason it failed.
    func run(_ mode: Mode, payload: Int, count: Int) -> Swift.Result<Result, GoReferenceError> {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = [
            "-url", url, "-modes", mode.rawValue, "-sizes", String(payload),
            "-n", String(count), "-requests", String(count),
        ]
        let output = Pipe()
        process.standardOutput = output
        do {
            try process.run()
        } catch {
            return .failure(GoReferenceError("cannot start \(path): \(error)"))
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            return .failure(GoReferenceError("\(path) -modes \(mode.rawValue) exited with status \(process.terminationStatus)"))
        }
        let line = data.split(separator: UInt8(ascii: "\n")).last ?? data[...]
        guard let result = try? JSONDecoder().decode(Result.self, from: Data(line)) else {
            return .failure(GoReferenceError("cannot read \(path)'s line: \(String(decoding: line, as: UTF8.self))"))
        }
        return .success(result)
    }
}

/// Why a reference run gave no figures (it goes into the line's `note`).
struct GoReferenceError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
