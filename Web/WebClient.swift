import Foundation

/// The browser client's files: `Web/static` (HTML, CSS and JavaScript modules, no build step),
/// copied by SwiftPM next to every binary that links this target, as `coplay_WebClient.resources`.
///
/// The relay serves them (`SessionRelay`'s `WebClientFiles`); nothing else needs this module.
public enum WebClient {
    /// The directory holding `index.html`: the copy next to the running executable, else this
    /// source tree's `Web/static` (a development binary run from elsewhere); `nil` when neither
    /// exists. (SwiftPM's generated `Bundle.module` would trap when the copy is missing.)
    public static func staticDirectory() -> String? {
        let bundle = "coplay_WebClient.resources/static"
        var candidates: [URL] = []
        if let executable = Bundle.main.executableURL?.resolvingSymlinksInPath() {
            candidates.append(executable.deletingLastPathComponent().appendingPathComponent(bundle))
        }
        candidates.append(Bundle.main.bundleURL.appendingPathComponent(bundle))
        candidates.append(URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("static"))
        return candidates.first { FileManager.default.fileExists(atPath: $0.appendingPathComponent("index.html").path) }?.path
    }
}
