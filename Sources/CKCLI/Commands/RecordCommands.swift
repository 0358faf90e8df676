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
}

import Foundation
