// swift-tools-version:5.9
// ck — CloudKit on the command line. No third-party packages: Foundation, Dispatch, Glibc, XCTest.
import PackageDescription

let package = Package(
    name: "ck",
    products: [
        .executable(name: "ck", targets: ["ck"]),
        .library(name: "CKCore", targets: ["CKCore"]),
        .library(name: "CKCLI", targets: ["CKCLI"]),
        .library(name: "CKServe", targets: ["CKServe"]),
    ],
    targets: [
        // The store: models, JSON files, change history, errors. Never sees argv, never prints.
        .target(name: "CKCore"),
        // CloudKit Web Services over HTTP (`ck serve`): an HTTP/1.1 server on sockets and
        // Dispatch, and the routes that turn a request into an API call and its body back.
        .target(name: "CKServe", dependencies: ["CKCore"]),
        // The command line: one command table, argument scanner, output formats, exit codes.
        .target(name: "CKCLI", dependencies: ["CKCore", "CKServe"]),
        // A thin entry point.
        .executableTarget(name: "ck", dependencies: ["CKCLI"]),
        // What the three test targets share: the sandboxes that run ck (the built binary, or
        // CLI.run in-process), the result type and its assertions, names(_:), the store's
        // promises, the wire fixtures.
        .target(name: "CKTestSupport", dependencies: ["CKCLI", "CKCore"], path: "Tests/CKTestSupport"),
        // The core's API, in-process against a temporary data directory.
        .testTarget(name: "CKCoreTests", dependencies: ["CKCore", "CKTestSupport"]),
        // The command line in-process (CLI.run with captured output): arguments, help, output
        // formats, and every command's behaviour that needs no process of its own.
        .testTarget(name: "CKCLITests", dependencies: ["CKCLI", "CKCore", "CKTestSupport"]),
        // The HTTP server in-process: the HTTP/1.1 engine over real sockets, and the routes.
        .testTarget(name: "CKServeTests", dependencies: ["CKServe", "CKCore", "CKTestSupport"]),
        // The built binary: pipes, signals, --follow, crashes and faults armed by the
        // environment, concurrent processes, install, the documentation's examples.
        .testTarget(name: "EndToEndTests", dependencies: ["ck", "CKTestSupport"]),
    ]
)
