// The letterbox's and the face crop's vector steps that Swift compiled poorly: the
// lane sums of the letterbox's horizontal pass and the rounding both passes end
// with, and (at the end) the crop's sampling steps.
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

// The floor of eight values plus a half already added, clipped to 0...255: Pillow's
// rounding (`sentry_round8`) for sums that carry their half already (the colour
// pass adds it to the luma once for all three channels).
static inline __attribute__((always_inline))
sentry_sums_float8 sentry_levels8(sentry_sums_float8 raised) {
    sentry_sums_float8 zero = 0.0f, top = 255.0f;
    sentry_sums_float8 low = __builtin_elementwise_floor(raised < zero ? zero : raised);
    return low < top ? low : top;
}

// Pillow's rounding of eight values: half up, clipped to 0...255 (NaN becomes 255):
// the floor of the value plus a half, one instruction (vroundps, frintm), where
// adding and taking away 2^23 and correcting where that went up took four. The top
// clip comes after the floor, as a minimum (one vminps): before it, the compiler
// moved the floor above the clip and compared and blended there. Written in Swift,
// the function was kept out of line (a call and vzeroupper per eight values, 29% of
// the letterbox's time), and inlined, its selects became lane-by-lane branches.
static inline __attribute__((always_inline))
sentry_sums_float8 sentry_round8(sentry_sums_float8 value) {
    return sentry_levels8(value + 0.5f);
}

// Eight pixels' three channels, interleaved (r0 g0 b0 r1 ... b7) into `target`: each
// channel turned once so that every output vector takes each of its lanes from the
// same lane of one of them, then two blends per output vector (three permutes and six
// blends; Swift's lane-by-lane form compiled to fifteen shuffles).
static inline __attribute__((always_inline))
void sentry_interleave3x8(sentry_sums_float8 r, sentry_sums_float8 g, sentry_sums_float8 b, float *target) {
    typedef float float8u __attribute__((ext_vector_type(8), aligned(4)));
    sentry_sums_float8 rt = __builtin_shufflevector(r, r, 0, 3, 6, 1, 4, 7, 2, 5);
    sentry_sums_float8 gt = __builtin_shufflevector(g, g, 5, 0, 3, 6, 1, 4, 7, 2);
    sentry_sums_float8 bt = __builtin_shufflevector(b, b, 2, 5, 0, 3, 6, 1, 4, 7);
    sentry_sums_float8 rg = __builtin_shufflevector(rt, gt, 0, 9, 2, 3, 12, 5, 6, 15);
    sentry_sums_float8 br = __builtin_shufflevector(bt, rt, 0, 9, 2, 3, 12, 5, 6, 15);
    sentry_sums_float8 gb = __builtin_shufflevector(gt, bt, 0, 9, 2, 3, 12, 5, 6, 15);
    *(float8u *)(target) = __builtin_shufflevector(rg, bt, 0, 1, 10, 3, 4, 13, 6, 7);
    *(float8u *)(target + 8) = __builtin_shufflevector(br, gt, 0, 1, 10, 3, 4, 13, 6, 7);
    *(float8u *)(target + 16) = __builtin_shufflevector(gb, rt, 0, 1, 10, 3, 4, 13, 6, 7);
}

// Eight bytes as eight floats (vpmovzxbd, vcvtdq2ps): the colour pass's chroma rows
// are read this way in each multiply-add. Swift's SIMD conversions, in a nested
// function, stayed two calls per eight bytes.
static inline __attribute__((always_inline))
sentry_sums_float8 sentry_bytes8(const unsigned char *bytes) {
    typedef unsigned char bytes8 __attribute__((ext_vector_type(8), aligned(1)));
    return __builtin_convertvector(*(const bytes8 *)bytes, sentry_sums_float8);
}

// Eight rows of eight floats turned into eight columns: row i's value j becomes
// column j's value i (`source` rows `sourceStride` floats apart, `target` columns
// `targetStride` apart). The chroma's horizontal pass works on columns of eight
// rows, so that each output is a few multiply-adds of whole vectors, not a dot
// product summed across lanes. Unaligned loads and stores; the usual two rounds of
// pair shuffles and one of half swaps.
static inline __attribute__((always_inline))
void sentry_transpose8x8(const float *source, long sourceStride, float *target, long targetStride) {
    typedef float float8u __attribute__((ext_vector_type(8), aligned(4)));
    float8u r0 = *(const float8u *)(source), r1 = *(const float8u *)(source + sourceStride);
    float8u r2 = *(const float8u *)(source + 2 * sourceStride), r3 = *(const float8u *)(source + 3 * sourceStride);
    float8u r4 = *(const float8u *)(source + 4 * sourceStride), r5 = *(const float8u *)(source + 5 * sourceStride);
    float8u r6 = *(const float8u *)(source + 6 * sourceStride), r7 = *(const float8u *)(source + 7 * sourceStride);
    float8u t0 = __builtin_shufflevector(r0, r1, 0, 8, 1, 9, 4, 12, 5, 13), t1 = __builtin_shufflevector(r0, r1, 2, 10, 3, 11, 6, 14, 7, 15);
    float8u t2 = __builtin_shufflevector(r2, r3, 0, 8, 1, 9, 4, 12, 5, 13), t3 = __builtin_shufflevector(r2, r3, 2, 10, 3, 11, 6, 14, 7, 15);
    float8u t4 = __builtin_shufflevector(r4, r5, 0, 8, 1, 9, 4, 12, 5, 13), t5 = __builtin_shufflevector(r4, r5, 2, 10, 3, 11, 6, 14, 7, 15);
    float8u t6 = __builtin_shufflevector(r6, r7, 0, 8, 1, 9, 4, 12, 5, 13), t7 = __builtin_shufflevector(r6, r7, 2, 10, 3, 11, 6, 14, 7, 15);
    float8u u0 = __builtin_shufflevector(t0, t2, 0, 1, 8, 9, 4, 5, 12, 13), u1 = __builtin_shufflevector(t0, t2, 2, 3, 10, 11, 6, 7, 14, 15);
    float8u u2 = __builtin_shufflevector(t1, t3, 0, 1, 8, 9, 4, 5, 12, 13), u3 = __builtin_shufflevector(t1, t3, 2, 3, 10, 11, 6, 7, 14, 15);
    float8u u4 = __builtin_shufflevector(t4, t6, 0, 1, 8, 9, 4, 5, 12, 13), u5 = __builtin_shufflevector(t4, t6, 2, 3, 10, 11, 6, 7, 14, 15);
    float8u u6 = __builtin_shufflevector(t5, t7, 0, 1, 8, 9, 4, 5, 12, 13), u7 = __builtin_shufflevector(t5, t7, 2, 3, 10, 11, 6, 7, 14, 15);
    *(float8u *)(target) = __builtin_shufflevector(u0, u4, 0, 1, 2, 3, 8, 9, 10, 11);
    *(float8u *)(target + targetStride) = __builtin_shufflevector(u1, u5, 0, 1, 2, 3, 8, 9, 10, 11);
    *(float8u *)(target + 2 * targetStride) = __builtin_shufflevector(u2, u6, 0, 1, 2, 3, 8, 9, 10, 11);
    *(float8u *)(target + 3 * targetStride) = __builtin_shufflevector(u3, u7, 0, 1, 2, 3, 8, 9, 10, 11);
    *(float8u *)(target + 4 * targetStride) = __builtin_shufflevector(u0, u4, 4, 5, 6, 7, 12, 13, 14, 15);
    *(float8u *)(target + 5 * targetStride) = __builtin_shufflevector(u1, u5, 4, 5, 6, 7, 12, 13, 14, 15);
    *(float8u *)(target + 6 * targetStride) = __builtin_shufflevector(u2, u6, 4, 5, 6, 7, 12, 13, 14, 15);
    *(float8u *)(target + 7 * targetStride) = __builtin_shufflevector(u3, u7, 4, 5, 6, 7, 12, 13, 14, 15);
}

// The face crop's steps: eight floats rounded down, eight whole-number floats as
// 32-bit integers (Swift's SIMD rounding conversion is a generic call per vector), and
// eight pairs of bytes (a0 b0 a1 b1 ...) widened into two vectors of floats, the firsts
// and the seconds: the horizontal neighbours a bilinear sample reads, gathered a pair
// at a time; and eight floats in reverse order, for the mirrored eye.
typedef int sentry_sums_int8 __attribute__((ext_vector_type(8)));

static inline __attribute__((always_inline))
sentry_sums_float8 sentry_floor8(sentry_sums_float8 values) {
    return __builtin_elementwise_floor(values);
}

static inline __attribute__((always_inline))
sentry_sums_int8 sentry_int8(sentry_sums_float8 values) {
    return __builtin_convertvector(values, sentry_sums_int8);
}

typedef unsigned char sentry_sums_bytes16 __attribute__((ext_vector_type(16), aligned(1)));

static inline __attribute__((always_inline))
sentry_sums_float8 sentry_pair_firsts8(const unsigned char *pairs) {
    sentry_sums_bytes16 all = *(const sentry_sums_bytes16 *)pairs;
    return __builtin_convertvector(__builtin_shufflevector(all, all, 0, 2, 4, 6, 8, 10, 12, 14), sentry_sums_float8);
}

static inline __attribute__((always_inline))
sentry_sums_float8 sentry_pair_seconds8(const unsigned char *pairs) {
    sentry_sums_bytes16 all = *(const sentry_sums_bytes16 *)pairs;
    return __builtin_convertvector(__builtin_shufflevector(all, all, 1, 3, 5, 7, 9, 11, 13, 15), sentry_sums_float8);
}

static inline __attribute__((always_inline))
sentry_sums_float8 sentry_reverse8(sentry_sums_float8 values) {
    return __builtin_shufflevector(values, values, 7, 6, 5, 4, 3, 2, 1, 0);
}
