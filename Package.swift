// swift-tools-version:5.9
// ck — CloudKit on the command line. No third-party packages: Foundation, Dispatch, Glibc, XCTest.
import PackageDescription

let package = Package(
    name: "ck",
    products: [
        .executable(name: "ck", targets: ["ck"]),
        .executable(name: "ck-remote-https", targets: ["ck-remote-https"]),
        .library(name: "CKJSON", targets: ["CKJSON"]),
        .library(name: "CKCrypto", targets: ["CKCrypto"]),
        .library(name: "CKHTTP", targets: ["CKHTTP"]),
        .library(name: "CKModel", targets: ["CKModel"]),
        .library(name: "CKCore", targets: ["CKCore"]),
        .library(name: "CKCLI", targets: ["CKCLI"]),
        .library(name: "CKServe", targets: ["CKServe"]),
        .library(name: "CKRemote", targets: ["CKRemote"]),
    ],
    // Targets are layers: each depends only on those below it, so a dependency that points
    // upward does not compile (Docs/architecture.md draws them).
    targets: [
        // Leaves: they know nothing of CloudKit.
        // JSON values with integers kept apart from doubles; a parser and a sorted-key writer.
        .target(name: "CKJSON"),
        // SHA-256 (whole and streamed), HMAC, P-256 ECDSA signing and verification, DER and PEM.
        .target(name: "CKCrypto"),
        // An HTTP/1.1 server on sockets and threads: heads, bodies (read or streamed), keep-alive,
        // limits and timeouts. It calls a handler and knows no route. And a client of one origin.
        .target(name: "CKHTTP"),
        // The vocabulary every layer shares: records, fields, zone IDs, errors, endpoints,
        // subscriptions, names and their limits. Nothing in it refers to the store.
        .target(name: "CKModel", dependencies: ["CKJSON", "CKCrypto"]),
        // The store: a data directory's files, its histories, indexes, locks and commits. It
        // shows the API above it what it needs through `package` access, and nothing to anyone
        // else.
        .target(name: "CKStore", dependencies: ["CKModel", "CKJSON", "CKCrypto"]),
        // The one API: a typed request and the Web Services body per endpoint and per ck
        // operation, one preflight and one permission gate. Never sees argv, never prints.
        .target(name: "CKCore", dependencies: ["CKStore", "CKModel", "CKJSON", "CKCrypto"]),
        // CloudKit Web Services over HTTP (`ck serve`): the routes that turn a request into an
        // API call and its body back, on the HTTP engine.
        // The console's page, script and style are compiled in (embedInCode): ck stays one file.
        .target(name: "CKServe", dependencies: ["CKCore", "CKModel", "CKHTTP", "CKJSON"],
                resources: [.embedInCode("Console/Resources/console.html"), .embedInCode("Console/Resources/console.js"),
                            .embedInCode("Console/Resources/console.css")]),
        // A client of CloudKit Web Services (`ck remote`, clone, fetch, pull, push): requests
        // with CloudKit's credentials and pacing over the HTTP engine's client; what it brings
        // and sends goes through the API, like any other front end's.
        .target(name: "CKRemote", dependencies: ["CKCore", "CKModel", "CKHTTP", "CKJSON", "CKCrypto"]),
        // The command line: one command table, argument scanner, output formats, exit codes.
        .target(name: "CKCLI", dependencies: ["CKCore", "CKModel", "CKServe", "CKRemote", "CKJSON"]),
        // A thin entry point.
        .executableTarget(name: "ck", dependencies: ["CKCLI"]),
        // The helper ck starts to speak HTTPS, as git has git-remote-https: HTTP/1.1 on its
        // stdin and stdout, URLSession (the system's libcurl and TLS) to the server. Apart from
        // ck, so ck stays one static executable (Docs/remote.md, "HTTPS").
        // Exporting curl_easy_init lets its wrapper stand in for libcurl's when Foundation is
        // a shared library too (the debug build); the release build links Foundation in.
        .executableTarget(name: "ck-remote-https",
                          linkerSettings: [.unsafeFlags(["-Xlinker", "--export-dynamic-symbol=curl_easy_init"], .when(platforms: [.linux]))]),
        // What the three test targets share: the sandboxes that run ck (the built binary, or
        // CLI.run in-process), the result type and its assertions, names(_:), the store's
        // promises, the wire fixtures.
        .target(name: "CKTestSupport", dependencies: ["CKCLI", "CKCore", "CKModel", "CKJSON"], path: "Tests/CKTestSupport"),
        // The leaves, each on its own.
        .testTarget(name: "CKJSONTests", dependencies: ["CKJSON"]),
        .testTarget(name: "CKCryptoTests", dependencies: ["CKCrypto", "CKTestSupport"]),
        // The core's API, in-process against a temporary data directory.
        .testTarget(name: "CKCoreTests", dependencies: ["CKCore", "CKStore", "CKModel", "CKJSON", "CKCrypto", "CKTestSupport"]),
        // The command line in-process (CLI.run with captured output): arguments, help, output
        // formats, and every command's behaviour that needs no process of its own.
        .testTarget(name: "CKCLITests", dependencies: ["CKCLI", "CKCore", "CKModel", "CKJSON", "CKTestSupport"]),
        // The HTTP/1.1 engine over real sockets, with a handler of its own: framing, keep-alive,
        // limits, hostile peers.
        .testTarget(name: "CKHTTPTests", dependencies: ["CKHTTP", "CKTestSupport"]),
        // ck serve in-process: the routes, credentials and bodies of Web Services over HTTP.
        .testTarget(name: "CKServeTests", dependencies: ["CKServe", "CKHTTP", "CKCore", "CKStore", "CKModel", "CKJSON", "CKCrypto", "CKTestSupport"]),
        // The remote client in-process against ck serve on loopback: two data directories,
        // clone, fetch, pull, push, credentials, pacing and faults.
        .testTarget(name: "CKRemoteTests", dependencies: ["CKRemote", "CKServe", "CKHTTP", "CKCore", "CKModel", "CKJSON", "CKCrypto", "CKTestSupport"]),
        // The built binaries: pipes, signals, --follow, crashes and faults armed by the
        // environment, concurrent processes, install, the documentation's examples; HTTPS
        // through ck-remote-https to nginx on loopback.
        .testTarget(name: "EndToEndTests", dependencies: ["ck", "ck-remote-https", "CKHTTP", "CKTestSupport"]),
    ]
)
