import CCurl
import NetlayerCore
import NetlayerJSON

/// Pausing a transfer whose local file is not ready (an upload's FIFO with nothing to
/// read yet, a download's full FIFO), so that no thread ever blocks on the file.
extension CurlTransfer {
    /// Whether a callback may pause this transfer until a local file is ready: an
    /// upload streamed as it reads, a download written through a device or FIFO.
    var mayPause: Bool {
        (upload != nil && upload?.size == nil) || sink?.mayPause == true
    }

    /// Arranges for this transfer, which a callback is pausing, to go on when `wait` is
    /// over: the driver of its loop watches for it.
    func pause(until wait: TransferWait) {
        loop?.resume(self, after: wait)
    }
}
