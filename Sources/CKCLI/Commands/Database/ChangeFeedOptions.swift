import CKCore
import CKModel

/// What `ck zone changes` and `ck database changes` share: CloudKit's change feeds, with the
/// device's bookmarks standing in for the tokens an app keeps.
enum ChangeFeedOptions {
    static let zoneSince = OptionSpec("--since", value: "TOKEN", repeatable: true,
        help: "fetch changes after this token (the bookmark is left alone); with several --zone, one --since per zone, in order")
    static let databaseSince = OptionSpec("--since", value: "TOKEN", help: "fetch changes after this token (the bookmark is left alone)")
    static let feedOptions: [OptionSpec] = [
        OptionSpec("--from-start", help: "ignore the bookmark and fetch the whole retained history"),
        OptionSpec("--limit", value: "N", help: "at most N items per page [default: 200; the server caps pages at 200]"),
        OptionSpec("--no-save", help: "do not move the device's bookmark"),
        OptionSpec("--all", help: "every page until moreComing is false, in one process (like gh --paginate); --format ndjson streams it, each page closed by its token"),
    ]

    /// Where each fetch starts: --since, nothing (--from-start), or the device's bookmark (nil
    /// tokens, `fromBookmark`).
    static func startTokens(_ inv: Invocation, count: Int) throws -> (tokens: [String?], fromBookmark: Bool) {
        let since = inv.args.values("--since")
        if !since.isEmpty {
            if inv.args.has("--from-start") { throw inv.usageError("--since and --from-start exclude each other") }
            guard since.count == count else { throw inv.usageError("give one --since per --zone (\(count) zones, \(since.count) tokens)") }
            return (since, false)
        }
        return (Array(repeating: nil, count: count), !inv.args.has("--from-start"))
    }

    /// Whether the bookmarks move once the output is out: unless --since gave the tokens (they
    /// are the caller's to keep) or --no-save; a fetch --from-start moves them too.
    static func savesBookmarks(_ inv: Invocation) -> Bool { inv.args.values("--since").isEmpty && !inv.args.has("--no-save") }

    static func limit(_ inv: Invocation) throws -> Int {
        // The API caps it: resultsLimit is a ceiling the server may lower (reference §5.4).
        try inv.positiveInt("--limit") ?? Limits.resultsPerPage
    }

}
