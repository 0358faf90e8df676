/// A Lookup Info dictionary's user: by email address, phone number or user record name.
public enum UserLookup: Sendable, Equatable {
    case email(String), phone(String), recordName(String)
}
