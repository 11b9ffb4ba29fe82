/// Why a chat message could not be sent, in words a person understands.
///
/// ```swift
/// do { try await chat.send(text) } catch let error as ChatError { print(error) }   // "chat: at most 5 messages in 10 s: wait 1.6 s"
/// ```
public struct ChatError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case emptyMessage, tooLong, rateLimited, badName, notSent
    }

    private let code: Code
    /// What happened and what to do.
    public let description: String

    private init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }

    /// Nothing left to send once control characters and spaces were removed.
    public static func emptyMessage() -> ChatError { ChatError(.emptyMessage, "chat: the message is empty") }

    /// The text is longer than ``ChatText/maximumLength``.
    public static func tooLong(_ length: Int) -> ChatError {
        ChatError(.tooLong, "chat: the message is \(length) characters long, at most \(ChatText.maximumLength) go in one message")
    }

    /// More than the rate limit allows; `wait` seconds until the next message may go.
    public static func rateLimited(wait: Double) -> ChatError {
        ChatError(
            .rateLimited,
            "chat: at most \(ChatLimits.sendBurst) messages in \(Int(ChatLimits.sendWindowSeconds)) s: wait \(String(format: "%.1f", wait)) s")
    }

    /// The name is empty or longer than ``ChatText/maximumNameLength`` once cleaned.
    public static func badName(_ name: String) -> ChatError {
        ChatError(.badName, "chat: '\(name)' cannot be a name (1 to \(ChatText.maximumNameLength) characters, no control characters)")
    }

    /// The relay did not confirm the message.
    public static func notSent(_ reason: String) -> ChatError { ChatError(.notSent, "chat: the message was not sent: \(reason)") }

    public static func == (lhs: ChatError, rhs: ChatError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
