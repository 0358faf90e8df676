import CKModel

extension Subscription {
    /// What a change means to this subscription: the query reason it fires with, or nil.
    package func fires(on change: RecordChange, zone: String) -> FiresOn? {
        if let z = zoneName, !z.sameBytes(zone) { return nil }
        let r = change.after ?? change.before
        if let t = recordType, r?.recordType != t { return nil }
        let event: FiresOn = change.kind == .created ? .create : change.kind == .updated ? .update : .delete
        guard kind == .query else { return event }
        guard firesOn.contains(event) else { return nil }
        guard let subject = change.kind == .deleted ? change.before : change.after else { return nil }
        return filters.allSatisfy { QueryMatcher.matches(subject, $0) } ? event : nil
    }
}
