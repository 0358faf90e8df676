import CKModel

/// Test hooks for queries, armed by the CLI from `CK_DEBUG_NO_INDEX` (every query reads the
/// records, as without indexes) and `CK_DEBUG_QUERY_PLAN` (each query says on stderr how it was
/// answered). The index tests run each query both ways and compare the answers byte for byte.
package enum QueryDebug {
    nonisolated(unsafe) package static var indexesOff = false
    nonisolated(unsafe) package static var trace: ((String) -> Void)?
}
