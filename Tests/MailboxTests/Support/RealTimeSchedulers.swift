import Testing

/// The parent of every suite that waits on real-time schedulers (`QueueScheduler`,
/// `OperationQueueScheduler`), run one test at a time.
///
/// Those tests block their thread while they wait, and on Linux the test functions, Dispatch
/// queues and `OperationQueue`s all draw on the same Dispatch thread pool, which grows only
/// slowly past the core count. Run in parallel they starve each other into time-outs; run
/// serially each takes milliseconds.
@Suite(.serialized)
enum RealTimeSchedulers {}
