import CKCore
import CKJSON
import CKModel

extension SubscriptionCommands {
    static let subscribe: CommandSpec = CommandSpec(synopsis: "[database | zone --zone Z | query --type T [--filter 'FIELD OP VALUE'…] [--fires-on create,update,delete] [--fires-once]] [--id ID] [--content-available] [--alert-body TEXT] [NOTIFICATION-INFO…]",
        summary: "Save a database, zone or query subscription (same ID: replaced)",
        options: [
            OptionSpec("--id", value: "ID", help: "subscription ID [default: derived from the subscription, so saving it again replaces it]"),
            OptionSpec("--type", value: "T", help: "record type (query; optional filter for zone subscriptions)"),
            OptionSpec("--filter", value: "'FIELD OP VALUE'", repeatable: true, help: "query predicate; repeat to AND several"),
            OptionSpec("--fires-on", value: "LIST", help: "query: any of create,update,delete [default: all three]"),
            OptionSpec("--fires-once", help: "query: delete the subscription after its first notification"),
        ] + notificationInfoOptions.map(\.spec),
        details: """
        database (the default) watches every custom zone of the private or shared database;
        zone watches one custom zone of the private database; query watches records of a type
        that match the filters, in the public or private database (every zone unless --zone is
        given). Each change that matches notifies every device of the subscribing user except
        the one that made it; see 'ck notifications' (--format aps: the push a device gets).
        The other options fill the subscription's notificationInfo, under the keys Web Services
        and CKSubscription.NotificationInfo give them; --desired-keys names fields whose values
        query notifications carry as recordFields; the *-localization-args name fields whose
        values fill the localized text.
        """) { inv in
        let p = try inv.positionals(max: 1, what: "")
        let kindName = p.first ?? "database"
        guard let kind = Subscription.Kind(rawValue: kindName) else {
            throw inv.usageError("unknown subscription kind '\(kindName)'; expected database, zone or query")
        }
        let syntax = try inv.args.values("--filter").map { try FilterArgument.scan($0, command: inv.command.path) }
        var firesOn = Subscription.FiresOn.allCases
        if let raw = inv.args.value("--fires-on") {
            firesOn = try raw.split(separator: ",", omittingEmptySubsequences: false).map {
                let w = $0.trimmingCharacters(in: .whitespaces)
                guard let f = Subscription.FiresOn(rawValue: w) else {
                    throw inv.usageError("unknown --fires-on value '\(w)'; expected create, update or delete")
                }
                return f
            }
        }
        if kind != .query {
            for o in ["--filter", "--fires-on", "--fires-once"] where inv.args.has(o) {
                throw inv.usageError("\(o) applies only to query subscriptions")
            }
        }
        if kind == .query && inv.args.value("--type") == nil { throw inv.usageError("a query subscription needs --type") }
        if kind == .database && inv.args.has("--type") { throw inv.usageError("--type does not apply to database subscriptions") }
        if kind == .zone && inv.globals.zones.isEmpty { throw inv.usageError("a zone subscription needs --zone") }
        if kind == .database && inv.args.has("--zone") {
            throw inv.usageError("a database subscription watches every custom zone and takes no --zone; for one zone: ck subscribe zone --zone \(inv.args.value("--zone") ?? "Z")")
        }
        var info: [String: JSONValue] = [:]
        for o in notificationInfoOptions {
            switch o.kind {
            case .flag: if inv.args.has(o.spec.name) { info[o.key] = true }
            case .text: if let v = inv.args.value(o.spec.name) { info[o.key] = .string(v) }
            case .fields:
                if let v = inv.args.value(o.spec.name) {
                    info[o.key] = .array(v.split(separator: ",", omittingEmptySubsequences: false).map { .string($0.trimmingCharacters(in: .whitespaces)) })
                }
            }
        }
        let notificationInfo = try Subscription.parseNotificationInfo(.object(info), "notificationInfo")
        // An ID left out is the subscription's default one; one given must be a valid ID.
        if let id = inv.args.value("--id") { try Subscription.validateID(id) }
        let caller = try inv.caller()
        // Filter values take the schema's types, as in 'record query'.
        let filters = try FilterArgument.typed(syntax, recordType: inv.args.value("--type") ?? "", zone: inv.zoneGiven, inv: inv, caller: caller)
        let s = Subscription(subscriptionID: inv.args.value("--id") ?? "", kind: kind,
                             zoneName: kind == .database ? nil : inv.zoneGiven,
                             recordType: inv.args.value("--type"), filters: filters, firesOn: firesOn,
                             firesOnce: inv.args.has("--fires-once"), notificationInfo: notificationInfo)
        return try SubscriptionCommands.modify(inv, [.create(s)], as: caller)
    }
}

extension SubscriptionCommands {
    /// An option of `subscribe` that fills a key of the notification info.
    struct NotificationInfoOption {
        enum Kind { case flag, text, fields }
        let spec: OptionSpec
        let key: String
        let kind: Kind
    }

    static let notificationInfoOptions: [NotificationInfoOption] = [
        ("--content-available", "shouldSendContentAvailable", .flag, "silent push that wakes the app"),
        ("--mutable-content", "shouldSendMutableContent", .flag, "lets a notification service extension change the push"),
        ("--badge", "shouldBadge", .flag, "raise the app's badge count"),
        ("--alert-body", "alertBody", .text, "alert text"),
        ("--alert-localization-key", "alertLocalizationKey", .text, "localized alert text's key"),
        ("--alert-localization-args", "alertLocalizationArgs", .fields, "fields whose values fill it (comma-separated)"),
        ("--alert-action-localization-key", "alertActionLocalizationKey", .text, "localized action button's key"),
        ("--alert-launch-image", "alertLaunchImage", .text, "launch image"),
        ("--title", "title", .text, "alert title"),
        ("--title-localization-key", "titleLocalizationKey", .text, "localized title's key"),
        ("--title-localization-args", "titleLocalizationArgs", .fields, "fields whose values fill it"),
        ("--subtitle", "subtitle", .text, "alert subtitle"),
        ("--subtitle-localization-key", "subtitleLocalizationKey", .text, "localized subtitle's key"),
        ("--subtitle-localization-args", "subtitleLocalizationArgs", .fields, "fields whose values fill it"),
        ("--sound", "soundName", .text, "sound file to play"),
        ("--category", "category", .text, "notification category (its actions)"),
        ("--collapse-id-key", "collapseIDKey", .text, "apns-collapse-id: unseen pushes with one ID collapse"),
        ("--desired-keys", "additionalFields", .fields, "query: fields whose values the notification carries (recordFields)"),
    ].map { name, key, kind, help in
        NotificationInfoOption(spec: kind == .flag ? OptionSpec(name, help: "notificationInfo.\(key): \(help)")
                                                   : OptionSpec(name, value: kind == .fields ? "F,F" : "TEXT", help: "notificationInfo.\(key): \(help)"),
                               key: key, kind: kind)
    }
}
