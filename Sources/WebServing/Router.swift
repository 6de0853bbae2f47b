/// Routes by method and exact path: the first route that matches answers; a
/// known path asked with another method gets `405` with the methods it takes,
/// any other path `notFound`'s answer.
public struct Router: HTTPHandler {
    public typealias Answer = @Sendable (HTTPRequest) -> HTTPResponse

    private var routes: [(method: String, path: String, answer: Answer)] = []
    private let notFound: Answer

    public init(notFound: @escaping Answer) { self.notFound = notFound }

    public mutating func add(_ method: String, _ path: String, _ answer: @escaping Answer) {
        routes.append((method, path, answer))
    }

    public func respond(to request: HTTPRequest) -> HTTPResponse {
        if let route = routes.first(where: { $0.method == request.method && $0.path == request.path }) { return route.answer(request) }
        let methods = routes.filter { $0.path == request.path }.map(\.method)
        guard !methods.isEmpty else { return notFound(request) }
        var refusal = HTTPResponse.text(.methodNotAllowed, "\(request.method) \(request.path) is not allowed; it takes \(methods.joined(separator: ", "))")
        refusal.headers["Allow"] = methods.joined(separator: ", ")
        return refusal
    }
}
