import CKCore

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

    public static func of(_ code: ServerErrorCode) -> Int32 {
        switch code {
        case .internalError: return internalFailure
        case .notFound, .zoneNotFound: return notFound
        case .conflict, .exists: return conflict
        case .authenticationRequired, .authenticationFailed, .accessDenied: return notPermitted
        case .badRequest, .validatingReferenceError: return invalid
        case .changeTokenExpired: return tokenExpired
        case .limitExceeded, .quotaExceeded, .throttled, .tryAgainLater: return limit
        case .atomicError: return partialFailure
        }
    }
}

/// Prints failures on stderr: one line, text or the Web Services error envelope.
enum ErrorReporter {
    static func report(_ e: CloudKitError, io: IO, format: ErrorFormat, assetBase: String? = nil) -> Int32 {
        switch format {
        case .text: io.writeErr("ck: \(e.code.rawValue): \(oneLine(e.reason))\n")
        case .json: io.writeErr(JSONWriter.line(e.envelope(assetBase: assetBase)))
        }
        return ExitCode.of(e.code)
    }

    static func usage(_ u: UsageError, io: IO, format: ErrorFormat, table: CommandTable) -> Int32 {
        switch format {
        case .text:
            io.writeErr("ck: error: \(oneLine(u.message))\n")
            if let path = u.command, let c = table.command(path) {
                io.writeErr("usage: \(c.usage)\nSee 'ck \(c.name) --help'.\n")
            } else {
                io.writeErr("usage: ck <command> [options]\nSee 'ck help'.\n")
            }
        case .json:
            io.writeErr(JSONWriter.line(["serverErrorCode": "USAGE", "reason": .string(u.message), "exitCode": 2]))
        }
        return ExitCode.usage
    }

    static func oneLine(_ s: String) -> String {
        s.replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "\r", with: " ")
    }
}

import Foundation
