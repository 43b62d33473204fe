// mailbox-bench: the project's benchmarks, one JSON line per run on stdout.
//
//   mailbox-bench <name> [sizes...]   run one benchmark (sizes are positional; defaults ~1-3 s)
//   mailbox-bench all                 run every benchmark with its default sizes (those that
//                                     need a server only when it is configured: nats-*)
//   mailbox-bench list                print the benchmark names, one per line
//   mailbox-bench help                print each benchmark's usage and summary (stderr)
//
// Exit codes: 0 ran (check "ok" in the line), 1 a self-check failed, 2 bad usage.
// Field conventions are described in docs/Performance.md (runtime, bench, msgs, seconds,
// msgs_per_s, ns_per_msg, peak_rss_mb, threads) plus baseline, baseline_ns_per_msg and ratio
// (ours / baseline, ns per message) where a reference implementation ran in the same process.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

func printUsage() {
    printDiagnostic("usage: mailbox-bench <name> [sizes...] | all | list | help")
    for benchmark in BenchmarkRegistry.all {
        printDiagnostic("  \(benchmark.usage)\n      \(benchmark.summary)")
    }
}

/// Runs `benchmark` with `sizes`, emits its lines, and returns whether every self-check passed.
func run(_ benchmark: Benchmark, sizes: [Int]) throws(BenchmarkError) -> Bool {
    if let reason = benchmark.unavailableReason() { throw .unavailable(reason) }
    var allOK = true
    for result in try benchmark.run(sizes) {
        result.jsonLine(bench: benchmark.name).emit()
        allOK = allOK && (result.ok ?? true)
    }
    return allOK
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard let command = arguments.first else {
    printUsage()
    exit(2)
}

switch command {
case "list":
    for benchmark in BenchmarkRegistry.all { print(benchmark.name) }
case "help", "-h", "--help":
    printUsage()
case "all":
    guard arguments.count == 1 else {
        printDiagnostic("'all' takes no sizes; it runs every benchmark with its defaults")
        exit(2)
    }
    var allOK = true
    for benchmark in BenchmarkRegistry.all {
        if let reason = benchmark.unavailableReason() {
            printDiagnostic("skipping \(benchmark.name): \(reason)")
            continue
        }
        printDiagnostic("running \(benchmark.usage)")
        do {
            allOK = try run(benchmark, sizes: benchmark.sizes(from: [])) && allOK
        } catch {
            printDiagnostic("mailbox-bench: \(benchmark.name): \(error)")
            exit(2)
        }
    }
    exit(allOK ? 0 : 1)
default:
    guard let benchmark = BenchmarkRegistry.benchmark(named: command) else {
        printDiagnostic("mailbox-bench: unknown benchmark '\(command)'; known: "
            + BenchmarkRegistry.all.map(\.name).joined(separator: ", "))
        exit(2)
    }
    do {
        let sizes = try benchmark.sizes(from: Array(arguments.dropFirst()))
        exit(try run(benchmark, sizes: sizes) ? 0 : 1)
    } catch {
        printDiagnostic("mailbox-bench: \(benchmark.name): \(error)")
        exit(2)
    }
}
