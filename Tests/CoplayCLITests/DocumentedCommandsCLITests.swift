import Foundation
import Testing

/// Every `coplay …` command line the documentation shows (README.md and docs/*.md: shell blocks, and
/// inline code with an option) names a subcommand that exists and options that subcommand has, per
/// its `--help`: a renamed or removed option fails here, not in a new user's terminal.
@Suite("coplay: the documented command lines match the code")
struct DocumentedCommandsCLITests {
    /// One documented command line.
    struct Documented: CustomStringConvertible {
        var file: String
        var line: Int
        var words: [String]
        var description: String { "\(file):\(line): coplay \(words.joined(separator: " "))" }
    }

    /// The documents: README.md and docs/*.md (not docs/results/, which are reports of past runs).
    static func documents() throws -> [(name: String, text: String)] {
        let root = CoplayProcess.packageRoot
        var names = ["README.md"]
        let docs = root.appendingPathComponent("docs")
        names += try FileManager.default.contentsOfDirectory(atPath: docs.path).filter { $0.hasSuffix(".md") }.sorted().map { "docs/\($0)" }
        return try names.map { ($0, try String(contentsOf: root.appendingPathComponent($0), encoding: .utf8)) }
    }

    /// The command lines in `text`: in ```sh blocks every `coplay` command (after a line start, `;`,
    /// `&`, `|`, `$(` or `VAR=value`), elsewhere inline code spans that start with `coplay ` and give an option.
    static func commands(in text: String, file: String) -> [Documented] {
        var found: [Documented] = []
        var inShell = false
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("```") {
                inShell = !inShell && (trimmed == "```sh" || trimmed == "```bash" || trimmed == "```console")
                continue
            }
            if inShell {
                for words in commandWords(String(line)) { found.append(Documented(file: file, line: number + 1, words: words)) }
            } else {
                for match in line.matches(of: /`coplay ([^`]+)`/) {
                    let words = shellWords(String(match.output.1))
                    guard let first = words.first, words.contains(where: { $0.hasPrefix("--") }) else { continue }
                    // Prose shorthand for several commands: `coplay host/join --player mpv`.
                    for subcommand in first.split(separator: "/") {
                        found.append(Documented(file: file, line: number + 1, words: [String(subcommand)] + words.dropFirst()))
                    }
                }
            }
        }
        return found
    }

    /// The `coplay` commands of one shell line, each as its words after `coplay`.
    static func commandWords(_ line: String) -> [[String]] {
        let words = shellWords(line)
        var commands: [[String]] = []
        var index = 0
        while index < words.count {
            let word = words[index]
            let starts = index == 0 || ["|", "&", ";", "&&", "||", "$(", "(", "$"].contains(words[index - 1])
                || words[index - 1].wholeMatch(of: /[A-Z_]+=.*/) != nil
            if word == "coplay" && starts {
                var command: [String] = []
                index += 1
                while index < words.count, !["|", "&", ";", "&&", "||", ")", "#"].contains(words[index]) {
                    command.append(words[index])
                    index += 1
                }
                commands.append(command)
            } else {
                index += 1
            }
        }
        return commands
    }

    /// Splits shell text into words and the operators `| & ; && || ( ) $(`, honouring quotes (a
    /// quoted `$(…)` stays one word); `#` after a blank starts a comment (returned as the word `#`).
    static func shellWords(_ text: String) -> [String] {
        var words: [String] = []
        var current = ""
        var quote: Character?
        var depth = 0
        var characters = Array(text)[...]
        func flush() {
            if !current.isEmpty { words.append(current) }
            current = ""
        }
        while let character = characters.popFirst() {
            if let open = quote {
                if character == open && depth == 0 { quote = nil } else { current.append(character) }
                if character == "(" && current.hasSuffix("$(") { depth += 1 }
                if character == ")" && depth > 0 { depth -= 1 }
                continue
            }
            switch character {
            case "'", "\"": quote = character
            case " ", "\t": flush()
            case "#" where current.isEmpty:
                flush()
                words.append("#")
                return words
            case "|", "&", ";":
                flush()
                if characters.first == character {
                    characters.removeFirst()
                    words.append(String([character, character]))
                } else {
                    words.append(String(character))
                }
            case "(":
                if current.hasSuffix("$") {
                    current.removeLast()
                    flush()
                    words.append("$(")
                } else {
                    flush()
                    words.append("(")
                }
            case ")":
                flush()
                words.append(")")
            default: current.append(character)
            }
        }
        flush()
        return words
    }

    /// `coplay PATH --help`, cached.
    actor HelpPages {
        private var pages: [[String]: String] = [:]

        func help(_ path: [String]) async throws -> String? {
            if let page = pages[path] { return page }
            let result = try await CoplayProcess.run(path + ["--help"], timeout: 60)
            let page = result.status == 0 ? result.stdout : nil
            pages[path] = page ?? ""
            return page
        }

        /// The subcommand a help page marks `(default)`, if any.
        static func defaultSubcommand(_ page: String) -> String? {
            guard let range = page.range(of: "SUBCOMMANDS:") else { return nil }
            return page[range.upperBound...].split(separator: "\n").first { $0.hasPrefix("  ") && $0.contains("(default)") }
                .flatMap { $0.split(separator: " ").first.map(String.init) }
        }

        /// The subcommands a help page lists.
        static func subcommands(_ page: String) -> [String] {
            guard let range = page.range(of: "SUBCOMMANDS:") else { return [] }
            return page[range.upperBound...].split(separator: "\n").compactMap { line in
                guard line.hasPrefix("  "), let first = line.split(separator: " ").first else { return nil }
                return String(first)
            }
        }
    }

    @Test("README.md and docs/*.md show command lines whose subcommands and options exist")
    func documentedCommandsParse() async throws {
        let documented = try Self.documents().flatMap { Self.commands(in: $0.text, file: $0.name) }
        // README's usage section alone shows dozens; a parser that finds none is broken.
        #expect(documented.filter { $0.file == "README.md" }.count >= 30, "\(documented.count) commands found")
        let pages = HelpPages()
        var checked = 0
        for command in documented {
            // The subcommand path: words while they name a subcommand of the page so far.
            var path: [String] = []
            guard var page = try await pages.help(path) else { Issue.record("coplay --help failed"); return }
            for word in command.words {
                guard HelpPages.subcommands(page).contains(word), let next = try await pages.help(path + [word]) else { break }
                path.append(word)
                page = next
            }
            if path.isEmpty && !(command.words.first ?? "").hasPrefix("-") {
                Issue.record("\(command): no such subcommand")
                continue
            }
            // Options of a group with a default subcommand (`coplay bench --scenario`) are that subcommand's.
            if let fallback = HelpPages.defaultSubcommand(page), let next = try await pages.help(path + [fallback]) {
                page += "\n" + next
            }
            // Every option it gives must be on that page; a value of an option that takes one is skipped.
            var words = command.words.dropFirst(path.count)[...]
            while let word = words.popFirst() {
                guard word.hasPrefix("--"), word != "--" else { continue }
                let name = String(word.prefix { $0 != "=" })
                guard let match = page.firstMatch(of: try Regex("(^|[ ,])\(NSRegularExpression.escapedPattern(for: name))( <[^>]+>)?([ ,\\n]|$)").anchorsMatchLineEndings()) else {
                    Issue.record("\(command): coplay \(path.joined(separator: " ")) has no \(name)")
                    continue
                }
                if !word.contains("="), String(page[match.range]).contains("<") { _ = words.popFirst() }
            }
            checked += 1
        }
        #expect(checked == documented.count)
    }

    @Test("the help texts say what the code does")
    func helpTexts() async throws {
        let control = try await CoplayProcess.run(["control", "--help"], timeout: 30)
        #expect(control.status == 0)
        #expect(!control.stdout.contains("did not keep their current item and do not follow"), "the garbled sentence is back")
        #expect(control.stdout.contains("keeps its current item and ignores the group's commands"))
        for command in ["join", "control", "people"] {
            let help = try await CoplayProcess.run([command, "--help"], timeout: 30)
            #expect(help.stdout.contains("--invite-file") && help.stdout.contains("COPLAY_INVITE"), "coplay \(command) --help")
        }
        let serve = try await CoplayProcess.run(["serve", "--help"], timeout: 30)
        #expect(serve.stdout.contains("--memory-only"))
        let web = try String(contentsOf: CoplayProcess.packageRoot.appendingPathComponent("docs/web.md"), encoding: .utf8)
        #expect(!web.contains("have no TLS option yet"))
        #expect(!web.contains("for a file next to the page"))
    }

    @Test("the shell splitter finds the commands a README line holds")
    func splitter() {
        #expect(Self.commandWords("coplay control --invite-file f seek 1:30   # a comment | not a pipe")
            == [["control", "--invite-file", "f", "seek", "1:30"]])
        #expect(Self.commandWords("mpv --input-ipc-server=/tmp/s m.mkv & coplay join --invite-file f m.mkv")
            == [["join", "--invite-file", "f", "m.mkv"]])
        #expect(Self.commandWords("COPLAY_INVITE=\"$(cat f)\" coplay people --json") == [["people", "--json"]])
        #expect(Self.commandWords("coplay control --invite-file f item \"$(coplay probe --json o.mp4 | jq -r .fingerprint)\"").count == 1)
        #expect(Self.commandWords("x=$(coplay probe --json a.mp4)") == [["probe", "--json", "a.mp4"]])
        #expect(Self.commandWords("$ coplay serve --listen 127.0.0.1:7000") == [["serve", "--listen", "127.0.0.1:7000"]])
        #expect(Self.commandWords("see coplay serve") == [])
    }
}
