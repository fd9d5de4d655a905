// Package cli implements the omnigraph command line: flag parsing, output
// rendering and exit codes. It holds no engine logic; every command is a thin
// adapter over the public omnigraph API and the compiler packages.
//
// Exit codes (spec/surfaces.md §1.6) are decided in one place, ExitCode:
//
//	0  success
//	1  any error, or a command that printed its result and reports failure (lint status=error)
//	2  usage: unknown command, bad or missing flags/arguments, a flag the verb cannot use
//	4  a conditional write (--if-commit) lost its compare-and-swap
package cli
