import XCTest
@testable import CKRemote

/// What the loopback listener takes from a sign-in callback's query.
final class SignInCallbackTests: XCTestCase {
    func testTheTokenFromEitherKeyWithAPlusPutBack() {
        XCTAssertEqual(SignInCallback.token(fromQuery: "ckWebAuthToken=158__54__a%2Bb%2Fc%3D"), "158__54__a+b/c=")
        XCTAssertEqual(SignInCallback.token(fromQuery: "ckWebAuthToken=a+b"), "a+b", "a + left raw is a +, not a space")
        XCTAssertEqual(SignInCallback.token(fromQuery: "ckWebAuthToken=a%20b"), "a+b", "a space a form decoder made was a +")
        XCTAssertEqual(SignInCallback.token(fromQuery: "x=1&ckSession=S&ckWebAuthToken=W"), "S", "ckSession first, as Apple's page sets both")
        XCTAssertEqual(SignInCallback.token(fromQuery: "ckWebAuthToken=W&other=1"), "W")
        XCTAssertNil(SignInCallback.token(fromQuery: "ckWebAuthToken=&x=1"))
        XCTAssertNil(SignInCallback.token(fromQuery: "token=W"))
        XCTAssertNil(SignInCallback.token(fromQuery: "ckWebAuthToken=%ZZ"))
    }
}
