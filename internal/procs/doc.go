// Package procs sizes GOMAXPROCS to the process's recent CPU demand.
//
// A controller manager mostly waits: on its client-side rate limits, on
// watch events, on timers. Each wake-up with an idle P makes the Go
// scheduler wake another thread that spins looking for work before it
// sleeps again, and at low load that spinning is a large share of the
// process's CPU. The Governor lowers GOMAXPROCS while demand is low and
// raises it within one period once demand grows, up to what it was at
// start (Go's default: the CPU count or the container's CPU limit).
package procs
