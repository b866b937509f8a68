extension CurlEventLoop {
    /// The deadlines of the transfers waiting for one of a loop's slots, earliest first: a
    /// binary min-heap, so that ending the transfers whose deadline passed while they
    /// waited costs a look at those alone, not a pass over the whole queue each time one
    /// passes (a queue whose deadlines are spread over time, as requests arriving faster
    /// than slots come free give it, made that quadratic and kept the loop busy).
    ///
    /// Entries are not taken out when their transfer starts or ends: the owner skips them
    /// as they come up (`takeDue`), drops them all when the queue is empty, and rebuilds
    /// the heap from the queue when they outnumber it (`rebuild`). Used only by the driver
    /// of the multi handle.
    struct WaitingDeadlines {
        private var heap: [(deadline: UInt64, transfer: CurlTransfer)] = []

        var isEmpty: Bool { heap.isEmpty }
        var count: Int { heap.count }
        /// The earliest deadline noted (perhaps of a transfer no longer waiting).
        var next: UInt64? { heap.first?.deadline }

        mutating func add(_ transfer: CurlTransfer, deadline: UInt64) {
            heap.append((deadline, transfer))
            var child = heap.count - 1
            while child > 0 {
                let parent = (child - 1) / 2
                guard heap[child].deadline < heap[parent].deadline else { break }
                heap.swapAt(child, parent)
                child = parent
            }
        }

        /// Takes out the entries whose deadline is at or before `now`; their transfers,
        /// earliest first. Returned, not handed to a closure: ending a transfer runs its
        /// completion, which may queue another transfer here.
        mutating func takeDue(now: UInt64) -> [CurlTransfer] {
            var due: [CurlTransfer] = []
            while let first = heap.first, first.deadline <= now {
                heap.swapAt(0, heap.count - 1)
                heap.removeLast()
                siftDown(from: 0)
                due.append(first.transfer)
            }
            return due
        }

        mutating func removeAll() {
            heap.removeAll(keepingCapacity: true)
        }

        /// Notes again only the deadlines of `waiting`, the transfers still queued.
        mutating func rebuild(from waiting: ArraySlice<CurlTransfer>) {
            heap.removeAll(keepingCapacity: true)
            for transfer in waiting where !transfer.isDelivered {
                if let deadline = transfer.deadlineAt { heap.append((deadline, transfer)) }
            }
            var index = heap.count / 2
            while index > 0 {
                index -= 1
                siftDown(from: index)
            }
        }

        private mutating func siftDown(from start: Int) {
            var parent = start
            while true {
                let left = 2 * parent + 1
                guard left < heap.count else { return }
                var least = left
                if left + 1 < heap.count, heap[left + 1].deadline < heap[left].deadline { least = left + 1 }
                guard heap[least].deadline < heap[parent].deadline else { return }
                heap.swapAt(parent, least)
                parent = least
            }
        }
    }
}
