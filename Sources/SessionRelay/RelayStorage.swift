import Dispatch
import GroupSessions

/// The relay's storage work, owned by ``RelayServer/run()``: each session's store commits and
/// journal I/O (``SessionShard/drain()``), releases of sessions a node stopped serving, and the
/// binding of a `hello` to its session (which may ask a shared store). Event-loop code and code
/// under a shard's lock only ``schedule(_:)`` work; ``run()`` carries it out in child tasks of
/// its own task group, so nothing of it outlives the relay, and one session's slow disk or
/// database delays only the work that waits for it.
final class RelayStorage: Sendable {
    /// One piece of work.
    enum Job: Sendable {
        /// Commit and carry out what `shard` has pending, until nothing is left.
        case drain(SessionShard)
        /// Any other storage work (a release, a hello's binding).
        case work(@Sendable () async -> Void)
    }

    /// Where the relay's hubs keep journal attachments.
    let journal: any JournalStorage
    private let jobs: AsyncStream<Job>
    private let continuation: AsyncStream<Job>.Continuation

    init(journal: any JournalStorage) {
        self.journal = journal
        let (jobs, continuation) = AsyncStream.makeStream(of: Job.self)
        self.jobs = jobs
        self.continuation = continuation
    }

    /// Queues `job` for ``run()`` (from any thread, under any lock: it only enqueues).
    func schedule(_ job: Job) {
        continuation.yield(job)
    }

    /// Carries out every scheduled job, each in a child task, until ``finish()`` (then what was
    /// queued before it is still done) or cancellation.
    ///
    /// A shard's ``SessionShard/drain()`` runs on Dispatch worker threads (``BlockingIOExecutor``),
    /// where its file I/O (``blockingIO(_:)``) runs in place: a group commit costs no thread hop
    /// there and back, as it did when every write went to another thread and resumed the drain on
    /// Swift's cooperative pool.
    func run() async {
        await withDiscardingTaskGroup { group in
            for await job in jobs {
                switch job {
                case .drain(let shard): group.addTask(executorPreference: BlockingIOExecutor.shared) { await shard.drain() }
                case .work(let body): group.addTask { await body() }
                }
            }
        }
    }

    /// No more jobs: ``run()`` returns once those queued are done.
    func finish() {
        continuation.finish()
    }
}

/// Runs blocking file I/O on a Dispatch worker thread and waits for it without holding one of
/// Swift's cooperative threads (of which there are as many as cores) or an event loop. Dispatch
/// adds threads when those it runs block, so one session's stalled disk does not hold up the
/// others' writes.
///
/// A task that already runs on a Dispatch worker (``BlockingIOExecutor``: the relay's storage
/// work) runs `body` in place instead of handing it to another worker and waiting to be resumed.
func blockingIO<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    if BlockingIOExecutor.isCurrent { return try body() }
    return try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
    }
}

/// A task executor whose jobs run on Dispatch's global worker threads, where blocking calls are
/// allowed (Dispatch adds workers when those it runs block; Swift's cooperative pool does not).
/// Tasks that prefer it (``RelayStorage/run()``'s drains) do their file I/O in place
/// (``blockingIO(_:)``); everything they await elsewhere resumes them here.
final class BlockingIOExecutor: TaskExecutor {
    static let shared = BlockingIOExecutor()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        DispatchQueue.global().async { job.runSynchronously(on: executor) }
    }

    /// Whether the current task prefers this executor: then a nonisolated async function such as
    /// ``blockingIO(_:)`` runs on it (on a Dispatch worker), whoever its caller is.
    static var isCurrent: Bool {
        withUnsafeCurrentTask { $0?.unownedTaskExecutor == shared.asUnownedTaskExecutor() }
    }
}
