import Glibc

/// A client on a real loopback socket, as blunt as a hostile one may be:
/// it sends any bytes and reads what comes back, 5 s at most per read.
public struct RawClient: Sendable {
    public let descriptor: Int32

    public enum ClientError: Error { case refused }

    public init(port: UInt16) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            Glibc.close(descriptor)
            throw ClientError.refused
        }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    public func send(_ text: String) { send(Array(text.utf8)) }

    public func send(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
    }

    /// What arrives until the server closes (or 5 s pass), at most `limit` bytes.
    public func readAll(limit: Int = 1 << 20) -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while received.count < limit {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received += buffer[..<count]
        }
        return received
    }

    /// The first `count` bytes, or fewer if the server closes first.
    public func read(_ count: Int) -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: count)
        while received.count < count {
            let got = recv(descriptor, &buffer, count - received.count, 0)
            if got <= 0 { break }
            received += buffer[..<got]
        }
        return received
    }

    public func close() { Glibc.close(descriptor) }
}

/// Well-formed requests over a `RawClient`, as curl or a script sends them.
public enum HTTP {
    public struct Reply: Sendable {
        public var status: Int
        public var headers: String
        public var body: [UInt8]
    }

    /// A request's bytes: `Host: 127.0.0.1` unless `headers` name another, and
    /// a body as JSON unless they give its type.
    public static func request(_ method: String, _ path: String, body: String = "", headers: [String] = []) -> String {
        func given(_ name: String) -> Bool { headers.contains { $0.lowercased().hasPrefix(name.lowercased() + ":") } }
        return "\(method) \(path) HTTP/1.1\r\n\(given("Host") ? "" : "Host: 127.0.0.1\r\n")Connection: close\r\nContent-Length: \(body.utf8.count)\r\n"
            + (body.isEmpty || given("Content-Type") ? "" : "Content-Type: application/json\r\n")
            + headers.map { $0 + "\r\n" }.joined() + "\r\n" + body
    }

    /// One request on its own connection; the whole reply (chunked bodies decoded).
    public static func request(port: UInt16, _ method: String, _ path: String, body: String = "", headers: [String] = []) throws -> Reply {
        let client = try RawClient(port: port)
        defer { client.close() }
        client.send(request(method, path, body: body, headers: headers))
        let bytes = client.readAll(limit: .max)
        guard let split = find(Array("\r\n\r\n".utf8), in: bytes, from: 0) else { throw RawClient.ClientError.refused }
        let head = String(decoding: bytes[0..<split], as: UTF8.self)
        let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
        var body = Array(bytes[(split + 4)...])
        if head.lowercased().contains("transfer-encoding: chunked") { body = dechunk(body) }
        return Reply(status: status, headers: head, body: body)
    }

    /// A chunked body's bytes, as far as its chunks are whole.
    public static func dechunk(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [], position = 0
        while let end = find([13, 10], in: bytes, from: position),
            let size = Int(String(decoding: bytes[position..<end], as: UTF8.self), radix: 16), size > 0, end + 2 + size <= bytes.count
        {
            out += bytes[(end + 2)..<(end + 2 + size)]
            position = end + 2 + size + 2
        }
        return out
    }

    /// Where `needle` first starts in `bytes` at or after `start`.
    public static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= needle.count, start <= bytes.count - needle.count else { return nil }
        var index = start
        while index <= bytes.count - needle.count {
            if bytes[index] == needle[0], bytes[index..<(index + needle.count)].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }
}
