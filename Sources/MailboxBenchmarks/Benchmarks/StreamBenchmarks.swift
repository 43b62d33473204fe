// Stream benchmarks (Signal, SignalProducer, operators): add each as a `Benchmark` to this array;
// the driver handles sizes, JSON and exit codes. Where a baseline runs in the same process, set
// `BenchmarkResult.baseline` and the driver reports `baseline_ns_per_msg` and `ratio`.

extension BenchmarkRegistry {
    static let streams: [Benchmark] = []
}
