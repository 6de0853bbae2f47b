// The letterbox's vector steps that Swift compiled poorly: the lane sums of its
// horizontal pass and the rounding both passes end with.
//
// The lane sums of eight vectors of eight floats, as one vector: lane i is the
// sum of vector i's lanes, added in pairs ((0+1)+(2+3))+((4+5)+(6+7)). Swift's
// SIMD shuffles for this compiled to 128-bit inserts and unpacks; these are
// clang's shuffles, which x86-64 with AVX does in horizontal adds and two lane
// permutes (the same sums in the same order, so the same bits).
typedef float sentry_sums_float8 __attribute__((ext_vector_type(8)));

static inline __attribute__((always_inline))
sentry_sums_float8 sentry_pair_sums(sentry_sums_float8 a, sentry_sums_float8 b) {
    // Within each half: a's adjacent pairs, then b's.
    return __builtin_shufflevector(a, b, 0, 2, 8, 10, 4, 6, 12, 14) + __builtin_shufflevector(a, b, 1, 3, 9, 11, 5, 7, 13, 15);
}

static inline __attribute__((always_inline))
sentry_sums_float8 sentry_sums8x8(sentry_sums_float8 a, sentry_sums_float8 b, sentry_sums_float8 c, sentry_sums_float8 d,
                                  sentry_sums_float8 e, sentry_sums_float8 f, sentry_sums_float8 g, sentry_sums_float8 h) {
    sentry_sums_float8 ab = sentry_pair_sums(a, b), cd = sentry_pair_sums(c, d);
    sentry_sums_float8 ef = sentry_pair_sums(e, f), gh = sentry_pair_sums(g, h);
    // Lanes: [a01+a23, b.., c.., d.. | a45+a67, b.., c.., d..], the same for e..h.
    sentry_sums_float8 abcd = sentry_pair_sums(ab, cd), efgh = sentry_pair_sums(ef, gh);
    return __builtin_shufflevector(abcd, efgh, 0, 1, 2, 3, 8, 9, 10, 11)
         + __builtin_shufflevector(abcd, efgh, 4, 5, 6, 7, 12, 13, 14, 15);
}

// Pillow's rounding of eight values: half up, clipped to 0...255 (NaN stays NaN).
// Adding and taking away 2^23 rounds to the nearest integer; one less where that
// went up. Written in Swift, the function was kept out of line (a call and
// vzeroupper per eight values, 29% of the letterbox's time), and inlined, its
// selects became lane-by-lane branches.
static inline __attribute__((always_inline))
sentry_sums_float8 sentry_round8(sentry_sums_float8 value) {
    sentry_sums_float8 zero = 0.0f, top = 255.0f, magic = 0x1p23f;
    sentry_sums_float8 raised = value + 0.5f;
    sentry_sums_float8 low = raised < zero ? zero : raised;
    sentry_sums_float8 x = low > top ? top : low;
    sentry_sums_float8 nearest = (x + magic) - magic;
    return nearest > x ? nearest - 1.0f : nearest;
}
