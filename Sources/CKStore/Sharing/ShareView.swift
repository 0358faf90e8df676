import CKJSON
import CKModel

/// What a user may see of a share (the permission gate's rule for share records). The owner
/// and the users the owner invited (until they are removed) see the whole share: every
/// participant. Anyone else sees a share only when its public permission is not NONE, and then
/// what CloudKit shows someone holding its URL: the share, its public permission and its owner,
/// and themselves once they accepted — never the other participants. Otherwise the share does
/// not exist for them: NOT_FOUND, in the words an unknown short GUID gets.
package enum ShareView: Equatable {
    /// The owner, or an invited participant (INVITED or ACCEPTED).
    case participant
    /// Someone holding the URL of a public share (before or after accepting it).
    case publicURL
}

extension ShareState {
    /// What `user` (nil: nobody signed in) sees of this share; nil: nothing, it does not exist
    /// for them.
    package func view(for user: String?) -> ShareView? {
        if let me = user, let p = participant(me) {
            if p.type == .owner || (p.type == .user && p.acceptanceStatus != .removed) { return .participant }
        }
        return publicPermission == .none ? nil : .publicURL
    }

    /// The participants `user` sees under `view`: all of them, or the owner and themselves
    /// once they accepted.
    package func participants(shownTo user: String?, _ view: ShareView) -> [ShareParticipant] {
        switch view {
        case .participant: return participants
        case .publicURL: return participants.filter { $0.type == .owner || ($0.userRecordName == user && $0.acceptanceStatus == .accepted) }
        }
    }
}

extension Record {
    /// A share record as `user` may see it: with only the participants they may see (a public
    /// share's URL shows the owner and the caller); nil when it does not exist for them. Any
    /// other record is returned as it is.
    package func shareShown(to user: String?) throws -> Record? {
        guard recordType == ShareInfo.recordType, let state = try ShareState(self) else { return self }
        guard let view = state.view(for: user) else { return nil }
        return shareShown(to: user, view, state: state)
    }

    /// A share record as `user` sees it under `view`: the participants they may see, and
    /// `currentUserParticipant` when they are among them (CKShare's, as Apple's modify
    /// answer to a share's creation and every fetch of a share carry it).
    package func shareShown(to user: String?, _ view: ShareView, state: ShareState) -> Record {
        var shown = self
        let visible = state.participants(shownTo: user, view)
        if view == .publicURL { shown.shareInfo?["participants"] = .array(visible.map(\.json)) }
        if let me = user, let p = visible.first(where: { $0.userRecordName == me }) {
            shown.shareInfo?["currentUserParticipant"] = p.json
        }
        return shown
    }
}

extension ShareLocation {
    /// The share record as `user` sees it (ShareView; `view` when given, as a participant who
    /// just left sees the share their write answers with), as a lookup shows it (`withZoneID`)
    /// or a modify (without), with `currentUserParticipant` when they are among the participants
    /// shown; nil when the share does not exist for them.
    package func json(shownTo user: String?, view given: ShareView? = nil, style: ResponseStyle, withZoneID: Bool = true) -> JSONValue? {
        guard let view = given ?? state.view(for: user) else { return nil }
        return share.shareShown(to: user, view, state: state).response(style, withZoneID: withZoneID)
    }
}
