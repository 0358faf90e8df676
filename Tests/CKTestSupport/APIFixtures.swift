import CKCore
import CKModel

/// The container the in-process tests work in.
public let testContainer = "iCloud.com.example.test"

/// Who asks: by default the device's signed-in account, in the private database of the
/// development environment of `testContainer`, on the device "default" — what `ck` asks as
/// without global options.
public func caller(_ scope: DatabaseScope = .private, _ user: Caller.User = .device, env: CKModel.Environment = .development,
                   container: String = testContainer, device: String = "default") -> Caller {
    Caller(container: container, environment: env, scope: scope, user: user, deviceID: device)
}

/// A person of the tests: `name@example.com`, signed in on this device and acting as
/// themselves (`--as`), on a device of their own (`name-phone`), so that what one person does
/// reaches another's device.
public func caller(_ person: String, _ scope: DatabaseScope = .private, env: CKModel.Environment = .development) -> Caller {
    caller(scope, .appleID("\(person)@example.com"), env: env, device: "\(person)-phone")
}

/// The API over a data directory, as the CLI has it; on the clock `now` when given (which the
/// test moves), and as `ck serve` at `server` when given.
public func api(_ dataDirectory: String, _ now: Now? = nil, server: String? = nil, webTokenRotation: WebTokenRotation = .live) -> CloudKitAPI {
    CloudKitAPI(dataDirectory: dataDirectory, clock: now.map { now in Clock { now.ms } } ?? .system, serverURL: server, webTokenRotation: webTokenRotation)
}
