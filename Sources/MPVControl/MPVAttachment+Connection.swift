extension MPVAttachment {
    /// The changes made to an attached mpv, to undo when the member leaves.
    public struct Attached: Sendable {
        /// The plan that was applied.
        public let plan: Plan
        /// The speed mpv had on attach (put back when the group's rate is unknown).
        public let speed: Double?
        /// The `audio-delay` mpv had on attach: put back, since the adapter adds to it for a while
        /// after a start whose sound began late (``MPVPlayer``).
        public let audioDelay: Double?

        public init(plan: Plan, speed: Double?, audioDelay: Double? = nil) {
            self.plan = plan
            self.speed = speed
            self.audioDelay = audioDelay
        }

        /// Puts the person's values back: the plan's ``Plan/restore`` steps, the `audio-delay` mpv had,
        /// then `speed` set to `rate` (the group's rate without the adapter's trim) or, without one, to
        /// the speed mpv had on attach. Errors are ignored (mpv may have quit).
        public func detach(on mpv: MPVConnection, rate: Double?) async {
            for step in plan.restore { _ = try? await mpv.command(step.arguments) }
            if let audioDelay { _ = try? await mpv.command(["set_property", "audio-delay", audioDelay]) }
            if let speed = rate.flatMap({ $0 > 0 ? $0 : nil }) ?? speed {
                _ = try? await mpv.command(["set_property", "speed", (speed * 1e6).rounded() / 1e6])
            }
        }
    }

    /// Reads mpv's values, applies ``plan(observed:)``, and checks that everything is in force; on a
    /// refusal, undoes what it changed before throwing.
    ///
    /// - Throws: ``Refusal`` naming what this mpv does not take; ``MPVError/ipc(_:)``.
    public static func attach(to mpv: MPVConnection) async throws -> Attached {
        let observed = try await read(mpv)
        let plan = try plan(observed: observed).get()
        var failures: [Step: String] = [:]
        for step in plan.apply {
            let reply = try await mpv.command(step.arguments)
            if !reply.succeeded { failures[step] = reply.error }
        }
        let attached = Attached(plan: plan, speed: try await mpv.number("speed"), audioDelay: try await mpv.number("audio-delay"))
        if let refusal = check(failures: failures, readBack: try await read(mpv)) {
            await attached.detach(on: mpv, rate: nil)
            throw refusal
        }
        return attached
    }

    private static func read(_ mpv: MPVConnection) async throws -> [String: MPVValue] {
        var values: [String: MPVValue] = [:]
        for property in observedProperties {
            let reply = try await mpv.get(property)
            if reply.succeeded { values[property] = reply.data }
        }
        return values
    }
}
