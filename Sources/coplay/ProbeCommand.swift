import ArgumentParser
import Foundation
import MediaProbe

/// `coplay probe FILE...`: container, streams, fingerprint and stream identity of media files (via MediaProbe).
struct ProbeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "Show the container, streams, frame rates, fingerprint and stream identity of media files.",
        discussion: """
            Files are probed concurrently with libavformat (nothing is decoded) and printed in the order given.
            The fingerprint (v2:SIZE:SHA256) names the file's bytes; the stream identity (v3:SHA256) names its \
            video packets, so a remux into another container (ffmpeg -c copy) has the same identity and another \
            encode does not. Sessions name their items by stream identity: `coplay control item v3:…`.
            --json prints ffprobe's JSON layout (-show_format -show_streams) for the fields both tools have, plus
            "fingerprint" and "stream_identity"; one object for one file, one object per line for several. --frames reads every packet:
            frame counts ("nb_read_packets") and, with --json, each video stream's "frame_times" in seconds.
            A file that cannot be probed prints an error on standard error; the others are still printed and the
            exit status is 1.
            """
    )

    @Argument(help: "Media files to probe.", completion: .file())
    var files: [String] = []

    @Flag(help: "Print JSON (ffprobe's names and layout) instead of a table.")
    var json = false

    @Flag(help: "Read every packet: frame counts, and frame_times on video streams with --json.")
    var frames = false

    @Option(help: "Give up on a file after this many seconds.")
    var timeout: Double = 60

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("Give at least one media file to probe.") }
        guard timeout > 0, timeout <= 86_400 else { throw ValidationError("--timeout must be between 0 and 86400 seconds.") }
    }

    func run() async throws {
        let options = MediaProbe.Options(scanPackets: frames, streamIdentity: true, timeout: .milliseconds(Int64(timeout * 1000)))
        let probe = MediaProbe.shared
        let results = await withTaskGroup(of: (Int, Result<MediaInfo, any Error>).self) { group in
            for (index, file) in files.enumerated() {
                group.addTask {
                    do {
                        return (index, .success(try await probe.probe(URL(fileURLWithPath: file), options: options)))
                    } catch {
                        return (index, .failure(error))
                    }
                }
            }
            var results = [Result<MediaInfo, any Error>?](repeating: nil, count: files.count)
            for await (index, result) in group { results[index] = result }
            return results.compactMap { $0 }
        }

        var failed = false
        for result in results {
            switch result {
            case .success(let info):
                if json {
                    let data = try info.ffprobeJSON(frameTimes: frames)
                    print(String(decoding: data, as: UTF8.self))
                } else {
                    print(info.summary)
                }
            case .failure(let error):
                failed = true
                Console.err.write("coplay probe: \(error)\n")
            }
        }
        if failed { throw ExitCode.failure }
    }
}
