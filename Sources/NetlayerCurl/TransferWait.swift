import NetlayerCore
import NetlayerJSON

/// What a transfer that a callback paused, because a local file was not ready, waits
/// for before it goes on.
package enum TransferWait: Equatable {
    /// The descriptor has bytes to read (or its writer left).
    case readable(Int32)
    /// The descriptor takes bytes again (or its reader left).
    case writable(Int32)
    /// Nothing to watch (a FIFO that no one reads yet cannot be opened for writing):
    /// try again shortly.
    case delay
}
