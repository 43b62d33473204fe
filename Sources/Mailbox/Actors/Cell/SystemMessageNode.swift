/// One system message on a cell's lock-free stack.
final class SystemMessageNode {
    let message: SystemMessage
    var next: UnsafeMutableRawPointer?

    init(_ message: SystemMessage) {
        self.message = message
    }
}
