import CVectorClamp

/// Eight floats: the kernels work on float32 NHWC tensors (batch 1) through raw
/// pointers into buffers the interpreter allocated once. Channels are the
/// innermost dimension, so the loops run over channels eight at a time.
typealias Vector = SIMD8<Float>

/// Clamping bounds that implement a fused activation.
struct Bounds {
    var lower: Float
    var upper: Float

    init(_ activation: Activation) {
        switch activation {
        case .none: (lower, upper) = (-.infinity, .infinity)
        case .relu: (lower, upper) = (0, .infinity)
        case .relu6: (lower, upper) = (0, 6)
        case .reluMinusOneToOne: (lower, upper) = (-1, 1)
        }
    }

    /// (In C: Swift's `replacing(with:where:)` compiles to vmaxps/vminps in some
    /// kernels and to 128-bit compare-and-blend pairs in others; the standard
    /// library's `clamped` and `pointwiseMax` go lane by lane through a call.)
    @inline(__always) func apply(_ value: Vector) -> Vector { sentry_clamp8(value, lower, upper) }

    @inline(__always) func apply(_ value: Float) -> Float { min(max(value, lower), upper) }
}

@inline(__always) func load(_ pointer: UnsafePointer<Float>) -> Vector {
    UnsafeRawPointer(pointer).loadUnaligned(as: Vector.self)
}

@inline(__always) func store(_ value: Vector, _ pointer: UnsafeMutablePointer<Float>) {
    UnsafeMutableRawPointer(pointer).storeBytes(of: value, as: Vector.self)
}

/// Stores the first `count` lanes of `value` (all eight when `count` ≥ 8): the tail of a channel row.
@inline(__always) func store(_ value: Vector, _ pointer: UnsafeMutablePointer<Float>, count: Int) {
    if count >= 8 { return store(value, pointer) }
    // Half a vector (a 12- or 36-channel row's tail) in one store, not a call.
    if count == 4 { return UnsafeMutableRawPointer(pointer).storeBytes(of: value.lowHalf, as: SIMD4<Float>.self) }
    storeLanes(value, pointer, count: count)
}

/// The lane-by-lane store of a tail, kept out of line: inlined, it leads the
/// optimiser to compute the whole vector lane by lane, the full stores too.
@inline(never) func storeLanes(_ value: Vector, _ pointer: UnsafeMutablePointer<Float>, count: Int) {
    for lane in 0..<count { pointer[lane] = value[lane] }
}
