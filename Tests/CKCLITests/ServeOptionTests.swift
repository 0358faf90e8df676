import CKCore
import CKTestSupport
import Foundation
import XCTest

/// `ck serve`'s options refused before anything listens or is made: exit 2 with the option
/// named, the data directory unchanged (what a server does is in EndToEndTests).
final class ServeOptionTests: XCTestCase {
    func testOptionsThatCannotWorkAreRefusedFirst() {
        let s = CLISandbox()
        s.signIn()
        s.assertUnchanged("serve refusals") {
            assertFailure(s.ck("serve", "--seed", "export.ndjson"), exit: 2, contains: "--seed loads records into an --ephemeral server")
            assertFailure(s.ck("serve", "--port", "http"), exit: 2, contains: "--port")
            assertFailure(s.ck("serve", "--ephemeral", "extra"), exit: 2, contains: "unexpected argument")
            assertFailure(s.ck("serve", "--snippet=yes"), exit: 2)
        }
    }
}
