import CKCore

/// `ck subscribe` (Notifications/Subscribe.swift), `ck subscription list|get|delete`.
enum SubscriptionCommands {
    static var all: [Command] { [subscribe, list, get, delete] }
}
