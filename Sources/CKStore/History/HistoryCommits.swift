/// The commits of a history: the entries one write appended together (its index words, the
/// last carrying the commit bit). Nobody ever sees a zone between two entries of one commit —
/// a share made with its root, a record deleted with what its DELETE_SELF references cascade
/// to — so what a change shows is judged at the commit's edges (PermissionGate's history gate).
extension ChangeHistory {
    /// The points around the commit holding entry `seq`: the state just before it (the last
    /// entry of the commit before) and just after it (its own last entry). An entry past the
    /// head, or a history without an index, counts as a commit of its own.
    package func commitBounds(of seq: Int64) throws -> (before: Int64, after: Int64) {
        try log.commitBounds(of: seq)
    }
}
