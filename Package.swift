// swift-tools-version:5.9
// ck — CloudKit on the command line. No third-party packages: Foundation, Dispatch, Glibc, XCTest.
import PackageDescription

let package = Package(
    name: "ck",
    products: [
        .executable(name: "ck", targets: ["ck"]),
        .library(name: "CKCore", targets: ["CKCore"]),
        .library(name: "CKCLI", targets: ["CKCLI"]),
    ],
    targets: [
        // The store: models, JSON files, change history, errors. Never sees argv, never prints.
        .target(name: "CKCore"),
        // The command line: one command table, argument scanner, output formats, exit codes.
        .target(name: "CKCLI", dependencies: ["CKCore"]),
        // A thin entry point.
        .executableTarget(name: "ck", dependencies: ["CKCLI"]),
        .testTarget(name: "CKCoreTests", dependencies: ["CKCore"]),
        .testTarget(name: "CKCLITests", dependencies: ["CKCLI", "CKCore"]),
        .testTarget(name: "EndToEndTests", dependencies: ["ck"]),
    ]
)
