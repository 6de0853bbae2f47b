import Foundation
import Scratch
import Testing

/// Runs `script` in `shell` (`-c`), with sentry's folder first on PATH; its standard output.
func inShell(_ shell: String, _ script: String) throws -> String {
    let folder = (SentryProcess.executable as NSString).deletingLastPathComponent
    let run = try SentryProcess(program: "/usr/bin/env", [shell, "-c", script], environment: ["PATH": folder + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "")])
    return run.standardOutput
}

@Suite("tab completion: run is the default command, so its flags complete right after sentry, in bash, zsh and fish")
struct CompletionTests {
    static let lines = ["sentry --expr", "sentry run --expr", "sentry doc", "sentry --camera demo --on-exit ", "sentry doctor --ser"]
    static let expected = ["--expressions --expressions-fps", "--expressions --expressions-fps", "doctor", "center hold none scan", "--serial"]

    @Test("bash")
    func bash() throws {
        let script = """
            source <(sentry --generate-completion-script bash)
            for line in \(Self.lines.map { "'\($0)'" }.joined(separator: " ")); do
                COMP_LINE="$line"; COMP_POINT=${#COMP_LINE}; read -ra COMP_WORDS <<< "$COMP_LINE"
                [[ "$COMP_LINE" == *" " ]] && COMP_WORDS+=("")
                COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
                "$(complete -p sentry | sed -E 's/.* -F ([^ ]+) .*/\\1/')" sentry "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
                printf '%s\\n' "${COMPREPLY[*]}" | tr ' ' '\\n' | grep -v '^$' | sort | tr '\\n' ' ' | sed 's/ $//'; echo
            done
            """
        let answers = try inShell("bash", script).split(separator: "\n", omittingEmptySubsequences: false).map { String($0.replacing("--exposure ", with: "")) }
        #expect(Array(answers.prefix(5)) == Self.expected, "\(answers)")
    }

    @Test("fish")
    func fish() throws {
        let script = """
            sentry --generate-completion-script fish | source
            for line in \(Self.lines.map { "'\($0)'" }.joined(separator: " "))
                complete -C "$line" | string replace -r '\\t.*' '' | string match -v -- --exposure | sort | string join ' '
            end
            """
        #expect(try inShell("fish", script).split(separator: "\n").map(String.init) == Self.expected)
    }

    @Test("zsh, in a pseudo-terminal as a user types")
    func zsh() throws {
        let scratch = try ScratchDirectory("zsh")
        let functions = scratch.file("functions").path
        try FileManager.default.createDirectory(atPath: functions, withIntermediateDirectories: true)
        _ = try inShell("sh", "sentry --generate-completion-script zsh > \(functions)/_sentry")
        // zsh completes only at a prompt: a second zsh in zpty types the line and a TAB.
        let script = """
            zmodload zsh/zpty
            zpty z zsh -f -i
            zpty -w z 'PS1="> "; fpath=(\(functions) $fpath); autoload -U compinit; compinit -u -d \(scratch.file("dump").path)'
            zpty -w z $'sentry --expr\\t'
            # Read until the completion shows (a loaded host takes seconds to start compinit), at most 30 s.
            out=""
            for i in {1..300}; do
                while zpty -rt z chunk; do out+=$chunk; done
                [[ $out == *'sentry --expressions'* ]] && break
                sleep 0.1
            done
            print -r -- "$out" | tr -d '\\r' | grep -ao -- 'sentry --expr[a-z-]*' | tail -1
            zpty -d z
            """
        #expect(try inShell("zsh", script).hasPrefix("sentry --expressions"))
    }
}
