/// Every benchmark `mailbox-bench` knows, by family, in `list` order.
///
/// Each family lives in its own file under `Benchmarks/` as an `extension BenchmarkRegistry`
/// with one `static let` array; adding a benchmark to an existing family is a change to that
/// file only. A new family adds its file and one term here.
enum BenchmarkRegistry {
    static let all: [Benchmark] = mpsc + schedulers + actors + supervision + streams + bridges + routing + nats + cluster

    /// The benchmark called `name`, if there is one.
    static func benchmark(named name: String) -> Benchmark? {
        all.first { $0.name == name }
    }
}
