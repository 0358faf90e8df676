import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The controlling terminal, for a secret typed by hand (`ck remote login --paste`): read from
/// /dev/tty with echo off, so that it is neither shown nor left in stdin's pipe or a log.
enum Terminal {
    static func readSecret(prompt: String) -> String? {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var saved = termios()
        guard tcgetattr(fd, &saved) == 0 else { return nil }
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        // Ctrl-C, Ctrl-\ or a hang-up while echo is off must not leave the terminal silent:
        // the handler puts the settings back, then the signal does what it would have.
        EchoRestore.arm(fd: fd, saved: saved)
        guard tcsetattr(fd, TCSAFLUSH, &quiet) == 0 else { EchoRestore.disarm(); return nil }
        // The prompt once echo is off (as getpass does): what is typed after it is never
        // echoed, nor thrown away by the flush that turning echo off makes.
        _ = prompt.withCString { write(fd, $0, strlen($0)) }
        defer {
            _ = tcsetattr(fd, TCSAFLUSH, &saved)
            EchoRestore.disarm()
            _ = write(fd, "\n", 1)
        }
        var bytes: [UInt8] = []
        var b: UInt8 = 0
        while read(fd, &b, 1) == 1, b != 0x0A, b != 0x0D, bytes.count < 65536 { bytes.append(b) }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// The terminal settings to put back if a signal ends ck while a secret is read with echo off.
/// Kept in globals: a signal handler may touch nothing else (tcsetattr, signal and raise are
/// async-signal-safe).
nonisolated(unsafe) private var restoreFD: Int32 = -1
nonisolated(unsafe) private var restoreSettings = termios()

nonisolated(unsafe) private var previousHandlers: [Int32: (@convention(c) (Int32) -> Void)?] = [:]

private enum EchoRestore {
    // Not SIGTSTP: a shell puts a stopped job's terminal settings back when it resumes it.
    static let signals: [Int32] = [SIGINT, SIGQUIT, SIGTERM, SIGHUP]

    static func arm(fd: Int32, saved: termios) {
        restoreSettings = saved
        restoreFD = fd
        for s in signals {
            previousHandlers[s] = signal(s) { sig in
                if restoreFD >= 0 { _ = tcsetattr(restoreFD, TCSAFLUSH, &restoreSettings) }
                signal(sig, SIG_DFL)
                raise(sig)
            }
        }
    }

    static func disarm() {
        restoreFD = -1
        for s in signals { signal(s, previousHandlers[s].flatMap { $0 } ?? SIG_DFL) }
        previousHandlers = [:]
    }
}

/// Opens an address in the user's browser: `xdg-open` on Linux, `open` on macOS. False when
/// there is none to run (a server, a container): the caller prints the address instead.
enum Browser {
    static func open(_ url: String) -> Bool {
        #if os(macOS)
        let candidates = ["/usr/bin/open"]
        #else
        guard ProcessInfo.processInfo.environment["DISPLAY"] != nil || ProcessInfo.processInfo.environment["WAYLAND_DISPLAY"] != nil else { return false }
        let candidates = ["/usr/bin/xdg-open", "/usr/local/bin/xdg-open"]
        #endif
        guard let tool = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else { return false }
        var pid: pid_t = 0
        let args = [tool, url]
        var argv: [UnsafeMutablePointer<CChar>?] = args.map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        guard posix_spawn(&pid, tool, &actions, nil, &argv, environ) == 0 else { return false }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        return status == 0
    }
}
