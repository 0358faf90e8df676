import CKCore
import CKModel
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Output formats (SPEC §2).
/// `aps`: the push payload a device receives, one per line (`ck notifications` only).
public enum OutputFormat: String, CaseIterable { case json, ndjson, table, csv, tsv, aps }
public enum ErrorFormat: String, CaseIterable { case text, json }

/// The options every command accepts, with their environment variables and defaults (SPEC §1).
public struct GlobalOptions {
    public static let specs: [OptionSpec] = [
        OptionSpec("--data-dir", value: "DIR", help: "data directory [$CK_DATA_DIR; default: nearest .ck/, else ~/.ck]"),
        OptionSpec("--container", aliases: ["--container-id"], value: "ID", help: "container identifier, iCloud.… [$CK_CONTAINER; default: 'ck container use', else iCloud.com.example.app]"),
        OptionSpec("--environment", aliases: ["--env"], value: "ENV", help: "development or production [$CK_ENVIRONMENT; default: development]"),
        OptionSpec("--database", aliases: ["--db", "--database-type"], value: "DB", help: "public, private or shared [$CK_DATABASE; default: private]"),
        OptionSpec("--zone", aliases: ["--zone-name"], value: "NAME", repeatable: true, help: "zone name [$CK_ZONE; default: _defaultZone]; 'zone changes' takes several"),
        OptionSpec("--as", value: "APPLE-ID", help: "act as this signed-in user for one command [$CK_USER]"),
        OptionSpec("--device", value: "NAME", help: "device whose bookmarks and notifications are used [$CK_DEVICE; default: default]"),
        OptionSpec("--format", value: "FORMAT", help: "json, ndjson, table, csv or tsv; aps for 'notifications' [$CK_FORMAT; default: json]"),
        OptionSpec("--error-format", value: "FORMAT", help: "text or json [$CK_ERROR_FORMAT; default: text]"),
        OptionSpec("--quiet", aliases: ["-q"], help: "no warnings or progress on stderr (errors still) [$CK_QUIET=1]"),
    ]

    public static let defaultContainer = "iCloud.com.example.app"

    public var dataDirectory: String
    public var containerOverride: String?
    public var environment: CKModel.Environment
    public var scope: DatabaseScope
    public var zone: String
    /// Every --zone given (`zone changes` fetches several zones in one call).
    public var zones: [String]
    public var actingAs: String?
    public var device: String
    public var format: OutputFormat
    public var errorFormat: ErrorFormat
    /// `-q`: warnings and progress are not printed.
    public var quiet: Bool
    /// Whether `--format` was given on the command line (not defaulted, nor from $CK_FORMAT):
    /// a command whose output is text by nature (`schema export`) prints JSON only when asked.
    public var formatGiven = false

    /// The error format alone, read leniently, so even a bad command line reports in the
    /// format the caller asked for.
    static func errorFormat(tokens: [String], environment: [String: String]) -> ErrorFormat {
        var v = environment["CK_ERROR_FORMAT"]
        for (i, t) in tokens.enumerated() {
            if t == "--error-format", i + 1 < tokens.count { v = tokens[i + 1] }
            if t.hasPrefix("--error-format=") { v = String(t.dropFirst("--error-format=".count)) }
        }
        return v.flatMap(ErrorFormat.init(rawValue:)) ?? .text
    }

    static func resolve(_ args: ParsedArguments, io: IO) throws -> GlobalOptions {
        let env = io.environment
        func pick(_ name: String, _ variable: String?) -> String? {
            if let v = args.value(name) { return v }
            if let variable = variable, let v = env[variable], !v.isEmpty { return v }
            return nil
        }
        func choice<T: RawRepresentable & CaseIterable>(_ name: String, _ variable: String, _ def: T) throws -> T where T.RawValue == String {
            guard let raw = pick(name, variable) else { return def }
            guard let v = T(rawValue: raw) else {
                let source = args.value(name) != nil ? name : "$\(variable)"
                throw UsageError("invalid value '\(raw)' for \(source); valid values: \(T.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return v
        }
        var dataDir: String
        var discovered = false
        if let d = args.value("--data-dir"), d.isEmpty {
            throw UsageError("--data-dir must not be empty")
        } else if let d = pick("--data-dir", "CK_DATA_DIR") {
            dataDir = d.hasPrefix("/") ? d : io.currentDirectory + "/" + d
        } else if let found = findProjectDirectory(from: io.currentDirectory) {
            dataDir = found
            discovered = true
        } else {
            dataDir = (env["HOME"] ?? NSHomeDirectory()) + "/.ck"
        }
        if dataDir.contains("\u{0}") { throw UsageError("data directory contains a NUL character") }
        do { try CloudKitAPI.checkDataDirectory(dataDir, discovered: discovered) } catch DataDirectoryFailure.notADirectory(let p) {
            throw UsageError("data directory '\(p)' is not a directory")
        }
        let device = pick("--device", "CK_DEVICE") ?? "default"
        do { try Names.validateName(device, noun: "device name") } catch let e as CloudKitError { throw UsageError("invalid " + e.reason) }
        var zones = args.values("--zone")
        if zones.isEmpty, let z = env["CK_ZONE"], !z.isEmpty { zones = [z] }
        let zone = zones.last ?? ZoneID.defaultZoneName
        var options = GlobalOptions(
            dataDirectory: dataDir,
            containerOverride: pick("--container", "CK_CONTAINER"),
            environment: try choice("--environment", "CK_ENVIRONMENT", CKModel.Environment.development),
            scope: try choice("--database", "CK_DATABASE", DatabaseScope.private),
            zone: zone,
            zones: zones,
            actingAs: pick("--as", "CK_USER"),
            device: device,
            format: try choice("--format", "CK_FORMAT", OutputFormat.json),
            errorFormat: try choice("--error-format", "CK_ERROR_FORMAT", ErrorFormat.text),
            quiet: args.has("--quiet") || ["1", "true", "yes"].contains(env["CK_QUIET"]?.lowercased() ?? ""))
        options.formatGiven = args.value("--format") != nil
        return options
    }

    /// The nearest `.ck` walking up from `dir`, like git looks for `.git/` (whether it may be
    /// used is checked next: CloudKitAPI.checkDataDirectory).
    static func findProjectDirectory(from dir: String) -> String? {
        var d = dir
        while true {
            let candidate = (d == "/" ? "" : d) + "/.ck"
            var st = stat()
            if lstat(candidate, &st) == 0 { return candidate }
            if d == "/" || d.isEmpty { return nil }
            d = (d as NSString).deletingLastPathComponent
        }
    }
}
