/// The chat's limits, the same in the page (`chat.js`).
public enum ChatLimits {
    /// A sender sends at most this many messages of one key…
    public static let sendBurst = 5
    /// …in any window of this many seconds (by the messages' `sentAt`).
    public static let sendWindowSeconds = 10.0
    /// A receiver allows each key twice the sender's burst and rate, so that messages sent at the
    /// allowed pace and bunched by the network still pass; beyond that it ignores the key's messages.
    public static let receiveBurst = 10
    /// See ``receiveBurst``: tokens per second a receiver allows each key.
    public static let receiveRate = 1.0
    /// History slots: a late joiner receives the last this many messages.
    public static let historySlots: UInt64 = 50
    /// Messages a receiver remembers (key and `sentAt`) to drop replays; the oldest are forgotten first.
    public static let rememberedMessages = 2048
}
