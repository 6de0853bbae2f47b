import Foundation
import PackagePlugin

/// Writes `BuildInfo.swift` (the version in `VERSION`, the commit checked out)
/// with `build-info`, again whenever `VERSION` or the checked-out commit changes,
/// so that `sentry --version` says exactly what was built.
@main
struct BuildInfoPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let root = context.package.directoryURL
        let git = root.appending(path: ".git")
        // What names the commit: HEAD, and the branch file or packed-refs it points to.
        var inputs = [root.appending(path: "VERSION"), git.appending(path: "HEAD")]
        if let head = try? String(contentsOf: git.appending(path: "HEAD"), encoding: .utf8), head.hasPrefix("ref: ") {
            inputs.append(git.appending(path: head.dropFirst(5).trimmingCharacters(in: .whitespacesAndNewlines)))
        }
        inputs.append(git.appending(path: "packed-refs"))
        let existing = inputs.filter { FileManager.default.fileExists(atPath: $0.path) }
        let output = context.pluginWorkDirectoryURL.appending(path: "BuildInfo.swift")
        return [
            .buildCommand(
                displayName: "Writing BuildInfo.swift", executable: try context.tool(named: "build-info").url,
                arguments: [output.path, root.path], inputFiles: existing, outputFiles: [output])
        ]
    }
}
