// libFuzzer target for a client's bytes to sentry's web servers (`make fuzz`):
// every input is read as a request head, seeded with the probes the tests
// play (smuggled bodies, forged log lines, loose lengths and names, Unicode
// spaces and case folding). Invariants checked on every input: reading never
// traps; the head's end is found the same however the bytes are cut; a head
// that is taken holds only what the grammar allows (token names, values of
// visible bytes without control characters, a path without control
// characters, one Host, a length of digits) and reads back the same when
// written out again; client text escaped for a log is printable ASCII.
//
// In a fuzz build (`SENTRY_FUZZING=1`: Package.swift adds the sanitizers and
// `FUZZING`), libFuzzer drives `LLVMFuzzerTestOneInput`; a normal build replays
// the files named on the command line (the committed corpus, as a regression test).
import FuzzSupport
import TextOutput
import WebServing

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTP(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let end = RequestParsing.endOfHead(in: input)
    let cut = input.count / 2
    precondition(end == (RequestParsing.endOfHead(in: Array(input[..<cut])) ?? RequestParsing.endOfHead(in: input, from: cut)), "a cut moved the head's end")
    let head = end.map { Array(input[..<$0]) } ?? input + Array("\r\n\r\n".utf8)

    let escaped = ClientText.escaped(String(decoding: input, as: UTF8.self), limit: 4096)
    precondition(escaped.unicodeScalars.allSatisfy { (0x20...0x7E).contains($0.value) || $0 == "…" }, "escaped text that is not printable")

    guard let (request, length) = try? RequestParsing.parse(head: head[...], peer: "fuzz") else { return 0 }
    let tokenBytes = Set("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
    precondition(!request.method.isEmpty && request.method.utf8.allSatisfy(tokenBytes.contains), "a method that is no token")
    for field in request.headers {
        precondition(!field.name.isEmpty && field.name.utf8.allSatisfy(tokenBytes.contains), "a field name that is no token")
        precondition(!field.value.unicodeScalars.contains { $0.isControlCharacter && $0 != "\t" }, "a control character in a value")
        precondition(field.value.first != " " && field.value.last != " " && field.value.first != "\t" && field.value.last != "\t", "a value not trimmed")
    }
    precondition(request.headers.count(of: "Host") == 1, "not one Host")
    // The path's first byte: as Characters, "/" and a combining mark after it are one grapheme, not "/".
    precondition(request.path.utf8.first == UInt8(ascii: "/") && !request.path.unicodeScalars.contains(where: \.isControlCharacter), "a path with a control character")
    precondition(length >= 0 && length < 1_000_000_000, "a length out of its digits")

    // Written out again (path and query escaped anew), the head reads as the same request.
    var query = request.query.map { RequestParsing.percentEncoded($0.name) + "=" + RequestParsing.percentEncoded($0.value) }.joined(separator: "&")
    if !query.isEmpty { query = "?" + query }
    let afterSlash = String(String.UnicodeScalarView(request.path.unicodeScalars.dropFirst()))  // the "/" alone, not its grapheme
    let target = "/" + afterSlash.split(separator: "/", omittingEmptySubsequences: false).map { RequestParsing.percentEncoded(String($0)) }.joined(separator: "/")
    let version = request.version == .http1_0 ? "HTTP/1.0" : "HTTP/1.1"
    let written = "\(request.method) \(target)\(query) \(version)\r\n" + request.headers.map { "\($0.name): \($0.value)\r\n" }.joined() + "\r\n"
    guard let (again, lengthAgain) = try? RequestParsing.parse(head: Array(written.utf8)[...], peer: "fuzz") else {
        preconditionFailure("a head taken once is refused when written out again: \(written.debugDescription)")
    }
    precondition(again.method == request.method && again.path.utf8.elementsEqual(request.path.utf8) && again.query == request.query, "read back otherwise")
    precondition(again.headers == request.headers && lengthAgain == length && again.version == request.version, "fields read back otherwise")
    return 0
}

#if FUZZING
    // SwiftPM links executables with `main` aliased to `fuzz_http_main`.
    @_cdecl("fuzz_http_main")
    func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
        Fuzzing.run(fuzzHTTP, argc: argc, argv: argv)
    }
#else
    @main
    struct Replay {
        static func main() throws {
            try Fuzzing.replay(fuzzHTTP, paths: Array(CommandLine.arguments.dropFirst()))
        }
    }
#endif
