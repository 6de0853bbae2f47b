/// Routes by method and path (exact, or every path under a folder): the
/// first route that matches answers; a known path asked with another method
/// gets `405` with the methods it takes, any other path `notFound`'s answer.
public struct Router: HTTPHandler {
    public typealias Answer = @Sendable (HTTPRequest) -> HTTPResponse

    private var routes: [(method: String, path: String, isFolder: Bool, answer: Answer)] = []
    private let notFound: Answer

    public init(notFound: @escaping Answer) { self.notFound = notFound }

    public mutating func add(_ method: String, _ path: String, _ answer: @escaping Answer) {
        routes.append((method, path, false, answer))
    }

    /// Routes every path below `folder` (`/history/` takes `/history/a/b.jpg`) to `answer`.
    public mutating func add(_ method: String, under folder: String, _ answer: @escaping Answer) {
        precondition(folder.hasSuffix("/"), "a folder route ends in /")
        routes.append((method, folder, true, answer))
    }

    public func respond(to request: HTTPRequest) -> HTTPResponse {
        func matches(_ route: (method: String, path: String, isFolder: Bool, answer: Answer)) -> Bool {
            // Bytes, not Unicode text: a route is matched by its own spelling only.
            let path = request.path.utf8
            return route.isFolder ? path.count > route.path.utf8.count && path.starts(with: route.path.utf8) : path.elementsEqual(route.path.utf8)
        }
        if let route = routes.first(where: { $0.method == request.method && matches($0) }) { return route.answer(request) }
        let methods = routes.filter(matches).map(\.method)
        guard !methods.isEmpty else { return notFound(request) }
        var refusal = HTTPResponse.text(
            .methodNotAllowed, "\(request.method) \(ClientText.escaped(request.path)) is not allowed; it takes \(methods.joined(separator: ", "))")
        refusal.headers["Allow"] = methods.joined(separator: ", ")
        return refusal
    }
}
