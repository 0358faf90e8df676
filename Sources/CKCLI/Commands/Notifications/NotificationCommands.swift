import CKCore

/// `ck notifications`: the device's pending notifications, or a live feed of them;
/// `ck notifications drop`: losing some on the way, as pushes are lost.
enum NotificationCommands {}
