import NetlayerJSON

/// The fields of a value type kept in one shared box: copying the value retains one
/// object instead of each field, and the box is copied only when a value that shares
/// it is about to change.
///
/// Requests, their options and responses pass by value through attempts, retries,
/// redirects, the transfer and decoding; copying a dozen strings, sets and arrays at
/// each step cost more reference counting than the rest of a request's bookkeeping.
///
/// A box is never changed while shared (`value`'s `_modify` copies it first), so a
/// value holding one is as safe to share between threads as its fields are.
package struct CopyOnWrite<Value: Sendable>: @unchecked Sendable {
    private final class Box {
        var value: Value
        init(_ value: Value) { self.value = value }
    }

    private var box: Box

    init(_ value: Value) { box = Box(value) }

    /// The fields; reading one borrows it, writing one copies the box first when it is shared.
    var value: Value {
        _read { yield box.value }
        _modify {
            if !isKnownUniquelyReferenced(&box) { box = Box(box.value) }
            yield &box.value
        }
    }

    /// Whether both hold the same box, so their values are equal without comparing them.
    func sharesBox(with other: CopyOnWrite) -> Bool { box === other.box }
}
