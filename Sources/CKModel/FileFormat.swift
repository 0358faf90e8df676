/// The files ck writes under a data directory.
public enum FileFormat {
    /// Version of every file format ck writes; each file carries it as `schemaVersion`.
    /// 2: history indexes hold end offsets with commit bits; entries carry `prev`.
    public static let schemaVersion: Int64 = 2
}
