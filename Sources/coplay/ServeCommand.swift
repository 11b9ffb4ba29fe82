import ArgumentParser
import ClockSync
import GroupSessions
import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import ServiceLifecycle
import SessionRelay
import SessionRelayPostgres

/// `coplay serve`: run a relay for group sessions.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run a coplay relay: routes end-to-end encrypted group-session frames.",
        discussion: """
            The relay never sees session secrets or plaintext. It prints one line, \
            "coplay relay listening on HOST:PORT", once it accepts connections, and shuts down \
            gracefully on SIGTERM or SIGINT. The protocol is described in docs/protocol.md.

            Sessions survive a restart of the relay (even SIGKILL): the relay keeps their state and \
            journal attachments in a state directory of its own, one per listening address: \
            $XDG_STATE_HOME/coplay/relay-HOST-PORT, else ~/.local/state/coplay/relay-HOST-PORT, or \
            /var/lib/coplay/relay-HOST-PORT when run as root without XDG_STATE_HOME. Members reconnect \
            and resume on their own. --data-dir DIR picks the directory; --memory-only keeps nothing (a \
            restart then ends every session); --listen HOST:0 (a new port at every start) keeps nothing \
            either. Two relays never share a directory: the second refuses to start.

            With --tls the line ends "(TLS, key pin PIN)": `coplay host --pin PIN` puts that pin in its \
            invites, so members accept this relay's key even when the certificate is self-signed.

            The same port serves the browser client: http://HOST:PORT/ (https with --tls) is the \
            page, /ws the WebSocket that carries the relay protocol for it, and the relay answers \
            NTP time requests on UDP at the same port number and in-band for browsers. \
            `coplay host` prints each session's page link.

            With --store postgresql://USER@HOST:PORT/DB several relays act as one service: session \
            state lives in PostgreSQL (the relay creates and migrates its tables), each session is \
            served by one node at a time under a lease, and a member that reaches another node is \
            redirected to the --advertise address of the node that serves it. Invites name the \
            fleet: `coplay host --relay H1:P1,H2:P2` (docs/scaling.md).
            """
    )

    @Option(help: "TCP address to listen on, HOST:PORT (port 0 picks a free one).")
    var listen: String = "127.0.0.1:7000"

    @Option(
        name: .customLong("tls"), parsing: .upToNextOption,
        help: ArgumentHelp("Serve TLS with this PEM certificate chain and private key.", valueName: "CERT KEY"))
    var tls: [String] = []

    @Option(help: "Serve Prometheus metrics (swift-metrics, swift-prometheus) over HTTP at HOST:PORT (GET /metrics).")
    var metrics: String?

    @Option(
        help: ArgumentHelp(
            "Keep session state and journal attachments in this directory (created with mode 0700), so they survive a restart (default: a state directory of this relay's own, see above).",
            valueName: "DIR"))
    var dataDir: String?

    @Flag(help: "Keep sessions in memory only: a restart of the relay ends every session.")
    var memoryOnly = false

    @Option(
        help: ArgumentHelp(
            "Keep session state and journal attachments in PostgreSQL, shared with other relays of the same service.",
            valueName: "postgresql://USER@HOST:PORT/DB"))
    var store: String?

    @Option(
        help: ArgumentHelp(
            "The address members reach this relay at, given to members redirected here (default: --listen).",
            valueName: "HOST:PORT"))
    var advertise: String?

    @Option(
        help: ArgumentHelp(
            "With --store: seconds a session's lease lasts without renewal (a stopped relay's sessions move after this long).",
            valueName: "SECONDS"))
    var leaseSeconds: Double = 2

    @Option(help: "Largest sustained data frames per second per connection.")
    var rate: Int = 2_000

    @Option(help: "Largest burst of data frames per connection.")
    var burst: Int = 20_000

    @Option(help: "Most connections held at once.")
    var maxConnections: Int = 10_000

    @Option(help: ArgumentHelp("Bytes of journal attachments one session may store (default 256 MiB).", valueName: "BYTES"))
    var journalQuota: Int = HubLimits().journal.quota

    @Option(
        help: ArgumentHelp(
            "Close a connection that sent nothing, not even a ping, for this many seconds (0 never does; members ping every 5 s).",
            valueName: "SECONDS"))
    var idleTimeout: Double = 45

    @Option(
        help: ArgumentHelp(
            "Serve the browser client from this directory instead of the copy built into coplay (for working on the page).",
            valueName: "DIR"))
    var webRoot: String?

    @Flag(help: "Do not serve the browser client's page (the WebSocket endpoint /ws stays).")
    var noWeb = false

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    func validate() throws {
        _ = try Self.hostPort(listen, option: "--listen")
        if let metrics { _ = try Self.hostPort(metrics, option: "--metrics") }
        guard tls.isEmpty || tls.count == 2 else {
            throw ValidationError("--tls takes two paths: CERT KEY (got \(tls.count))")
        }
        guard rate > 0, burst > 0, maxConnections > 0 else {
            throw ValidationError("--rate, --burst and --max-connections must be positive")
        }
        guard journalQuota >= 0 else { throw ValidationError("--journal-quota must be 0 or more bytes") }
        guard idleTimeout >= 0, idleTimeout <= 1e9 else { throw ValidationError("--idle-timeout must be 0 to 1e9 seconds") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown --log-level \(logLevel)") }
        if let advertise {
            let (_, port) = try Self.hostPort(advertise, option: "--advertise")
            guard port > 0 else { throw ValidationError("--advertise needs a port other than 0") }
            guard store != nil else { throw ValidationError("--advertise is for relays sharing a --store") }
        }
        if memoryOnly, dataDir != nil || store != nil {
            throw ValidationError("--memory-only keeps nothing on disk: it excludes --data-dir and --store")
        }
        if let store {
            guard dataDir == nil else { throw ValidationError("--store and --data-dir exclude each other (the store keeps everything)") }
            do {
                _ = try PostgresSessionStore.clientConfiguration(.init(url: store, advertise: "x:1"))
            } catch {
                throw ValidationError("--store: \(error)")
            }
            guard leaseSeconds >= 0.5, leaseSeconds <= 3600 else {
                throw ValidationError("--lease-seconds must be 0.5 to 3600")
            }
            if advertise == nil {
                let (host, port) = try Self.hostPort(listen, option: "--listen")
                guard port > 0, !["0.0.0.0", "::", ""].contains(host) else {
                    throw ValidationError(
                        "with --store and --listen \(listen), say where members reach this relay: --advertise HOST:PORT")
                }
            }
        }
    }

    static func hostPort(_ text: String, option: String) throws -> (host: String, port: Int) {
        guard let colon = text.lastIndex(of: ":") else {
            throw ValidationError("\(option) must be HOST:PORT, got \"\(text)\"")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            throw ValidationError("\(option) must be HOST:PORT with a port in 0...65535, got \"\(text)\"")
        }
        return (host, port)
    }

    /// The relay's NTPv4 time server (ClockSync) for UDP `host:port`: the same port number as the TCP
    /// relay, so members' `TimeClient`s sync against the relay they connect to. A generous per-address
    /// bucket (64 requests/s), since many members can share one address (loopback, NAT).
    static func timeServer(
        host: String, port: Int, timescale: LocalTimescale<ContinuousClock>, logger: Logger
    ) -> TimeServer<ContinuousClock> {
        var core = TimeServerCore.Configuration()
        core.rateLimit = .init(burst: 256, rate: 64)
        return TimeServer(configuration: .init(host: host, port: port, core: core), timescale: timescale, logger: logger)
    }

    /// The browser client's files: `--web-root`, else the copy built next to the binary.
    func webClient() throws -> WebClientFiles? {
        guard !noWeb else { return nil }
        guard let directory = webRoot ?? WebClientFiles.defaultDirectory() else {
            // A binary copied without its resources still relays (browsers need the page from elsewhere).
            Self.warn(
                "coplay serve: the browser client's files are not next to this binary (coplay_WebClient.resources); "
                    + "serving the relay without the page (--web-root DIR serves the repository's Web/static)")
            return nil
        }
        do {
            return try WebClientFiles(directory: directory)
        } catch {
            throw ValidationError("cannot serve the browser client from \(directory): \(error)")
        }
    }

    /// A store URL without its password, for messages.
    static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.password != nil else { return url }
        components.password = "…"
        return components.string ?? url
    }

    /// Writes a line to standard error.
    static func warn(_ line: String) {
        Console.err.line(line)
    }

    /// For `--listen HOST:0`: a port number free on `host` for TCP and for UDP alike. The relay listens
    /// on TCP and its time server then binds UDP on the same number, and a port the kernel picks for
    /// TCP may be in use for UDP (a test run's relay failed with "bind(...:43105): Address already in
    /// use", 28 Nov 2026). Each candidate is bound both ways, then let go for the relay to take; 0 (the
    /// kernel's pick for TCP alone) if none of 32 was free both ways.
    static func portFreeForTCPAndUDP(host: String) async throws -> Int {
        let group = MultiThreadedEventLoopGroup.singleton
        for _ in 0..<32 {
            let tcp = try await ServerBootstrap(group: group).bind(host: host, port: 0).get()
            guard let port = tcp.localAddress?.port else {
                try? await tcp.close().get()
                continue
            }
            let udp = try? await DatagramBootstrap(group: group).bind(host: host, port: port).get()
            try? await tcp.close().get()
            guard let udp else { continue }
            try? await udp.close().get()
            return port
        }
        return 0
    }

    /// Writes a line to standard output unbuffered, so a supervising process sees it at once.
    static func say(_ line: String) {
        Console.out.line(line)
    }

    /// Where the relay keeps its sessions: `--data-dir`, else its own state directory, or nowhere
    /// (`--memory-only`, `--store`, or port 0).
    func stateDirectory(host: String, port: Int, environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let dataDir { return dataDir }
        guard !memoryOnly, store == nil, port != 0 else { return nil }
        let name = "relay-\(host.replacingOccurrences(of: ":", with: "_"))-\(port)"
        return (StateDirectory.base(environment: environment) as NSString).appendingPathComponent(name)
    }

    func run() async throws {
        var logger = Logger(label: "coplay.relay")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        let (host, port) = try Self.hostPort(listen, option: "--listen")
        var configuration = RelayConfiguration(host: host, port: port == 0 ? try await Self.portFreeForTCPAndUDP(host: host) : port)
        configuration.limits.ratePerSecond = rate
        configuration.limits.burst = burst
        configuration.limits.maximumConnections = maxConnections
        configuration.limits.journal.quota = journalQuota
        configuration.limits.idleTimeout = .seconds(idleTimeout)
        let directory = stateDirectory(host: host, port: port)
        var lock: StateDirectory.Lock?
        if let directory {
            let option = dataDir != nil ? "--data-dir" : "the state directory"
            do {
                try FileManager.default.createDirectory(
                    atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw ValidationError(
                    "cannot create \(option) \(directory): \(error.localizedDescription) (--data-dir DIR picks another, --memory-only keeps none)")
            }
            lock = try StateDirectory.Lock(directory: directory)
            configuration.dataDirectory = directory
        }
        defer { withExtendedLifetime(lock) {} }
        var keyPin: String?
        if tls.count == 2 {
            do {
                configuration.tls = try RelayConfiguration.tlsContext(certificatePath: tls[0], keyPath: tls[1])
                if let leaf = try NIOSSLCertificate.fromPEMFile(tls[0]).first {
                    keyPin = Invite.keyPinText(try RelayTransport.keyPin(of: leaf))
                }
            } catch {
                throw ValidationError("cannot load --tls \(tls[0]) \(tls[1]): \(error)")
            }
        }
        configuration.webClient = try webClient()
        let prometheus = metrics.map { _ in RelayPrometheus() }
        if let prometheus { configuration.metricsFactory = prometheus.factory }
        guard let store else {
            return try await serve(configuration, host: host, keyPin: keyPin, prometheus: prometheus, logger: logger)
        }
        var storeConfiguration = PostgresSessionStore.Configuration(url: store, advertise: advertise ?? listen)
        storeConfiguration.leaseDuration = .milliseconds(Int(leaseSeconds * 1000))
        storeConfiguration.renewInterval = storeConfiguration.leaseDuration / 4
        storeConfiguration.safetyMargin = storeConfiguration.leaseDuration / 5
        let sessionStore: PostgresSessionStore
        do {
            sessionStore = try PostgresSessionStore(configuration: storeConfiguration, logger: logger)
        } catch {
            throw ValidationError("cannot use --store \(Self.redacted(store)): \(String(reflecting: error))")
        }
        configuration.store = sessionStore
        // The store's database client and lease renewal run as long as the relay does (structured).
        try await sessionStore.run { [configuration] in
            do {
                try await sessionStore.prepare()
            } catch {
                throw ValidationError("cannot use --store \(Self.redacted(store)): \(String(reflecting: error))")
            }
            try await serve(configuration, host: host, keyPin: keyPin, prometheus: prometheus, logger: logger)
        }
    }

    /// Runs the relay, its time server and its metrics endpoint until SIGTERM/SIGINT.
    private func serve(
        _ configuration: RelayConfiguration, host: String, keyPin: String?, prometheus: RelayPrometheus?, logger: Logger
    ) async throws {
        let relay = RelayServer(configuration: configuration, logger: logger)
        var services: [any Service] = [relay]
        var metricsServer: MetricsServer?
        if let metrics, let prometheus {
            let (metricsHost, metricsPort) = try Self.hostPort(metrics, option: "--metrics")
            let server = MetricsServer(
                host: metricsHost, port: metricsPort, relay: relay, prometheus: prometheus, logger: logger)
            metricsServer = server
            services.append(server)
        }
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) },
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        let tlsEnabled = configuration.tls != nil
        let announcedPin = keyPin
        let timescale = configuration.timescale
        let webFiles = configuration.webClient?.count
        let metricsEndpoint = metricsServer
        let metricsHost = try metrics.map { try Self.hostPort($0, option: "--metrics").host }
        let serviceLogger = logger
        let stateDirectory = configuration.dataDirectory
        let usesStore = configuration.store != nil
        let anyPort = (try? Self.hostPort(listen, option: "--listen"))?.port == 0
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            tasks.addTask {
                // TCP binds first (port 0 picks a free port); UDP then binds the same port number.
                let bound = try await relay.boundPort()
                let time = Self.timeServer(
                    host: host, port: bound, timescale: timescale, logger: serviceLogger)
                try await withThrowingDiscardingTaskGroup { server in
                    server.addTask { try await time.run() }
                    _ = try await time.boundAddress()
                    Self.say("coplay relay listening on \(host):\(bound)\(announcedPin.map { " (TLS, key pin \($0))" } ?? "")")
                    if let stateDirectory {
                        Self.say("coplay relay keeps sessions in \(stateDirectory) (they survive a restart)")
                    } else if !usesStore {
                        Self.say("coplay relay keeps sessions in memory only (a restart ends them)\(anyPort ? ": --listen with port 0 picks a new port at every start" : "")")
                    }
                    if let webFiles {
                        let authority = host.contains(":") ? "[\(host)]:\(bound)" : "\(host):\(bound)"
                        Self.say("coplay web client on \(tlsEnabled ? "https" : "http")://\(authority)/ (\(webFiles) files)")
                    }
                    if let metricsEndpoint, let metricsHost {
                        Self.say("coplay relay metrics on http://\(metricsHost):\(try await metricsEndpoint.boundPort())/metrics")
                    }
                }
            }
            // The service group returns after SIGTERM/SIGINT (graceful shutdown) or fails; either way
            // the time server stops with it. Errors of the cancelled time server are discarded.
            try await tasks.next()
            tasks.cancelAll()
        }
    }
}
