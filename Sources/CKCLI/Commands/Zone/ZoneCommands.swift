import CKCore

/// `ck zone create|delete|purge|list` (`zone changes` is a change command).
enum ZoneCommands {
    static var all: [Command] { [create, delete, purge, list] }

    /// The zone names of a command, each once, in order.
    static func names(_ inv: Invocation) throws -> [String] {
        var seen = Set<NameKey>()
        return try inv.positionals(min: 1, what: "zone name").filter { seen.insert(NameKey($0)).inserted }
    }

    /// Runs zones/modify for the operations, in requests of at most the operations one holds,
    /// and prints the zones answered. Every operation is attempted: with one, its failure is
    /// the command's error; with several, the failed ones are error items and ck exits 9.
    static func modify(_ inv: Invocation, _ operations: [ZonesModifyRequest.Operation], ifExists: Bool = false) throws -> Int32 {
        let caller = try inv.caller()
        var results: [ItemsResponse.Item] = []
        for start in stride(from: 0, to: operations.count, by: Limits.operationsPerBatch) {
            let chunk = Array(operations[start..<min(start + Limits.operationsPerBatch, operations.count)])
            results += try inv.api.modifyZones(ZonesModifyRequest(operations: chunk, ifExists: ifExists), as: caller).results
        }
        if operations.count == 1, let e = results.first?.error { throw e }
        let response = ItemsResponse("zones", results)
        inv.print(response)
        return inv.batchExit(response.failures.map(OperationResult.failed), total: operations.count, noun: "zones")
    }

    static func ifExistsOption(_ verb: String) -> OptionSpec {
        OptionSpec("--if-exists", help: "a zone that is not there counts as \(verb) (left out of the output, exit 0)")
    }
}
