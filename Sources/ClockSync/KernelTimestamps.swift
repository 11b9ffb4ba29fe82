import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Kernel receive timestamps for UDP sockets that NIO drives.
///
/// NIO's datagram channel does not surface `SO_TIMESTAMPNS` control messages, but it does call
/// `recvmsg` once per datagram and fires `channelRead` for that datagram before the next `recvmsg`.
/// So, on Linux, `ioctl(fd, SIOCGSTAMPNS)` inside `channelRead` returns the kernel's arrival time of
/// exactly the datagram being handled. The socket is created here (so its descriptor is known) and
/// handed to NIO with `withBoundSocket`. Elsewhere these functions report "unavailable" and callers
/// fall back to user-space timestamps.
enum KernelTimestamps {
    /// Creates a non-blocking UDP socket bound to `address` with kernel receive timestamps enabled.
    static func makeBoundSocket(_ address: SocketAddress) throws -> NIOBSDSocket.Handle {
        let family: CInt
        switch address {
        case .v4: family = AF_INET
        case .v6: family = AF_INET6
        default: throw IOError(errnoCode: EAFNOSUPPORT, reason: "socket: unsupported address family")
        }
        #if canImport(Darwin)
        let fd = socket(family, SOCK_DGRAM, 0)
        #else
        let fd = socket(family, Int32(SOCK_DGRAM.rawValue), 0)
        #endif
        guard fd >= 0 else { throw IOError(errnoCode: errno, reason: "socket") }
        // No SO_REUSEADDR: on Linux it would let a second UDP server bind the same port silently.
        var buffer: CInt = 1 << 20
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, socklen_t(MemoryLayout<CInt>.size))
        let result = address.withSockAddr { pointer, length in bind(fd, pointer, socklen_t(length)) }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw IOError(errnoCode: code, reason: "bind(\(address))")
        }
        _ = receiveLatency(fd)   // the first SIOCGSTAMPNS switches timestamping on
        return fd
    }

    /// How long ago (seconds) the kernel received the datagram most recently read from `fd`, or `nil`
    /// when no kernel timestamp is available.
    static func receiveLatency(_ fd: NIOBSDSocket.Handle) -> Double? {
        #if os(Linux)
        var stamp = timespec()
        let SIOCGSTAMPNS: UInt = 0x8907
        guard ioctl(fd, SIOCGSTAMPNS, &stamp) == 0 else { return nil }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let latency = Double(now.tv_sec - stamp.tv_sec) + Double(now.tv_nsec - stamp.tv_nsec) * 1e-9
        // A negative or huge value means the real-time clock stepped in between: do not trust it.
        return (0..<0.5).contains(latency) ? latency : nil
        #else
        return nil
        #endif
    }

    /// Sends `bytes` to `address` straight through `fd` with one `sendto`, stamping the packet with
    /// `stamp()` immediately before the system call; returns `false` if the kernel did not take it
    /// (e.g. `EAGAIN`), so the caller can fall back to a NIO write.
    ///
    /// Used on the event loop that owns `fd`: a UDP socket keeps no stream state, so a direct send
    /// does not disturb NIO, and it skips NIO's outbound path, which would otherwise lie between the
    /// transmit timestamp and the wire.
    static func send(
        _ fd: NIOBSDSocket.Handle,
        to address: SocketAddress,
        bytes: inout [UInt8],
        stamp: (inout [UInt8]) -> Void
    ) -> Bool {
        stamp(&bytes)
        let sent = bytes.withUnsafeBytes { raw in
            address.withSockAddr { pointer, length in
                sendto(fd, raw.baseAddress, raw.count, 0, pointer, socklen_t(length))
            }
        }
        return sent == bytes.count
    }
}
