import ProcessorFeatures
import Testing

@Suite("The processor from /proc/cpuinfo, and the kernels it runs")
struct ProcessorTests {
    static let zen4 = """
        processor\t: 0
        vendor_id\t: AuthenticAMD
        cpu family\t: 25
        model\t\t: 17
        model name\t: AMD EPYC
        flags\t\t: fpu sse sse2 ssse3 fma sse4_1 avx avx2 bmi2

        processor\t: 1
        vendor_id\t: AuthenticAMD
        cpu family\t: 26
        model\t\t: 2
        model name\t: another
        flags\t\t: fpu

        """

    @Test("an x86 core: name, vendor, family and model from the first core; AVX2 and FMA run the 8-lane kernels")
    func x86() {
        let processor = Processor(cpuinfo: Self.zen4)
        #expect(processor.name == "AMD EPYC" && processor.vendor == "AuthenticAMD")
        #expect(processor.family == 25 && processor.model == 17)
        #expect(processor.kernels == .avx2 && !processor.hasAVX512)
        #expect(processor.summary == "AMD EPYC, AuthenticAMD family 25 model 17 (avx2 fma)")
    }

    @Test("AVX-512F is noticed; a core without FMA runs no kernels")
    func wideAndOld() {
        let intel = Processor(cpuinfo: "vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\nflags\t\t: avx2 fma avx512f avx512bw avx512_vnni\n")
        #expect(intel.kernels == .avx2 && intel.hasAVX512)
        #expect(intel.summary.hasSuffix("GenuineIntel family 6 model 143 (avx2 fma avx512f avx512bw avx512_vnni)"))
        let old = Processor(cpuinfo: "model name\t: Intel(R) Core(TM)2 Duo CPU E8400\nflags\t\t: fpu sse sse2 ssse3\n")
        #expect(old.kernels == nil)
        #expect(old.summary.hasSuffix("(no vector extensions sentry uses)"))
    }

    @Test("a Raspberry Pi: NEON from Features, its board's name from the Model line after the cores")
    func pi() {
        let pi = Processor(cpuinfo: "processor\t: 0\nBogoMIPS\t: 108.00\nFeatures\t: fp asimd evtstrm crc32 cpuid\nCPU part\t: 0xd08\n\nHardware\t: BCM2835\nModel\t\t: Raspberry Pi 4 Model B Rev 1.4\n")
        #expect(pi.kernels == .neon && pi.name == "Raspberry Pi 4 Model B Rev 1.4" && pi.family == nil)
    }

    @Test("this machine's is read")
    func current() throws {
        let processor = try #require(Processor.current)
        #expect(!processor.flags.isEmpty)
    }
}
