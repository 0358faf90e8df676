import CKCore

/// `ck schema export|import|index add|deploy|reset`: the developer's view of the schema, as
/// the CloudKit console and cktool give it.
enum SchemaCommands {}
