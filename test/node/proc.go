package node

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// proc is a child process of the node (containerd, the kubelet): its own
// process group, SIGKILL if this program dies, output appended to a log.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
}

func startProc(name, logPath, bin string, args ...string) (*proc, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fmt.Fprintf(f, "==== %s start: %s %s\n", time.Now().Format(time.RFC3339Nano), bin, strings.Join(args, " "))
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("node: start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	return p, nil
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process group, SIGKILL after timeout.
func (p *proc) stop(timeout time.Duration) {
	if p == nil || p.exited() {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(timeout):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
		}
	}
}

// run runs a command to completion, returning its combined output. It
// gives up after a minute, and does not wait for processes the command
// left holding its output (a containerd shim may).
func run(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = 2 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// Proc is a process started by StartProc: for other test packages that run
// node processes (test/kubeadm), the same lifecycle as the node's own.
type Proc = proc

// StartProc starts bin in its own process group, killed if this program
// dies, its output appended to logPath.
func StartProc(name, logPath, bin string, args ...string) (*Proc, error) {
	return startProc(name, logPath, bin, args...)
}

// Exited reports whether the process has exited.
func (p *proc) Exited() bool { return p.exited() }

// Stop sends SIGTERM to the process group, SIGKILL after timeout.
func (p *proc) Stop(timeout time.Duration) { p.stop(timeout) }

// Pid is the process's ID.
func (p *proc) Pid() int { return p.cmd.Process.Pid }

// Run runs a command to completion (a minute at most) and returns its
// combined output.
func Run(name string, args ...string) (string, error) { return run(name, args...) }
