import CCurl
import NetlayerCore
import NetlayerJSON

/// Pausing a transfer whose local file is not ready (an upload's FIFO with nothing to
/// read yet, a download's full FIFO), so that no thread ever blocks on the file; and
/// pausing the reading of a response because its consumer asked (`pauseReading`).
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

    /// What `CurlEventLoop.PausedTransfers` resumes a transfer with: reading stays paused while the
    /// consumer wants it so.
    var resumeAction: Int32 { readingPaused ? nl_pause_recv : nl_pause_cont }

    /// Applies the consumer's latest wish (`pauseReading`) to libcurl (driver thread).
    /// A transfer not receiving yet pauses at its first body bytes (`appendBody`); one
    /// that a local file holds stays held, and resumes as wished (`resumeAction`).
    func applyReadingPause() {
        let paused = readingPauseWanted
        guard paused != readingPaused, !isDelivered else { return }
        readingPaused = paused
        // The silence of a paused stream is its reader's, not the server's.
        silence?.setPaused(paused, at: Platform.MonotonicClock.now())
        guard let easy, loopSlot >= 0, !isPausedOnLoop else { return }
        curl_easy_pause(easy, paused ? nl_pause_recv : nl_pause_cont)
    }
}
