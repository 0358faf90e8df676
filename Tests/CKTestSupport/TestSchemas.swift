/// Schemas more than one test target imports, in CloudKit's `.ckdb` text.
public enum TestSchemas {
    /// A public record type whose records a remote's clone can query: `___recordID` is
    /// QUERYABLE (an unfiltered query needs it), and everyone may read.
    public static let publicFeed = """
    DEFINE SCHEMA
        RECORD TYPE Feed (
            "___createTime" TIMESTAMP,
            "___createdBy"  REFERENCE,
            "___etag"       STRING,
            "___modTime"    TIMESTAMP,
            "___modifiedBy" REFERENCE,
            "___recordID"   REFERENCE QUERYABLE,
            title           STRING QUERYABLE SEARCHABLE SORTABLE,
            n               INT64 QUERYABLE SORTABLE,
            GRANT WRITE TO "_creator",
            GRANT CREATE TO "_icloud",
            GRANT READ TO "_world"
        );
    """
}
