//go:build unix && !linux

package cluster

import "syscall"

// sysProcAttr puts a child in its own process group. Without Linux's
// Pdeathsig, children outlive a parent that is killed without running Stop.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
