import CKCore
import CKJSON
import CKModel
import Foundation

/// The exit-code table (SPEC §2), in one place.
public enum ExitCode {
    public static let success: Int32 = 0
    public static let internalFailure: Int32 = 1
    public static let usage: Int32 = 2
    public static let notFound: Int32 = 3
    public static let conflict: Int32 = 4
    public static let notPermitted: Int32 = 5
    public static let invalid: Int32 = 6
    public static let tokenExpired: Int32 = 7
    public static let limit: Int32 = 8
    public static let partialFailure: Int32 = 9
    /// A remote session used its waiting budget (`--max-wait`) on throttles and retries: what
    /// was fetched is saved, and the same command goes on from there.
    public static let gaveUp: Int32 = 10
    /// stdout's reader went away: what a shell reports for a process killed by SIGPIPE.
    public static let brokenPipe: Int32 = 141

    public static func of(_ code: ServerErrorCode) -> Int32 {
        switch code {
        case .internalError: return internalFailure
        case .notFound, .zoneNotFound: return notFound
        case .conflict, .exists, .alreadyShared: return conflict
        case .authenticationRequired, .authenticationFailed, .accessDenied: return notPermitted
        case .badRequest, .validatingReferenceError: return invalid
        case .changeTokenExpired: return tokenExpired
        // Also every "try again later": the request may succeed if repeated (Docs/faults.md).
        case .limitExceeded, .quotaExceeded, .throttled, .tryAgainLater, .serviceUnavailable, .networkFailure: return limit
        case .atomicError: return partialFailure
        }
    }
}

/// Prints failures on stderr: one line, text or the Web Services error envelope.
enum ErrorReporter {
    static func report(_ e: CloudKitError, io: IO, format: ErrorFormat, style: ResponseStyle? = nil, hint: String? = nil) -> Int32 {
        io.discardPending()
        switch format {
        case .text: io.writeErr("ck: \(e.code.rawValue): \(oneLine(e.reason))\(hint.map { "; " + oneLine($0) } ?? "")\n")
        case .json:
            var shown = e
            shown.reason = oneLine(e.reason)
            if let n = e.recordName, n.utf8.count > Names.maxLength { shown.recordName = Names.describe(n) }
            io.writeErr(JSONWriter.line(shown.envelope(style: style)))
        }
        return ExitCode.of(e.code)
    }

    /// stdout could not be written. A reader that went away is not an error to talk about.
    static func output(_ s: OutputStatus, io: IO, format: ErrorFormat) -> Int32 {
        switch s {
        case .ok: return ExitCode.success
        case .closed: return ExitCode.brokenPipe
        case .interrupted: return ExitCode.success
        case .failed(let why):
            switch format {
            case .text: io.writeErr("ck: cannot write output: \(why)\n")
            case .json: io.writeErr(JSONWriter.line(CloudKitError.internalError("cannot write output: " + why).envelope()))
            }
            return ExitCode.internalFailure
        }
    }

    static func usage(_ u: UsageError, io: IO, format: ErrorFormat, table: CommandTable) -> Int32 {
        io.discardPending()
        switch format {
        case .text:
            io.writeErr("ck: error: \(oneLine(u.message))\n")
            if let path = u.command, let c = table.command(path) {
                io.writeErr("usage: \(c.usage)\nSee 'ck \(c.name) --help'.\n")
            } else {
                io.writeErr("usage: ck <command> [options]\nSee 'ck help'.\n")
            }
        case .json:
            io.writeErr(JSONWriter.line(["serverErrorCode": "USAGE", "reason": .string(oneLine(u.message)), "exitCode": 2]))
        }
        return ExitCode.usage
    }

    /// One line, and never an unbounded one: a message echoing hostile input is cut.
    static func oneLine(_ s: String) -> String {
        var t = s.replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "\r", with: " ")
        if t.utf8.count > maxMessageBytes {
            t = String(decoding: Array(t.utf8.prefix(maxMessageBytes)), as: UTF8.self).trimmingCharacters(in: CharacterSet(charactersIn: "\u{FFFD}")) + "…"
        }
        return t
    }

    static let maxMessageBytes = 2000
}
