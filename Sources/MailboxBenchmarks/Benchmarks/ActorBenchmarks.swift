// Actor benchmarks, run by the peers harness (../shared/peers/README.md) with these names and
// positional sizes, and the same counting rule (one message = one one-way delivery):
//
//   pingpong        N            2 actors bounce one message; N one-way messages in total
//   pingpong-pairs  P N          P independent pairs, N messages in total (N/P each)
//   fanin           K N          K senders each send N/K messages to one counting receiver
//   threadring      R N          R actors in a ring pass one token N times
//   skynet          LEAVES DIV   tree of actors, DIV children each; check the leaf sum
//   spawn           N            create N live actors, then stop each and wait until all are gone
//
// Add each as a `Benchmark` to this array; the driver handles sizes, JSON and exit codes.
// Fill in the `extra` fields the harness expects (`pairs`, `senders`, `ring`, `actors`,
// `result`, `spawn_seconds`, `bytes_per_actor`) and `ok` for the self-check.

extension BenchmarkRegistry {
    static let actors: [Benchmark] = []
}
