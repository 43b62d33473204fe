/// A parent's children in start order: a doubly linked list threaded through the children
/// themselves (`AnyTarget.youngerSibling`/`olderSibling`), so registering a child allocates
/// nothing and hashes nothing, plus a name index for the children whose names were chosen by
/// the caller. Generated names (`$a…`, reserved for the runtime) are unique by construction and
/// not indexed, so a million anonymous children cost two pointers each.
///
/// Not thread-safe: the guardian holds its registry under its lock; an actor's registry is
/// touched only inside that actor's mailbox run. A child is listed by at most one registry, its
/// parent's, which alone reads and writes the child's sibling links.
///
/// What keeps what alive: the registry retains its children (the oldest, which retains the next,
/// and so on) until they are removed. Call `removeAll()` before dropping a non-empty registry:
/// it unlinks the chain iteratively (releasing a long chain by recursion would overflow the
/// stack).
@usableFromInline
struct ChildRegistry {
    /// The oldest child; each child retains the next younger one.
    @usableFromInline
    var oldest: AnyTarget?
    /// The youngest child (retained by its older sibling, or by `oldest`); read it only while
    /// the registry lists it.
    private(set) unowned(unsafe) var youngest: AnyTarget?
    /// Children with caller-chosen names, by name.
    private var named: [String: AnyTarget] = [:]

    @inlinable
    var isEmpty: Bool { oldest == nil }

    /// Whether `target` is listed here. O(1).
    func contains(_ target: AnyTarget) -> Bool {
        // Every listed child has this registry's owner as its parent: compare with one of them
        // first, so that a target listed by another parent is never mistaken for ours.
        guard let oldest, target.parentIdentity == oldest.parentIdentity else { return false }
        return target.isListedChild
    }

    /// Whether a child with the caller-chosen name `name` is listed. Generated names are never
    /// taken: they are unique by construction.
    func isNameTaken(_ name: String) -> Bool {
        // With no named child, no name is hashed.
        !named.isEmpty && named[name] != nil
    }

    /// The child named `name`, if listed.
    ///
    /// - Complexity: O(1) for a caller-chosen name, O(n) for a generated one.
    subscript(name: String) -> AnyTarget? {
        if let target = named[name] { return target }
        guard ActorName.isGenerated(name) else { return nil }
        var next = oldest
        while let child = next, child.address.name != name {
            next = child.youngerSibling
        }
        return next
    }

    /// Lists `target` as the youngest child.
    ///
    /// - Precondition: `target` is not listed, and every listed child has the same parent.
    mutating func insert(_ target: AnyTarget, named name: String) {
        precondition(!target.isListedChild && (oldest == nil || oldest!.parentIdentity == target.parentIdentity),
                     "child \(target.address.path) registered twice or with another parent")
        if !ActorName.isGenerated(name) {
            named[name] = target
        }
        target.isListedChild = true
        target.olderSibling = youngest
        if let youngest {
            youngest.youngerSibling = target
        } else {
            oldest = target
        }
        youngest = target
    }

    /// Unlists `target`; does nothing if it is not listed here. O(1).
    mutating func remove(_ target: AnyTarget) {
        guard contains(target) else { return }
        let younger = target.youngerSibling
        let older = target.olderSibling
        target.isListedChild = false
        target.youngerSibling = nil
        target.olderSibling = nil
        if let older {
            older.youngerSibling = younger
        } else {
            oldest = younger
        }
        if let younger {
            younger.olderSibling = older
        } else {
            youngest = older
        }
        // Only named children are in `named`: with none there, skip building the name.
        guard !named.isEmpty else { return }
        let name = target.address.name
        if !ActorName.isGenerated(name), named[name] === target {
            named[name] = nil
        }
    }

    /// Unlists every child, oldest first, without recursion.
    @usableFromInline
    mutating func removeAll() {
        while let child = oldest {
            remove(child)
        }
    }

    /// The children, oldest first.
    var inStartOrder: [AnyTarget] {
        var result: [AnyTarget] = []
        var next = oldest
        while let child = next {
            result.append(child)
            next = child.youngerSibling
        }
        return result
    }
}
