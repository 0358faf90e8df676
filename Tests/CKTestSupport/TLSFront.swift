import Foundation
import XCTest

/// nginx on loopback as an HTTPS front for a plain HTTP backend, with a CA made for the test:
/// what stands in for CloudKit's TLS. Three doors to the same backend: `port` with a certificate
/// for 127.0.0.1 and localhost from `caFile`; `foreignPort` with one for the same names from
/// another CA; `misnamedPort` with one from `caFile` for another name. The test is skipped
/// without nginx or openssl (Debian's nginx-light and openssl).
public final class TLSFront {
    public let directory: String
    public let caFile: String
    public let port: UInt16
    public let foreignPort: UInt16
    public let misnamedPort: UInt16
    private let nginx: Process

    public static let nginxPath = "/usr/sbin/nginx"
    public static let opensslPath = "/usr/bin/openssl"

    /// Starts nginx proxying to 127.0.0.1:`backendPort`; it stops when the test ends.
    public init(_ test: XCTestCase, backendPort: UInt16) throws {
        for tool in [Self.nginxPath, Self.opensslPath] where !FileManager.default.isExecutableFile(atPath: tool) {
            throw XCTSkip("\(tool) is missing: the HTTPS tests need Debian's nginx-light and openssl")
        }
        let made = NSTemporaryDirectory() + "ck-tls-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: made + "/logs", withIntermediateDirectories: true)
        directory = made
        caFile = made + "/ca.pem"

        // Two CAs; three server certificates (P-256, valid a day).
        try Self.openssl(in: directory, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                         "-keyout", "ca.key", "-out", "ca.pem", "-days", "1", "-subj", "/CN=ck test CA")
        try Self.openssl(in: directory, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                         "-keyout", "foreign-ca.key", "-out", "foreign-ca.pem", "-days", "1", "-subj", "/CN=another CA")
        try Self.openssl(in: directory, "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                         "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost")
        func sign(_ out: String, by ca: String, names: String) throws {
            let ext = "\(out).ext"
            try "subjectAltName=\(names)\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
                .write(toFile: made + "/" + ext, atomically: true, encoding: .utf8)
            try Self.openssl(in: made, "x509", "-req", "-in", "server.csr", "-CA", "\(ca).pem", "-CAkey", "\(ca).key",
                             "-CAcreateserial", "-out", out, "-days", "1", "-extfile", ext)
        }
        try sign("server.pem", by: "ca", names: "DNS:localhost,IP:127.0.0.1")
        try sign("foreign.pem", by: "foreign-ca", names: "DNS:localhost,IP:127.0.0.1")
        try sign("misnamed.pem", by: "ca", names: "DNS:elsewhere.invalid")

        let ports = try (0..<3).map { _ in try Self.freePort() }
        (port, foreignPort, misnamedPort) = (ports[0], ports[1], ports[2])
        func server(_ port: UInt16, _ cert: String) -> String {
            """
              server {
                listen 127.0.0.1:\(port) ssl http2;
                ssl_certificate \(made)/\(cert);
                ssl_certificate_key \(made)/server.key;
                location / { proxy_pass http://127.0.0.1:\(backendPort); proxy_set_header Host $http_host; proxy_http_version 1.1; proxy_buffering off; }
              }

            """
        }
        // One process (no master): it runs as the test's user, root included, and stops at SIGTERM.
        let config = """
            daemon off;
            master_process off;
            pid \(made)/nginx.pid;
            error_log \(made)/logs/error.log warn;
            events { worker_connections 64; }
            http {
              access_log off;
              client_max_body_size 0;
              client_body_temp_path \(made)/body;
              proxy_temp_path \(made)/proxy;
              fastcgi_temp_path \(made)/fastcgi;
              uwsgi_temp_path \(made)/uwsgi;
              scgi_temp_path \(made)/scgi;
            \(server(port, "server.pem"))\(server(foreignPort, "foreign.pem"))\(server(misnamedPort, "misnamed.pem"))}

            """
        try config.write(toFile: directory + "/nginx.conf", atomically: true, encoding: .utf8)

        nginx = Process()
        nginx.executableURL = URL(fileURLWithPath: Self.nginxPath)
        nginx.arguments = ["-p", directory, "-c", directory + "/nginx.conf", "-e", directory + "/logs/error.log"]
        nginx.standardOutput = FileHandle.nullDevice
        nginx.standardError = FileHandle.nullDevice
        nginx.standardInput = FileHandle.nullDevice
        try nginx.run()
        let running = nginx
        test.addTeardownBlock {
            running.terminate()
            running.waitUntilExit()
            try? FileManager.default.removeItem(atPath: made)
        }
        let deadline = Date().addingTimeInterval(10)
        while !ports.allSatisfy(Self.accepts), Date() < deadline, nginx.isRunning { usleep(20_000) }
        guard ports.allSatisfy(Self.accepts) else {
            let log = (try? String(contentsOfFile: directory + "/logs/error.log", encoding: .utf8)) ?? ""
            throw NSError(domain: "TLSFront", code: 1, userInfo: [NSLocalizedDescriptionKey: "nginx did not start: \(log)"])
        }
    }

    public func url(_ pathAndQuery: String, port: UInt16? = nil) -> String {
        "https://127.0.0.1:\(port ?? self.port)\(pathAndQuery)"
    }

    static func openssl(in directory: String, _ arguments: String...) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: opensslPath)
        p.arguments = arguments
        p.currentDirectoryURL = URL(fileURLWithPath: directory)
        let errors = Pipe()
        p.standardError = errors
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            throw NSError(domain: "TLSFront", code: 2, userInfo: [NSLocalizedDescriptionKey:
                "openssl \(arguments.joined(separator: " ")): \(String(decoding: message, as: UTF8.self))"])
        }
    }

    /// A port nothing listens on now (the kernel's choice for port 0).
    public static func freePort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw NSError(domain: "TLSFront", code: 3) }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        guard bound else { throw NSError(domain: "TLSFront", code: 4) }
        return UInt16(bigEndian: addr.sin_port)
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    public static func accepts(_ port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = port.bigEndian
        return withUnsafePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
