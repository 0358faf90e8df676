import Foundation

/// PEM armor (RFC 7468): DER bytes in base64 lines between `-----BEGIN <label>-----` and
/// `-----END <label>-----`. A file may hold several blocks (`openssl ecparam -genkey` writes the
/// curve's parameters before the key); text outside the blocks is ignored, as openssl ignores it.
/// Inside a block only base64 and whitespace are allowed.
enum PEM {
    struct Block: Equatable {
        let label: String
        let der: [UInt8]
    }

    struct Failure: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    /// Every block, in order; none for text with no BEGIN line.
    static func blocks(_ text: String) throws -> [Block] {
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" })
            .map { $0.trimmingCharacters(in: .whitespaces) }
        var found: [Block] = []
        var i = 0
        while i < lines.count {
            let line = lines[i]
            i += 1
            guard line.hasPrefix("-----BEGIN "), line.hasSuffix("-----"), line.count > 16 else { continue }
            let label = String(line.dropFirst(11).dropLast(5))
            let endLine = "-----END \(label)-----"
            guard let end = lines[i...].firstIndex(of: endLine) else {
                throw Failure(message: "no '\(endLine)' line after '\(line)'")
            }
            let body = lines[i..<end].joined()
            guard !body.contains(":") else {
                throw Failure(message: "the \(label) block has headers (an encrypted key?); only plain PEM is read")
            }
            guard !body.isEmpty, let data = Data(base64Encoded: body) else {
                throw Failure(message: "the \(label) block is not valid base64")
            }
            found.append(Block(label: label, der: [UInt8](data)))
            i = end + 1
        }
        return found
    }
}

extension PEM {
    /// DER in a PEM block as openssl writes it: base64 in lines of 64 characters, a newline after
    /// every line.
    static func armor(label: String, der: [UInt8]) -> String {
        let body = Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN \(label)-----\n\(body)\n-----END \(label)-----\n"
    }
}
