import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Opens a URL in the user's browser, as git web--browse and Python's webbrowser do: the
/// program `$BROWSER` names, else the system's opener (`xdg-open`, `open`), found on `$PATH`.
/// The browser runs on its own; ck does not wait for it.
enum BrowserOpener {
    /// nil when a browser was started; else why none was.
    static func open(_ url: String, environment: [String: String]) -> String? {
        let candidates: [String]
        if let b = environment["BROWSER"], !b.isEmpty {
            // A list as Python reads it: the first that exists.
            candidates = b.split(separator: ":").map(String.init)
        } else {
            #if os(macOS)
            candidates = ["open"]
            #else
            candidates = ["xdg-open", "sensible-browser"]
            #endif
        }
        guard let program = candidates.lazy.compactMap({ find($0, path: environment["PATH"] ?? "/usr/bin:/bin") }).first else {
            return "no browser to open (\(environment["BROWSER"].map { "$BROWSER=\($0) is not a program" } ?? "no xdg-open; set $BROWSER"))"
        }
        let browser = Process()
        browser.executableURL = URL(fileURLWithPath: program)
        browser.arguments = [url]
        browser.standardInput = FileHandle.nullDevice
        browser.standardOutput = FileHandle.nullDevice
        browser.standardError = FileHandle.nullDevice
        do {
            // Foundation reaps it when it ends: no zombie behind a long-running server.
            try browser.run()
            return nil
        } catch {
            return "cannot start \(program): \(error.localizedDescription)"
        }
    }

    /// `name` itself when it holds a slash, else the first executable of that name on `path`.
    static func find(_ name: String, path: String) -> String? {
        if name.contains("/") { return access(name, X_OK) == 0 ? name : nil }
        for dir in path.split(separator: ":") where !dir.isEmpty {
            let candidate = dir + "/" + name
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}
