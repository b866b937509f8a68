// Apple platforms have Combine; Linux has OpenCombine when the package trait "Combine"
// is on. Without either, this module is empty.
#if canImport(Combine) || Combine
#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
import Netlayer
import Glibc

/// A publisher that sends an endpoint when a subscriber asks for a value, emits the
/// decoded value once and finishes, or fails with the `DataTransferError`.
/// Cancelling the subscription cancels the transfer.
public struct DataTransferPublisher<Output: Decodable & Sendable, E: ResponseRequestable & Sendable>: Publisher
where E.Response == Output {
    public typealias Failure = DataTransferError

    let service: any DataTransferService
    let endpoint: E

    public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == DataTransferError {
        subscriber.receive(subscription: Inner(subscriber: subscriber, service: service, endpoint: endpoint))
    }

    private final class Inner<S: Subscriber>: Subscription, ResultSink, @unchecked Sendable
    where S.Input == Output, S.Failure == DataTransferError {
        // Guarded by `mutex`: Subscriber values are not Sendable, so no Mutex<...>.
        // Allocated: `&property` would be one Swift access for the whole (blocking) lock call.
        private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        private var subscriber: S?
        private var started = false
        private var transfer: (any NetworkCancellable)?
        private let service: any DataTransferService
        private let endpoint: E

        init(subscriber: S, service: any DataTransferService, endpoint: E) {
            pthread_mutex_init(mutex, nil)
            self.subscriber = subscriber
            self.service = service
            self.endpoint = endpoint
        }

        deinit {
            pthread_mutex_destroy(mutex)
            mutex.deallocate()
        }

        private func locked<R>(_ body: () -> R) -> R {
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return body()
        }

        func request(_ demand: Subscribers.Demand) {
            guard demand > 0 else { return }
            let start = locked { () -> Bool in
                defer { started = true }
                return !started && subscriber != nil
            }
            guard start else { return }
            // The handler reaches this subscription through a protocol without S: a
            // closure that used S would send S's metatype to the transport thread, and
            // Subscriber types need not be Sendable.
            let sink: any ResultSink<Output> = self
            let transfer = service.request(with: endpoint) { (result: Result<Output, DataTransferError>) in
                sink.deliver(result)
            }
            // A cancel() that came while the transfer was starting found none to cancel:
            // it is cancelled now (after a delivery this does nothing).
            let cancelledMeanwhile = locked { () -> Bool in
                guard subscriber != nil else { return true }
                self.transfer = transfer
                return false
            }
            if cancelledMeanwhile { _ = transfer?.cancel() }
        }

        func deliver(_ result: Result<Output, DataTransferError>) {
            let target = locked { () -> S? in
                defer { subscriber = nil; transfer = nil }
                return subscriber
            }
            guard let target else { return }
            switch result {
            case .success(let value):
                _ = target.receive(value)
                target.receive(completion: .finished)
            case .failure(let error):
                target.receive(completion: .failure(error))
            }
        }

        func cancel() {
            let running = locked { () -> (any NetworkCancellable)? in
                defer { subscriber = nil; transfer = nil }
                return transfer
            }
            running?.cancel()
        }
    }
}

/// Where a transfer's result goes: a subscription, seen without its subscriber's type.
private protocol ResultSink<Value>: AnyObject, Sendable {
    associatedtype Value
    func deliver(_ result: Result<Value, DataTransferError>)
}

extension DataTransferService {
    /// The endpoint as a publisher (iOS-Network-Layer's Combine service).
    public func publisher<T: Decodable & Sendable, E: ResponseRequestable & Sendable>(for endpoint: E)
        -> DataTransferPublisher<T, E> where E.Response == T {
        DataTransferPublisher(service: self, endpoint: endpoint)
    }
}
#endif
