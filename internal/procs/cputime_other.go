//go:build !unix

package procs

import "time"

// cpuTime is nil where the process's CPU time is not read: no Governor.
var cpuTime func() time.Duration
