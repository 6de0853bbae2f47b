import ModelFiles
import TextOutput

/// The processor as `/proc/cpuinfo` describes its first core: its name, its
/// x86 family and model (which name a microarchitecture where the marketing
/// name does not, as in a virtual machine's "AMD EPYC"), and its feature flags.
/// Every figure sentry prints about speed names the host it came from this way.
public struct Processor: Sendable, Equatable {
    /// `model name` on x86, `Model` (or nothing) on ARM.
    public var name: String
    /// `vendor_id`: `GenuineIntel`, `AuthenticAMD`; empty on ARM.
    public var vendor: String
    /// x86's `cpu family` and `model`.
    public var family: Int?
    public var model: Int?
    /// `flags` on x86, `Features` on ARM.
    public var flags: Set<String>

    /// Reads a `/proc/cpuinfo` text: each field from the first core that has it
    /// (a Raspberry Pi names its board in a `Model` line after every core's block).
    public init(cpuinfo text: String) {
        var fields: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { continue }
            let key = parts[0].trimmed()
            if fields[key] == nil { fields[key] = parts[1].trimmed() }
        }
        name = fields["model name"] ?? fields["Model"] ?? ""
        vendor = fields["vendor_id"] ?? ""
        family = fields["cpu family"].flatMap { Int($0) }
        model = fields["model"].flatMap { Int($0) }
        flags = Set((fields["flags"] ?? fields["Features"] ?? "").split(separator: " ").map(String.init))
    }

    /// This machine's, read once; nil where `/proc/cpuinfo` cannot be read.
    public static let current: Processor? = {
        guard let bytes = try? FileContents.read("/proc/cpuinfo", atMost: 1 << 20) else { return nil }
        return Processor(cpuinfo: String(decoding: bytes, as: UTF8.self))
    }()

    /// The kernels the networks run here, or nil where none can (an x86 core
    /// without AVX2 and FMA: sentry then detects with the Haar cascade).
    public var kernels: KernelPath? {
        if flags.contains("asimd") { return .neon }
        return flags.contains("avx2") && flags.contains("fma") ? .avx2 : nil
    }

    /// Whether the core has AVX-512's foundation, which sentry's kernels do not use yet.
    public var hasAVX512: Bool { flags.contains("avx512f") }

    /// One line for reports: the name, the x86 family and model, the vector extensions.
    public var summary: String {
        let named = name.isEmpty ? "an unnamed processor" : name
        let identity = family.map { family in ", \(vendor.isEmpty ? "x86-64" : vendor) family \(family)" + (model.map { " model \($0)" } ?? "") } ?? ""
        let vectors = ["avx2", "fma", "avx512f", "avx512bw", "avx512_vnni", "asimd"].filter(flags.contains).joined(separator: " ")
        return "\(named)\(identity) (\(vectors.isEmpty ? "no vector extensions sentry uses" : vectors))"
    }
}

/// Which build of the interpreter's kernels runs: chosen once at start from
/// the processor's flags, never by the build's target.
public enum KernelPath: String, Sendable {
    /// x86-64 with AVX2 and FMA: eight floats to a register.
    case avx2 = "AVX2+FMA, 8 lanes"
    /// 64-bit ARM: eight floats as two NEON registers.
    case neon = "NEON, 8 lanes in two registers"
}
