import Foundation
import PackagePlugin

/// Builds the target's `Page/*.html` into Swift (`ConsolePage.html`) with
/// `embed-page`, again whenever a file under `Page/` changes.
@main
struct EmbedPagePlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let pageDirectory = target.directoryURL.appending(path: "Page")
        let files = try FileManager.default.contentsOfDirectory(at: pageDirectory, includingPropertiesForKeys: nil)
            .sorted { $0.path < $1.path }
        let pages = files.filter { $0.pathExtension == "html" }
        let tool = try context.tool(named: "embed-page")
        return pages.map { page in
            let output = context.pluginWorkDirectoryURL.appending(path: page.deletingPathExtension().lastPathComponent + "-page.swift")
            return .buildCommand(
                displayName: "Embedding \(page.lastPathComponent)", executable: tool.url,
                arguments: [output.path, page.path], inputFiles: files, outputFiles: [output])
        }
    }
}
