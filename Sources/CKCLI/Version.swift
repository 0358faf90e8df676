/// ck's version: a constant, so every build of one source tree says the same (no `git describe`).
public enum Version {
    public static let number = "0.12.0"

    /// What `ck version` and `ck --version` print, the way git prints `git version 2.39.5`.
    public static var line: String { "ck version \(number)\n" }
}
