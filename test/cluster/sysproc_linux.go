package cluster

import "syscall"

// sysProcAttr puts a child in its own process group (so it and anything it
// starts can be signalled together, and a terminal's Ctrl-C reaches only
// us) and has the kernel SIGKILL it if the thread that started it dies,
// which for a Go program means the process.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
