extension CurlEventLoop {
    /// The transfers in a loop's multi handle, kept alive while libcurl holds their
    /// pointers. Each knows its slot (`CurlTransfer.loopSlot`), so adding and taking one
    /// out costs no hashing: a completion finds its transfer through `CURLOPT_PRIVATE`.
    /// Used only by the driver of the multi handle.
    struct RunningTransfers {
        private var slots: [CurlTransfer?] = []
        private var freeSlots: [Int] = []
        private(set) var count = 0

        var isEmpty: Bool { count == 0 }

        mutating func insert(_ transfer: CurlTransfer) {
            let slot: Int
            if let free = freeSlots.popLast() {
                slot = free
                slots[slot] = transfer
            } else {
                slot = slots.count
                slots.append(transfer)
            }
            transfer.loopSlot = slot
            count += 1
        }

        func contains(_ transfer: CurlTransfer) -> Bool {
            let slot = transfer.loopSlot
            return slot >= 0 && slot < slots.count && slots[slot] === transfer
        }

        /// Takes `transfer` out; false when it was not in.
        @discardableResult
        mutating func remove(_ transfer: CurlTransfer) -> Bool {
            guard contains(transfer) else { return false }
            slots[transfer.loopSlot] = nil
            freeSlots.append(transfer.loopSlot)
            transfer.loopSlot = -1
            count -= 1
            return true
        }

        /// Takes every transfer out, in no particular order.
        mutating func removeAll() -> [CurlTransfer] {
            let all = slots.compactMap { $0 }
            for transfer in all { transfer.loopSlot = -1 }
            slots.removeAll()
            freeSlots.removeAll()
            count = 0
            return all
        }
    }
}
