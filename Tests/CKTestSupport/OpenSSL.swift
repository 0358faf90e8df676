import Foundation
import XCTest

/// /usr/bin/openssl in a scratch directory of its own; the test is skipped without it.
public struct OpenSSL {
    /// openssl failed; its standard error.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public let directory: String

    /// The scratch directory goes when the test ends.
    public init(_ test: XCTestCase) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl") else {
            throw XCTSkip("/usr/bin/openssl is not installed: the openssl signature tests are skipped")
        }
        directory = NSTemporaryDirectory() + "ck-p256-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let made = directory
        test.addTeardownBlock { try? FileManager.default.removeItem(atPath: made) }
    }

    public func run(_ arguments: String...) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "openssl \(arguments.joined(separator: " ")): \(String(decoding: message, as: UTF8.self))")
        }
    }

    public func write(_ name: String, _ bytes: [UInt8]) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: directory + "/" + name))
    }

    public func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name)))
    }

    public func text(_ name: String) throws -> String {
        String(decoding: try bytes(name), as: UTF8.self)
    }
}
