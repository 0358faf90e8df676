extension CloudKitAPI {
    // The preflight checks faults for every entry (`preflight`). These two doors let a command
    // that does not run the preflight yet — a CLI row not yet on the API — make the same checks;
    // they go when every row is on the API.

    /// The preflight's fault check alone: throws the error of the first fault that fires for
    /// `endpoint` in `zones`, acting as `user` on `deviceID`.
    public func checkFaults(_ endpoint: Endpoint, zones: [String], user: Caller.User, deviceID: String) throws {
        try FaultStore(paths: store.paths).check(op: endpoint, zones: zones, user: { self.faultUser(user, deviceID: deviceID) }, device: deviceID)
    }

    /// Arms the per-record faults of `endpoint` on a database a command opened itself, as the
    /// preflight arms them on its own.
    public func armRecordFaults(_ endpoint: Endpoint, on db: Database, user: Caller.User) throws {
        guard endpoint.namesRecords else { return }
        db.recordFault = try recordFaults(endpoint, Self.appleID(user), db)
    }
}
