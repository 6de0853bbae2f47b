import ArgumentParser

/// The shell completion scripts ArgumentParser makes, with one thing added: `run`
/// is the default command, so `sentry --exp<TAB>` completes `run`'s flags, as
/// `sentry run --exp<TAB>` does. Each shell's script gets a wrapper that, when the
/// word after `sentry` is a flag, completes the line as if `run` stood before it.
enum Completions {
    /// The script `arguments` ask for (`--generate-completion-script bash`, or `=bash`), or nil
    /// when they ask for none or for a shell ArgumentParser does not know (it then says which it knows).
    static func requested(by arguments: [String]) -> String? {
        guard let first = arguments.first else { return nil }
        let flag = "--generate-completion-script"
        if first == flag, arguments.count == 2 { return script(for: arguments[1]) }
        if first.hasPrefix(flag + "="), arguments.count == 1 { return script(for: String(first.dropFirst(flag.count + 1))) }
        return nil
    }

    /// The script for `shell` (`bash`, `zsh` or `fish`), or nil for another shell.
    static func script(for shell: String) -> String? {
        guard let kind = CompletionShell(rawValue: shell) else { return nil }
        let script = SentryCommand.completionScript(for: kind)
        switch kind {
        case .bash:
            return script.replacingLast("complete -o filenames -F _sentry sentry", with: bashWrapper)
        case .zsh:
            return script.replacingLast(
                """
                if [[ "${funcstack[1]}" = _sentry ]]; then
                    _sentry "${@}"
                else
                    compdef _sentry sentry
                fi
                """, with: zshWrapper)
        case .fish:
            return script + fishWrapper
        default:
            return script
        }
    }

    private static let bashWrapper = """
        # `run` is the default command: a flag right after `sentry` completes as `sentry run` would.
        _sentry_with_default_run() {
            if [[ "${COMP_CWORD}" -ge 1 && "${COMP_WORDS[1]}" == -* ]]; then
                local command_end="${COMP_LINE%%"${COMP_WORDS[0]}"*}${COMP_WORDS[0]}"
                local COMP_LINE="${command_end} run${COMP_LINE#"${command_end}"}"
                local -i COMP_POINT=$((COMP_POINT + 4))
                local -a COMP_WORDS=("${COMP_WORDS[0]}" run "${COMP_WORDS[@]:1}")
                local -i COMP_CWORD=$((COMP_CWORD + 1))
                _sentry "${1}" "${2}" "${COMP_WORDS[COMP_CWORD - 1]}"
            else
                _sentry "${@}"
            fi
        }

        complete -o filenames -F _sentry_with_default_run sentry
        """

    private static let zshWrapper = """
        # `run` is the default command: a flag right after `sentry` completes as `sentry run` would.
        _sentry_with_default_run() {
            if [[ "${words[2]}" == -* ]]; then
                words=("${words[1]}" run "${(@)words[2,-1]}")
                (( CURRENT++ ))
            fi
            _sentry "${@}"
        }

        if [[ "${funcstack[1]}" = _sentry ]]; then
            _sentry_with_default_run "${@}"
        else
            compdef _sentry_with_default_run sentry
        fi
        """

    private static let fishWrapper = """

        # `run` is the default command: a flag right after `sentry` completes as `sentry run` would.
        functions -c __sentry_tokens __sentry_tokens_as_typed
        function __sentry_tokens
            set -l tokens (__sentry_tokens_as_typed $argv)
            if not contains -- -t $argv
                # The word after the command: typed already, or the one being completed.
                set -l next $tokens[2]
                test (count $tokens) -lt 2; and set next (commandline -ct)
                string match -q -- '-*' "$next"; and set tokens $tokens[1] run $tokens[2..]
            end
            string join \\n -- $tokens
        end

        """
}

extension String {
    /// With the last `target` replaced by `replacement`; unchanged when there is none.
    func replacingLast(_ target: String, with replacement: String) -> String {
        guard let range = ranges(of: target).last else { return self }
        var result = self
        result.replaceSubrange(range, with: replacement)
        return result
    }
}
