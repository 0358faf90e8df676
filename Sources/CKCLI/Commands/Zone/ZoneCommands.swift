import CKCore
import CKModel

/// `ck zone create|delete|purge|list` (`zone changes` is a change command).
enum ZoneCommands {
    /// The zone names of a command, each once, in order.
    static func names(_ inv: Invocation) throws -> [String] {
        var seen = Set<NameKey>()
        return try inv.positionals(min: 1, what: "zone name").filter { seen.insert(NameKey($0)).inserted }
    }

    /// Runs zones/modify for the operations (Invocation.modifyInBatches).
    static func modify(_ inv: Invocation, _ operations: [ZonesModifyRequest.Operation], ifExists: Bool = false) throws -> Int32 {
        let caller = try inv.caller()
        return try inv.modifyInBatches(operations, key: "zones") { try inv.api.modifyZones(ZonesModifyRequest(operations: $0, ifExists: ifExists), as: caller) }
    }

    static func ifExistsOption(_ verb: String) -> OptionSpec {
        OptionSpec("--if-exists", help: "a zone that is not there counts as \(verb) (left out of the output, exit 0)")
    }
}
