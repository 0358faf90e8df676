import CKCore
import CKModel

/// The next step a failed command's user can take, as git's "hint:" lines say it. The core
/// names the step (`CloudKitError.nextStep`); this words it as a command line that addresses
/// what failed: the failing command's own `--data-dir`, `--container`, `--env`, `--db`,
/// `--zone` and `--as`. A few hints belong to one command's own options (`--if-exists`). Said
/// in text errors only: the JSON envelope stays CloudKit's.
enum NextSteps {
    static func hint(for e: CloudKitError, command: [String], args: ParsedArguments, globals: GlobalOptions) -> String? {
        // A command's own way past the error comes first.
        switch e.code {
        case .zoneNotFound where command == ["zone", "delete"] || command == ["zone", "purge"]:
            return "pass --if-exists to treat a missing zone as \(command[1] == "purge" ? "purged" : "deleted")"
        case .notFound where command == ["record", "delete"]:
            return "pass --if-exists to treat a missing record as deleted"
        default:
            return e.nextStep.map { words($0, Context(e: e, command: command, args: args, globals: globals)) }
        }
    }

    /// A step as words, its commands addressed as the failing one was.
    static func words(_ step: NextStep, _ ck: Context) -> String {
        let saves = ck.command == ["record", "save"] || ck.command == ["record", "delete"]
        switch step {
        case .retryWithTag(let name, let tag):
            let retry = saves ? "retry with --tag \(tag), or pass --force to overwrite" : "retry with recordChangeTag \(tag), or force the operation"
            return "fetch it again (\(ck.line("record get \(quoted(name))"))) and \(retry)"
        case .updateInstead(_, let tag):
            return saves ? "to update it, pass --tag \(tag) (its current tag) or --force" : "to update it, send an update with recordChangeTag \(tag) (its current tag), or a forceUpdate"
        case .createZone(let z): return "create it with \(ck.line("zone create \(quoted(z))", zone: false))"
        case .createCustomZone: return "keep the records in a custom zone: \(ck.line("zone create NAME", zone: false))"
        case .onlyDefaultZone: return "the public database has only _defaultZone"
        case .acceptShare: return "zones appear in the shared database when a share is accepted (\(ck.line("share accept SHARE-URL", zone: false, db: false)))"
        case .refetchFromStart:
            let feed = ck.command == ["database", "changes"] ? "database changes" : "zone changes"
            return "fetch again from the start: \(ck.line("\(feed) --from-start", zone: feed == "zone changes")) (then keep the new syncToken)"
        case .readRetainedHistory: return "\(ck.line("log")) shows what the history retains"
        case .signIn: return "check the account with \(ck.line("account", zone: false, db: false, user: false)); sign in with \(ck.line("account signin APPLE-ID", zone: false, db: false, user: false))"
        case .signInUser(let appleID): return "sign \(quoted(appleID)) in once on this device: \(ck.line("account signin \(quoted(appleID))", zone: false, db: false, user: false))"
        case .deploySchema: return "deploy the development schema first: \(ck.line("schema deploy", zone: false, db: false, user: false, environment: false))"
        case .addIndex(let type, let field, let index, let line):
            let add = ck.line("schema index add \(quoted(type)) \(quoted(field)) \(index)", zone: false, db: false, user: false, environment: false)
            if ck.globals.environment == .production {
                return "add the index in development, then deploy: \(add); \(ck.line("schema deploy", zone: false, db: false, user: false, environment: false)) (in the .ckdb of record type \(type): \(line))"
            }
            return "add the index: \(add) (in the .ckdb of record type \(type): \(line))"
        case .defineRecordType(let type):
            return "a record type exists once a record of it is saved in development (\(ck.line("record save --type \(quoted(type)) …", zone: false, environment: false))) or a schema defines it (\(ck.line("schema import FILE", zone: false, db: false, user: false, environment: false)))"
        case .splitRequest(let n): return "split it into requests of at most \(n) operations (ck import --batch N does)"
        case .repairDataDirectory: return "\(ck.line("fsck", zone: false, db: false, user: false, container: false, environment: false)) repairs what it can and lists the rest"
        case .leaveShare: return "to stop seeing it, leave its share: \(ck.line("share leave SHARE", zone: false)) (its URL or short GUID)"
        case .restoreWholeVersion(let name): return "write a whole version back instead: \(ck.line("restore REF \(quoted(name))"))"
        case .shareAgain(let name): return "make the share again with \(ck.line("share create RECORD")), or end share \(quoted(name)) with \(ck.line("share delete \(quoted(name))"))"
        case .listTags: return "\(ck.line("tag list", zone: false)) shows this database's tags"
        case .deleteTagFirst(let name): return "delete it first: \(ck.line("tag delete \(quoted(name))", zone: false))"
        case .clearFaults: return "clearing the faults removes it: \(ck.line("fault clear", zone: false, db: false, user: false, container: false, environment: false))"
        case .listFaults: return "\(ck.line("fault list", zone: false, db: false, user: false, container: false, environment: false)) shows the armed faults"
        case .nameDataDirectory: return "pass --data-dir DIR to choose a data directory"
        }
    }

    /// What addresses the failing command's data: its options, as it was given them.
    struct Context {
        let e: CloudKitError
        let command: [String]
        let args: ParsedArguments
        let globals: GlobalOptions

        /// `ck [options] words`, with the options that address what failed: the data directory
        /// and container given on the command line, a production environment, a database other
        /// than private, the zone of the error (else the command's, when not the default), and
        /// the user acted as.
        func line(_ words: String, zone: Bool = true, db: Bool = true, user: Bool = true, container: Bool = true, environment: Bool = true) -> String {
            var o: [String] = []
            if let d = args.value("--data-dir") { o += ["--data-dir", quoted(d)] }
            if container, let c = globals.containerOverride { o += ["--container", quoted(c)] }
            if environment, globals.environment != .development { o += ["--env", globals.environment.rawValue] }
            if db, (e.database ?? globals.scope) != .private { o += ["--db", (e.database ?? globals.scope).rawValue] }
            if zone, let z = e.zoneID?.zoneName ?? (globals.zones.isEmpty ? nil : globals.zone), z != ZoneID.defaultZoneName { o += ["--zone", quoted(z)] }
            if user, let a = globals.actingAs { o += ["--as", quoted(a)] }
            return (["ck"] + o + [words]).joined(separator: " ")
        }
    }

    /// A word as a shell would need it: plain when safe, else in single quotes.
    static func quoted(_ s: String) -> String {
        let safe = !s.isEmpty && s.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains(Character($0)) || "-_.:/@+".unicodeScalars.contains($0)) }
        return safe ? s : "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
