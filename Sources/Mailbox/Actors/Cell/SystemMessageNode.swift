/// One system message on a cell's lock-free stack.
@usableFromInline
final class SystemMessageNode {
    @usableFromInline
    let message: SystemMessage
    /// Set by the sender before the node is published, then only by the consumer's run.
    @usableFromInline
    @exclusivity(unchecked)
    var next: UnsafeMutableRawPointer?

    init(_ message: SystemMessage) {
        self.message = message
    }
}
