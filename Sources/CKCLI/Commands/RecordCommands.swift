import CKCore

/// `ck record …`: save, get, delete, list, modify, query.
enum RecordCommands {
    static var all: [Command] { [save, get, delete, list, modify, query] }

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

    /// The record names of a command: its positionals, then each --name, in order.
    static func givenNames(_ inv: Invocation) throws -> [String] {
        let names = inv.args.positionals + inv.args.values("--name")
        if names.isEmpty { throw inv.usageError("missing record name") }
        return try names.map(recordName)
    }
}

import Foundation
