/// A record's change tag names the history entry that wrote it: the entry's seq in base 36,
/// so a tag is short, unique within its zone, and orders as the zone's history does.
public enum ChangeTag {
    public static func tag(for seq: Int64) -> String { String(seq, radix: 36) }
    public static func seq(ofTag tag: String) -> Int64? { Int64(tag, radix: 36) }
}
