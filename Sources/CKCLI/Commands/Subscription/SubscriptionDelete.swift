import CKCore
import CKModel

extension SubscriptionCommands {
    static let delete: CommandSpec = CommandSpec(synopsis: "ID…", summary: "Delete subscriptions",
                                         details: """
                                         Prints the subscriptions/modify response {"subscriptions": [{subscriptionID, deleted:
                                         true}]}. Every ID is attempted, as CloudKit does: with one, its failure (NOT_FOUND
                                         for one that is not there) is the command's error; with several, an ID that fails is
                                         an error item {subscriptionID, serverErrorCode, reason}, the others are deleted, and
                                         ck exits 9.
                                         """) { inv in
        var seen = Set<NameKey>()
        let ids = try inv.positionals(min: 1, what: "subscription ID").filter { seen.insert(NameKey($0)).inserted }
        return try modify(inv, ids.map { .delete($0) })
    }
}
