/// A participant writing into a zone shared with them (the owner's private zone): what
/// ShareWriter checks their writes against.
package struct ShareAccess: Sendable {
    /// The participant's user record name.
    package let participant: String
}
