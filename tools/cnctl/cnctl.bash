# SPDX-License-Identifier: LGPL-2.1-or-later
# bash completion for cnctl (libcn), installed as
# <bash-completion's completionsdir>/cnctl, where bash-completion loads it
# the first time cnctl is completed.
#
# Subcommands and options are read from the --help of the cnctl being
# completed (the first word as typed), so the completion never lists an
# option that binary lacks; only the values below are spelt here.

# The subcommands: the "Commands:" block of `cnctl --help`.
_cnctl_commands()
{
	"$1" --help 2>/dev/null | awk '/^Commands:/ { on = 1; next } on && /^$/ { exit }
		on && /^  [a-z]/ { print $1 }'
}

# The long options of `cnctl CMD --help` (indented lines that start with an
# option), one a line; with "=" after those that take a value (an upper-case
# word follows them in the help).
_cnctl_options()
{
	"$1" "$2" --help 2>/dev/null | sed -n 's/^  *\(-[A-Za-z], \)*\(--[a-z][a-z-]*\)\( [A-Z]\)\{0,1\}.*/\2\3/p' |
		sed 's/ [A-Z]$/=/' | sort -u
}

_cnctl()
{
	local cur prev words cword
	_init_completion || return

	local cmd
	if ((cword == 1)); then
		mapfile -t COMPREPLY < <(compgen -W "$(_cnctl_commands "$1") help --help --version" -- "$cur")
		return
	fi
	cmd=${words[1]}
	if [[ $cmd == help ]]; then
		((cword == 2)) && mapfile -t COMPREPLY < <(compgen -W "$(_cnctl_commands "$1")" -- "$cur")
		return
	fi

	local opts
	opts=$(_cnctl_options "$1" "$cmd")
	case $prev in
	--events | -e)
		# A comma-separated list: complete its last item.
		local head=${cur%"${cur##*,}"}
		mapfile -t COMPREPLY < <(compgen -P "$head" -W "fork clone exec uid gid sid ptrace comm coredump exit nonzero_exit all" -- "${cur##*,}")
		compopt -o nospace 2>/dev/null # outside a completion (a test): no-op
		return
		;;
	--color | --colour | -c)
		[[ $cmd == proc ]] && mapfile -t COMPREPLY < <(compgen -W "auto always never" -- "$cur")
		return
		;;
	--time | -T)
		mapfile -t COMPREPLY < <(compgen -W "clock iso mono" -- "$cur")
		return
		;;
	--source)
		[[ $cmd == proc ]] && mapfile -t COMPREPLY < <(compgen -W "auto kmod connector" -- "$cur")
		return
		;;
	--match | -m)
		mapfile -t COMPREPLY < <(compgen -W "strict ack-only" -- "$cur")
		return
		;;
	--timeout | -t | -D)
		# One grammar everywhere: a number and ms, s, m, h or d.
		mapfile -t COMPREPLY < <(compgen -W "500ms 1s 5s 30s 1m 10m 1h 1d" -- "$cur")
		return
		;;
	--file | -f | --metrics)
		_filedir
		return
		;;
	--user)
		mapfile -t COMPREPLY < <(compgen -u -- "$cur")
		return
		;;
	--pid | -p)
		# The processes running now, from /proc (no ps needed).
		[[ $cmd == proc ]] && mapfile -t COMPREPLY < <(compgen -W "$(cd /proc && printf '%s\n' [1-9]*)" -- "$cur")
		return
		;;
	esac
	# Another option that takes a value: nothing to offer for it.
	if [[ $prev == --* ]] && grep -qx -e "$prev=" <<<"$opts"; then
		return
	fi
	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$(sed 's/=$//' <<<"$opts" | sort -u)" -- "$cur")
	fi
}
complete -F _cnctl cnctl
