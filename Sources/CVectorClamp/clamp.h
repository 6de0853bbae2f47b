// Clamping eight floats, for the TFLite kernels' fused activations (Bounds.apply),
// the larger of two vectors, lane by lane (MAX_POOL_2D), and PRELU's select.
// Swift's SIMD8 comparisons and selects compile to maxps/minps in some functions
// and to 128-bit compare-and-blend sequences in others; clang's vector select
// is one max and one min everywhere (and a single instruction pair on NEON).
// SIMD8<Float> in Swift is this vector type. NaN stays NaN, as in the Swift form.
typedef float sentry_float8 __attribute__((ext_vector_type(8)));

static inline __attribute__((always_inline))
sentry_float8 sentry_max8(sentry_float8 a, sentry_float8 b) {
    return b > a ? b : a;
}

static inline __attribute__((always_inline))
sentry_float8 sentry_clamp8(sentry_float8 value, float lower, float upper) {
    sentry_float8 low = lower, high = upper;
    value = value < low ? low : value;
    return value > high ? high : value;
}

// PRELU: a lane below zero multiplied by its slope, the others as they are.
static inline __attribute__((always_inline))
sentry_float8 sentry_prelu8(sentry_float8 value, sentry_float8 slopes) {
    return value < 0 ? value * slopes : value;
}
