import Glibc
import Synchronization
import NetlayerJSON

/// Something that keeps state across `fork()`: its locks are taken before the fork
/// (by the forking thread) and given back after it, in the parent and in the child,
/// so that no lock is left held by a thread the child does not have.
package protocol ForkParticipant: AnyObject, Sendable {
    /// Takes every lock the object's state is guarded by (the `prepare` handler).
    func lockForFork()
    /// Gives them back (the `parent` and `child` handlers).
    func unlockAfterFork()
}

/// The locks an object takes around `fork()`, registered in the object's place. The
/// registry holds participants weakly, and a weak reference gives its target a side
/// table, after which every retain and release of the target takes a slow path: a
/// client, retained several times per request, keeps this small object instead,
/// which nothing retains per request. Registered while it lives.
package final class ForkLocks: ForkParticipant {
    private let lock: @Sendable () -> Void
    private let unlock: @Sendable () -> Void

    /// - Parameters: `lock` takes the locks (before a fork), `unlock` gives them back
    ///   (after it, in the parent and in the child); neither may capture the owner.
    package init(lock: @escaping @Sendable () -> Void, unlock: @escaping @Sendable () -> Void) {
        self.lock = lock
        self.unlock = unlock
        Platform.ProcessFork.register(self)
    }

    deinit { Platform.ProcessFork.unregister(self) }

    package func lockForFork() { lock() }
    package func unlockAfterFork() { unlock() }
}

extension Platform {
    /// Which process this is, as far as clients are concerned: the count of `fork()`s
    /// that led to it. A client that sees a count other than the one it started under
    /// runs in a child, where its event-loop thread does not exist and its connections
    /// are the parent's; it starts a new transport before its next request.
    package enum ProcessFork {
        private struct Registry {
            var mutex = pthread_mutex_t()
            var participants: [ObjectIdentifier: Weak] = [:]
            var locked: [any ForkParticipant] = []
        }

        private struct Weak { weak var object: (any ForkParticipant)? }

        private static let counter = Atomic<UInt64>(0)
        nonisolated(unsafe) private static var registry: UnsafeMutablePointer<Registry> = {
            let pointer = UnsafeMutablePointer<Registry>.allocate(capacity: 1)
            pointer.initialize(to: Registry())
            pthread_mutex_init(&pointer.pointee.mutex, nil)
            ForkSafePoint.setUp()
            pthread_atfork({ ProcessFork.prepare() }, { ProcessFork.resume(child: false) },
                           { ProcessFork.resume(child: true) })
            return pointer
        }()

        /// What a child of `fork()` inherited and must never release: releasing it would
        /// join threads the child does not have or close connections that are the
        /// parent's. Kept here, reachable, for the life of the process.
        private static let abandoned = Locked<[AnyObject]>([])

        /// Keeps `object` alive, untouched, for the rest of the process.
        package static func abandon(_ object: AnyObject) {
            abandoned.withLock { $0.append(object) }
        }

        /// The number of forks between the first process and this one.
        package static var generation: UInt64 { counter.load(ordering: .acquiring) }

        package static func register(_ participant: any ForkParticipant) {
            let registry = self.registry
            pthread_mutex_lock(&registry.pointee.mutex)
            registry.pointee.participants[ObjectIdentifier(participant)] = Weak(object: participant)
            pthread_mutex_unlock(&registry.pointee.mutex)
        }

        package static func unregister(_ participant: any ForkParticipant) {
            let registry = self.registry
            pthread_mutex_lock(&registry.pointee.mutex)
            registry.pointee.participants[ObjectIdentifier(participant)] = nil
            pthread_mutex_unlock(&registry.pointee.mutex)
        }

        /// Installs the fork handlers, if no participant has yet.
        package static func installHandlers() { _ = registry }

        private static func prepare() {
            // The threads first: at a safe point a thread holds none of the locks below,
            // while a thread still at work may need one (libcurl's share locks, taken in
            // a transfer) to get to its safe point.
            ForkSafePoint.announceFork()
            let registry = self.registry
            pthread_mutex_lock(&registry.pointee.mutex)
            registry.pointee.locked = registry.pointee.participants.values.compactMap(\.object)
            for participant in registry.pointee.locked { participant.lockForFork() }
        }

        private static func resume(child: Bool) {
            let registry = self.registry
            if child { counter.add(1, ordering: .releasing) }
            ForkSafePoint.forkDone(child: child)
            for participant in registry.pointee.locked.reversed() { participant.unlockAfterFork() }
            registry.pointee.locked = []
            pthread_mutex_unlock(&registry.pointee.mutex)
        }
    }
}
