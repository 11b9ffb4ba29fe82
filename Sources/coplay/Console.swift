import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Standard output and standard error as coplay writes them.
///
/// Every line is written whole with `write(2)` under a lock, so lines from concurrent tasks never
/// interleave. A stream whose reader went away (`coplay host … | head -1`: `EPIPE`) is marked closed and
/// written no more; the process carries on. (Foundation's `FileHandle.write(_:)` traps on such an
/// error, and the default `SIGPIPE` action kills the process: ``ignoreBrokenPipes()`` turns the
/// signal off at start, so a closed pipe is an `EPIPE` error here and in every socket write.)
enum Console {
    /// Standard output.
    static let out = Stream(descriptor: STDOUT_FILENO)
    /// Standard error.
    static let err = Stream(descriptor: STDERR_FILENO)

    /// Ignores `SIGPIPE` for the whole process: a write to a closed pipe or socket fails with
    /// `EPIPE` instead of killing coplay.
    static func ignoreBrokenPipes() {
        signal(SIGPIPE, SIG_IGN)
    }

    /// One output stream.
    final class Stream: Sendable {
        let descriptor: Int32
        /// `true` once a write failed for good (the reader closed the pipe, the disk is full):
        /// nothing more is written.
        private let state = Mutex(false)

        init(descriptor: Int32) { self.descriptor = descriptor }

        /// Whether the stream is a terminal (a person reads it).
        var isTerminal: Bool { isatty(descriptor) == 1 }

        /// Whether writing stopped because the stream was closed by its reader (or failed).
        var isClosed: Bool { state.withLock { $0 } }

        /// Writes `text` and a newline. Returns `false` when the stream is closed (the line was not,
        /// or not wholly, written).
        @discardableResult
        func line(_ text: String) -> Bool { write(text + "\n") }

        /// Writes `text` as is (no newline). Returns `false` when the stream is closed.
        @discardableResult
        func write(_ text: String) -> Bool {
            state.withLock { closed in
                guard !closed else { return false }
                let bytes = Array(text.utf8)
                var offset = 0
                while offset < bytes.count {
                    let written = bytes.withUnsafeBytes { buffer in
                        Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                    }
                    if written >= 0 {
                        offset += written
                        continue
                    }
                    switch errno {
                    case EINTR:
                        continue
                    case EAGAIN:
                        // A non-blocking descriptor (a terminal shared with such a process): wait until writable.
                        var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                        _ = poll(&poller, 1, 1000)
                    default:
                        // EPIPE (the reader went away), EBADF (closed), EIO, ENOSPC: stop writing here.
                        closed = true
                        return false
                    }
                }
                return true
            }
        }
    }
}
