import Logging

/// Replacing a session with a new one: a clean barrier between two activities.
extension GroupActivityCenter {
    /// Starts `activity` in a new session that replaces `current` for every member, then ends
    /// `current`.
    ///
    /// The new session gets a fresh identifier and secret on the same relay. This member joins
    /// it and waits until the relay has ordered its activity; then it announces the successor
    /// to `current`'s members over `current`'s encrypted channel (a sealed, reserved control
    /// message: the relay sees only a data frame) and ends `current`. The `end` is therefore the
    /// last event in `current`'s total order, after the announcement: nothing sent in the old
    /// session reaches the new one, which has its own keys.
    ///
    /// Every other member whose center got the announcement opens the successor and delivers it,
    /// `waiting` and already holding `activity`, on its ``sessions``; the app joins it as usual.
    /// The returned session is already joined and is delivered on this center's ``sessions`` as
    /// well. Members that had left `current` do not get it; members running a coplay without
    /// successor support only see `current` end.
    ///
    /// ```swift
    /// let next = try await center.activate(WatchMovie(movieID: "43"), replacing: session)
    /// // `session` is now invalidated (ended); `next` is joined and carries movie 43.
    /// ```
    ///
    /// - Parameters:
    ///   - activity: The successor's activity.
    ///   - current: The joined session to replace.
    ///   - timeout: How long to wait for the relay at each step.
    /// - Returns: The new session, joined.
    /// - Throws: ``GroupSessionError`` if `current` is not joined, or the new session cannot be
    ///   opened or announced; `current` is left as it was (not ended) in that case.
    public func activate(
        _ activity: Activity, replacing current: GroupSession<Activity>, timeout: Duration = .seconds(30)
    ) async throws -> GroupSession<Activity> {
        guard case .joined = current.state else { throw GroupSessionError.notJoined }
        let invite = Invite.generate(host: current.invite.host, port: current.invite.port, suite: current.invite.suite)
        let engine = try await SessionEngine.open(
            invite: invite, transport: transport, activityIdentifier: Activity.activityIdentifier, logger: logger,
            policy: reconnectPolicy, timeout: timeout)
        engine.setInitialActivity(try GroupSession<Activity>.encode(activity))
        let successor = GroupSession<Activity>(engine: engine, invite: invite)
        do {
            // join() returns once the relay has stored the activity, so members admitted from now
            // on find it among the retained frames.
            try await engine.join(timeout: timeout)
            let announcement = SuccessorAnnouncement(
                session: invite.session, secret: invite.secret, activityIdentifier: Activity.activityIdentifier)
            try await current.engine.sendAcknowledged(
                name: SuccessorAnnouncement.messageName, body: announcement.encoded(), timeout: timeout)
        } catch {
            engine.leave()
            throw error
        }
        do {
            try current.end()
        } catch {
            // The members already have the announcement (the relay acked it), so the successor
            // stands; only the old session stays open for them until they leave it.
            logger.info(
                "could not end the replaced session", metadata: ["session": "\(current.id)", "error": "\(error)"])
        }
        logger.info(
            "replaced a session with a new one",
            metadata: ["session": "\(current.id)", "successor": "\(successor.id)"])
        watchForSuccessor(of: successor)
        continuation.yield(successor)
        return successor
    }

    /// Opens the successor `session`'s members announce, and delivers it on ``sessions``.
    func watchForSuccessor(of session: GroupSession<Activity>) {
        let relay = session.invite
        let from = session.id
        let engine = session.engine
        _ = engine.addHandler(name: SuccessorAnnouncement.messageName) { [weak self] body, context in
            // Handlers run one at a time on the session's read loop: only start the work here.
            guard let self else { return }
            let announcement: SuccessorAnnouncement
            do {
                announcement = try SuccessorAnnouncement(decoding: body)
            } catch {
                logger.info("ignored a malformed successor announcement", metadata: ["error": "\(error)"])
                return
            }
            guard announcement.activityIdentifier == Activity.activityIdentifier else {
                logger.info(
                    "ignored a successor of another activity type",
                    metadata: ["activity": "\(announcement.activityIdentifier)"])
                return
            }
            let invite = Invite(
                host: relay.host, port: relay.port, session: announcement.session, secret: announcement.secret)
            // A child of the old session's run(), which waits for it before it returns.
            engine.spawn {
                do {
                    let successor = try await self.accept(invite)
                    self.logger.info(
                        "opened the successor of a session",
                        metadata: ["session": "\(from)", "successor": "\(successor.id)", "by": "\(context.source.id)"])
                } catch {
                    self.logger.info(
                        "could not open the successor of a session",
                        metadata: ["session": "\(from)", "successor": "\(invite.session)", "error": "\(error)"])
                }
            }
        }
    }
}
