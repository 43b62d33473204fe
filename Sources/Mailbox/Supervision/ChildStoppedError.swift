/// The failure recorded for a permanent child that stopped normally and was restarted.
struct ChildStoppedError: Error, CustomStringConvertible {
    let id: String
    var description: String { "child \(id) stopped" }
}
