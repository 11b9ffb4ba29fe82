import Foundation
import Testing

@testable import SessionRelay

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

@Suite("blockingIO and the storage executor")
struct BlockingIOTests {
    /// The calling thread and the thread that ran the body.
    static func threads() async throws -> (caller: pthread_t, body: pthread_t) {
        let caller = pthread_self()
        let body = try await blockingIO { pthread_self() }
        return (caller, body)
    }

    @Test("on the storage executor the body runs in place (no hop); elsewhere it is handed to a Dispatch worker")
    func inPlaceOnlyOnTheStorageExecutor() async throws {
        let onExecutor = await withTaskGroup(of: (Bool, pthread_t, pthread_t).self) { group in
            group.addTask(executorPreference: BlockingIOExecutor.shared) {
                let (caller, body) = try! await Self.threads()
                return (BlockingIOExecutor.isCurrent, caller, body)
            }
            return await group.next()!
        }
        #expect(onExecutor.0)
        #expect(pthread_equal(onExecutor.1, onExecutor.2) != 0)

        // Off the executor the body goes to Dispatch's global queue. On Linux Swift's cooperative
        // threads come from the same pool, so the worker may be the caller's own (now suspended)
        // thread: only that it is not the in-place path can be asserted.
        _ = try await Self.threads()
        #expect(!BlockingIOExecutor.isCurrent)
    }

    @Test("the body's error reaches the caller, in place and after a hop")
    func errors() async throws {
        struct Failure: Error {}
        await #expect(throws: Failure.self) { try await blockingIO { throw Failure() } }
        let inPlace = await withTaskGroup(of: Bool.self) { group in
            group.addTask(executorPreference: BlockingIOExecutor.shared) {
                do { try await blockingIO { throw Failure() } } catch is Failure { return true } catch {}
                return false
            }
            return await group.next()!
        }
        #expect(inPlace)
    }
}
