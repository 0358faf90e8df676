import CKCore
import CKModel
import Foundation

/// `ck record …`: save, get, delete, list, modify, query.
enum RecordCommands {
    static let fieldsOption = OptionSpec("--fields", value: "a,b", help: "only these fields in the output (desiredKeys)")

    static func desiredKeys(_ inv: Invocation) throws -> Set<String>? {
        guard let raw = inv.args.value("--fields") else { return nil }
        let names = raw.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingCharacters(in: .whitespaces) }
        for n in names { try Names.validateFieldName(n) }
        return Set(names)
    }

    static func recordName(_ raw: String) throws -> String {
        try Names.validateRecordName(raw)
        return raw
    }

    /// `--name NAME`: a record name given as an option value, so that one starting with '-'
    /// needs no '--'.
    static let nameOption = OptionSpec("--name", value: "NAME", repeatable: true, help: "a record name (any name, even one that starts with '-')")

    /// The record names of a command: its positionals, then each --name, in order. A
    /// positional `-` stands for the names on stdin, one per line (blank lines skipped); a
    /// record named "-" is given as `--name -`.
    static func givenNames(_ inv: Invocation, noun: String = "record names") throws -> [String] {
        var names: [String] = []
        var readStdin = false
        for p in inv.args.positionals {
            guard p == "-" else { names.append(p); continue }
            if readStdin { throw inv.usageError("'-' (names from stdin) given more than once") }
            readStdin = true
            // Split bytes, not characters: "\r\n" is one Character.
            for var line in try inv.readStdin(what: "\(noun) (one per line)").split(separator: 0x0A, omittingEmptySubsequences: false) {
                if line.last == 0x0D { line.removeLast() }
                if !line.isEmpty { names.append(String(decoding: line, as: UTF8.self)) }
            }
        }
        names += inv.args.values("--name")
        if names.isEmpty { throw inv.usageError(readStdin ? "no record names on stdin" : "missing record name") }
        return try names.map(recordName)
    }
}
