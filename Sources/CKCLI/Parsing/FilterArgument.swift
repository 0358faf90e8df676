import CKCore
import CKModel
import Foundation

/// `--filter 'FIELD OP VALUE'` on the command line: the core's filter text
/// (QueryFilterText), whose errors of form are usage errors (exit 2).
enum FilterArgument {
    /// The form of one filter, checked before anything is read.
    static func scan(_ raw: String, command: [String]) throws -> FilterSyntax {
        do { return try QueryFilterText.scan(raw) } catch let e as QueryFilterText.SyntaxError { throw UsageError(e.message, command: command) }
    }

    /// Filters read with the types their fields have; dates without an offset in the local
    /// time zone (`TZ`).
    static func typed(_ syntax: [FilterSyntax], recordType: String, zone: String?, inv: Invocation, caller: Caller) throws -> [QueryFilter] {
        let environment = inv.io.environment
        return try inv.api.typedFilters(syntax, recordType: recordType, zoneName: zone ?? ZoneID.defaultZoneName,
                                        timeZone: { FieldText.localTimeZone(environment) }, as: caller)
    }

    /// One filter without the schema's help (values are inferred).
    static func parse(_ raw: String, command: [String], known: KnownFieldType? = nil, timeZone: @escaping @Sendable () -> TimeZone = { .current }) throws -> QueryFilter {
        try QueryFilterText.read(try scan(raw, command: command), known: known, timeZone: timeZone)
    }
}
