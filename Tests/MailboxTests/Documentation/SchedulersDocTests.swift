import Dispatch
import Foundation
import Testing
@testable import Mailbox

// Every snippet of docs/Schedulers.md, as a test. Keep them in sync: the doc's lines appear here
// in the same order (with assertions between them), and `snippetsOfTheDoc_appearInTheseTests`
// fails if a snippet changes without its test.

/// A thread-safe list of lines, for the examples.
// Sendable by hand: `lines` is only touched while holding `lock` (an NSLock).
final class Recorder: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []   // protected by `lock`

    func record(_ line: String) {
        lock.lock()
        lines.append(line)
        lock.unlock()
    }

    var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return lines
    }
}

/// Calls `attempt` until it returns true, waiting 1, 2, 4, … seconds between calls.
func retryWithBackOff(on scheduler: any DateScheduler, delay: Duration = .seconds(1), attempt: @escaping @Sendable () -> Bool) {
    if attempt() { return }
    scheduler.schedule(after: delay) {
        retryWithBackOff(on: scheduler, delay: delay * 2, attempt: attempt)
    }
}

@Suite("docs/Schedulers.md")
struct SchedulersDocTests {
    @Test func queueScheduler_runsInOrderAndCancels() {
        let scheduler = QueueScheduler(name: "com.example.worker")
        let recorder = Recorder()
        let done = DispatchSemaphore(value: 0)
        scheduler.schedule { recorder.record("first") }
        scheduler.schedule { recorder.record("second") }
        scheduler.schedule(after: Date().addingTimeInterval(0.01)) {
            recorder.record("later")
            done.signal()
        }
        let cancelled = scheduler.schedule(after: .milliseconds(5)) { recorder.record("never") }
        cancelled?.dispose()
        _ = done.wait(timeout: .now() + 10)     // recorder.all == ["first", "second", "later"]
        #expect(recorder.all == ["first", "second", "later"])
    }

    @Test func immediateScheduler_runsBeforeReturning() {
        let immediate = ImmediateScheduler()
        let recorder = Recorder()
        let disposable = immediate.schedule { recorder.record("ran") }
        // recorder.all == ["ran"] already, and disposable == nil
        #expect(recorder.all == ["ran"])
        #expect(disposable == nil)
    }

    @Test func operationQueueScheduler_widths() {
        let serial = OperationQueueScheduler(name: "com.example.serial")
        let wide = OperationQueueScheduler(name: "com.example.wide", maxConcurrentOperationCount: 4)
        // serial.queue.maxConcurrentOperationCount == 1, wide.queue.maxConcurrentOperationCount == 4
        #expect(serial.queue.maxConcurrentOperationCount == 1)
        #expect(wide.queue.maxConcurrentOperationCount == 4)
    }

    @Test func testScheduler_advance() {
        let scheduler = TestScheduler()
        let recorder = Recorder()
        scheduler.schedule(after: .seconds(2)) { recorder.record("two") }
        scheduler.schedule(after: .seconds(1)) { recorder.record("one") }
        #expect(recorder.all == [])
        scheduler.advance(by: .seconds(1))      // recorder.all == ["one"]
        #expect(recorder.all == ["one"])
        scheduler.advance(by: .seconds(1))      // recorder.all == ["one", "two"]
        #expect(recorder.all == ["one", "two"])
    }

    @Test func testScheduler_cancel() {
        let scheduler = TestScheduler()
        let recorder = Recorder()
        let reminder = scheduler.schedule(after: .seconds(30)) { recorder.record("reminder") }
        reminder?.dispose()                     // cancelled before it was due
        scheduler.run()                         // recorder.all == []
        #expect(recorder.all == [])
    }

    @Test func testScheduler_repeating() {
        let scheduler = TestScheduler()
        let ticks = Recorder()
        let timer = scheduler.schedule(after: .seconds(1), interval: .seconds(1)) {
            ticks.record("tick at \(scheduler.elapsed)")
        }
        scheduler.advance(by: .seconds(3))      // ticks at 1.0, 2.0 and 3.0 seconds
        #expect(ticks.all == ["tick at 1.0 seconds", "tick at 2.0 seconds", "tick at 3.0 seconds"])
        timer?.dispose()
        scheduler.advance(by: .seconds(10))     // no more ticks
        #expect(ticks.all.count == 3)
    }

    @Test func testScheduler_drivesAProgram() {
        let scheduler = TestScheduler()
        let attempts = Recorder()
        retryWithBackOff(on: scheduler) {
            attempts.record("attempt at \(scheduler.elapsed)")
            return attempts.all.count == 4
        }
        scheduler.run()
        // attempts.all == ["attempt at 0.0 seconds", "attempt at 1.0 seconds", "attempt at 3.0 seconds", "attempt at 7.0 seconds"]
        #expect(attempts.all == ["attempt at 0.0 seconds", "attempt at 1.0 seconds", "attempt at 3.0 seconds", "attempt at 7.0 seconds"])
    }

    // MARK: - The doc and these tests stay in sync

    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()   // Documentation
        .deletingLastPathComponent()   // MailboxTests
        .deletingLastPathComponent()   // Tests
        .deletingLastPathComponent()

    /// The ```swift blocks of a markdown file, each as its trimmed, non-blank lines.
    static func swiftSnippets(of markdown: String) -> [[String]] {
        var snippets: [[String]] = []
        var current: [String]?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if current == nil, trimmed == "```swift" {
                current = []
            } else if current != nil, trimmed == "```" {
                snippets.append(current!)
                current = nil
            } else if !trimmed.isEmpty {
                current?.append(trimmed)
            }
        }
        return snippets
    }

    @Test func snippetsOfTheDoc_appearInTheseTests() throws {
        let doc = try String(contentsOf: Self.packageRoot.appendingPathComponent("docs/Schedulers.md"), encoding: .utf8)
        let tests = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let testLines = tests.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let snippets = Self.swiftSnippets(of: doc)
        #expect(snippets.count == 9, "docs/Schedulers.md gained or lost a snippet: add or remove its test here")

        for snippet in snippets {
            // Each snippet's lines appear here in order (a subsequence: assertions may sit between).
            var searchFrom = testLines.startIndex
            for line in snippet {
                guard let found = testLines[searchFrom...].firstIndex(of: line) else {
                    Issue.record("docs/Schedulers.md line not found (in order) in SchedulersDocTests.swift: \(line)")
                    break
                }
                searchFrom = testLines.index(after: found)
            }
        }
    }
}
