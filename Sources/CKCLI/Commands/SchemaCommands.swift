import Foundation
import CKCore

/// `ck schema export|import|deploy|reset` and `ck role assign|remove|list`: the developer's
/// view of the schema, as the CloudKit console and cktool give it.
enum SchemaCommands {
    static var all: [Command] { [export, importSchema, deploy, reset, roleAssign, roleRemove, roleList] }

    static func admin(_ inv: Invocation) throws -> SchemaAdmin { SchemaAdmin(paths: inv.store.paths, container: try inv.container()) }

    static let export: Command = Command(["schema", "export"], synopsis: "[--environment E]",
        summary: "Print the schema in the CloudKit schema language (.ckdb)",
        details: """
        Prints the environment's schema as cktool export-schema does: DEFINE SCHEMA, the roles,
        then each record type with its six system fields (quoted), its fields with their index
        options (QUERYABLE SEARCHABLE SORTABLE) and its GRANTs; Users last. The output is text,
        not JSON, so it can go straight into a .ckdb file; --format does not change it.
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        inv.io.writeOut(SchemaPrinter.print(try admin(inv).store(inv.globals.environment).load()))
        return ExitCode.success
    }

    static let importSchema: Command = Command(["schema", "import"], synopsis: "FILE [--validate]",
        summary: "Make a .ckdb file the development schema (or only check it)",
        options: [OptionSpec("--validate", help: "check the file (grammar, and nothing production has is lost) without applying it")],
        details: """
        Parses the whole schema language (comments, quoted identifiers, LIST<T>, QUERYABLE,
        SORTABLE, SEARCHABLE, ENCRYPTED, NUMBER PREFERRED AS, CREATE ROLE, GRANT) and replaces
        the development schema with it. Errors give line:column (exit 6). A schema that would
        remove or retype a type or field production has is refused and changes nothing. Use
        FILE '-' for stdin.
        """) { inv in
        let file = try inv.positionals(min: 1, max: 1, what: "schema file")[0]
        if inv.globals.environment != .development { throw inv.usageError("schemas are imported into development; deploy them with 'ck schema deploy'") }
        let text: String
        if file == "-" { text = String(decoding: inv.readStdin(what: "a schema (.ckdb text)"), as: UTF8.self) } else {
            let path = file.hasPrefix("/") ? file : inv.io.currentDirectory + "/" + file
            let b = try FileSystem.readUserFile(path, shownAs: file)
            guard let s = String(validating: b, as: UTF8.self) else { throw CloudKitError.badRequest("schema file '\(file)' is not valid UTF-8") }
            text = s
        }
        let validate = inv.args.has("--validate")
        let s = try admin(inv).importSchema(text, validateOnly: validate)
        inv.emit(["valid": true, "applied": .bool(!validate), "recordTypes": .array(s.types.keys.sorted().map(JSONValue.string)),
                  "roles": .array(s.roles.sorted().map(JSONValue.string))])
        return ExitCode.success
    }

    static let deploy: Command = Command(["schema", "deploy"], synopsis: "",
        summary: "Promote the development schema to production (additively)",
        details: """
        Copies development's record types, fields, indexes, GRANTs and roles to production.
        Production is additive only: if development lacks a type or field production has, or
        gives one another type, nothing is deployed (BAD_REQUEST, exit 6). Prints the types
        and fields added.
        """) { inv in
        _ = try inv.positionals(max: 0, what: "")
        let r = try admin(inv).deploy()
        inv.emit(["deployed": true, "recordTypesAdded": .array(r.typesAdded.map(JSONValue.string)),
                  "fieldsAdded": .array(r.fieldsAdded.map(JSONValue.string))])
        return ExitCode.success
    }

    static let reset: Command = Command(["schema", "reset"], synopsis: "",
        summary: "Reset development to the production schema, deleting development data",
        details: "As the CloudKit console's Reset Environment: the development schema becomes\nproduction's, and every development record, subscription, notification and bookmark\nof the container is deleted. Production is untouched.") { inv in
        _ = try inv.positionals(max: 0, what: "")
        try admin(inv).resetDevelopment()
        inv.emit(["reset": true, "environment": "development"])
        return ExitCode.success
    }

    static func roleArgs(_ inv: Invocation) throws -> (String, UserAccount) {
        let p = try inv.positionals(min: 2, max: 2, what: "ROLE and APPLE-ID")
        guard let u = try inv.store.accounts.user(appleID: p[1]) else {
            throw CloudKitError(.notFound, "no user with Apple ID '\(p[1])' has signed in on this device")
        }
        return (p[0], u)
    }

    static let roleAssign: Command = Command(["role", "assign"], synopsis: "ROLE APPLE-ID",
        summary: "Give a user a custom security role (public database GRANTs)") { inv in
        let (role, u) = try roleArgs(inv)
        try admin(inv).setRole(role, user: u.userRecordName, member: true, inv.globals.environment)
        inv.emit(["role": .string(role), "userRecordName": .string(u.userRecordName), "member": true])
        return ExitCode.success
    }

    static let roleRemove: Command = Command(["role", "remove"], synopsis: "ROLE APPLE-ID",
        summary: "Take a custom security role from a user") { inv in
        let (role, u) = try roleArgs(inv)
        try admin(inv).setRole(role, user: u.userRecordName, member: false, inv.globals.environment)
        inv.emit(["role": .string(role), "userRecordName": .string(u.userRecordName), "member": false])
        return ExitCode.success
    }

    static let roleList: Command = Command(["role", "list"], synopsis: "", summary: "List the custom roles and their members") { inv in
        _ = try inv.positionals(max: 0, what: "")
        let a = try admin(inv)
        let members = try a.roleMembers(inv.globals.environment)
        let roles = try a.store(inv.globals.environment).load().roles.sorted()
        inv.emit(["roles": .array(roles.map { ["role": .string($0), "members": .array((members[$0] ?? []).map(JSONValue.string))] })], listKey: "roles")
        return ExitCode.success
    }
}
