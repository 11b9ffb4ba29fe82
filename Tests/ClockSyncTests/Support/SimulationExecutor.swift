import Foundation
import Synchronization

/// A task executor with one thread of its own, for manual-clock simulations: it knows when it is
/// *idle* (no job queued or running), which is when every task of the simulation waits, so the
/// driver may move the clock without racing a task that has not gone to sleep yet.
///
/// Tasks started with this executor as their preference (and their child tasks, and the default
/// actors they call) run here, one job at a time; a `ManualClock.advance` resumes its sleepers by
/// enqueueing them here before it returns. So "idle, and no sleeper due" is a property of the
/// simulation, not of how busy the machine is: simulated time no longer depends on load.
final class SimulationExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: `jobs`, `running` and `stopped` are only touched under `condition`'s lock.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var running = false
    private var stopped = false
    private let idleWaiters = Mutex<[CheckedContinuation<Void, Never>]>([])

    init() {
        let thread = Thread { [self] in loop() }
        thread.name = "simulation executor"
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Stops the thread once the queue is empty (call when the simulation is over).
    func shutdown() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }

    /// Whether no job is queued or running.
    var isIdle: Bool {
        condition.lock()
        defer { condition.unlock() }
        return jobs.isEmpty && !running
    }

    /// Suspends (without blocking a thread) until the executor is idle.
    func waitUntilIdle() async {
        while !isIdle {
            await withCheckedContinuation { continuation in
                idleWaiters.withLock { $0.append(continuation) }
                // Idle since the check: wake ourselves (a spurious wake-up only loops once more).
                if isIdle { wakeIdleWaiters() }
            }
        }
    }

    private func wakeIdleWaiters() {
        let waiters = idleWaiters.withLock { waiters in
            defer { waiters.removeAll() }
            return waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    private func loop() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopped { condition.wait() }
            if jobs.isEmpty && stopped {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            running = true
            condition.unlock()

            job.runSynchronously(on: asUnownedTaskExecutor())

            condition.lock()
            running = false
            let idle = jobs.isEmpty
            condition.unlock()
            if idle { wakeIdleWaiters() }
        }
    }
}
