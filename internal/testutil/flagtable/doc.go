// Package flagtable compares a command's flags with a table read off an
// upstream binary's --help (testdata/upstream-flags.tsv: section, flag,
// type, default; one row a flag), for the flag tests of both commands.
package flagtable
