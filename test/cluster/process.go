package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// killWait bounds the wait for a process to be reaped after SIGKILL.
const killWait = 10 * time.Second

// process is one child: its own process group, output appended to a log file.
type process struct {
	name    Component
	path    string
	args    []string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{} // closed once the process has been reaped
	waitErr error         // cmd.Wait's result, valid once done is closed
}

// startProcess runs path with args, appending its stdout and stderr to
// logPath after a header line with the command line. argv[0] is the
// component's canonical name whatever the binary file is called: Kubernetes
// binaries derive their User-Agent, and so the field manager in
// managedFields, from it, and upstream's controller manager must look like
// "kube-controller-manager" to the apiserver, not like its file name.
func startProcess(name Component, path string, args []string, dir, logPath string) (*process, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cluster: open log of %s: %w", name, err)
	}
	// The child has its own descriptor once started; ours is not needed then.
	defer f.Close()
	fmt.Fprintf(f, "==== %s start: %s %s\n", time.Now().Format(time.RFC3339Nano), path, strings.Join(args, " "))

	cmd := exec.Command(path, args...)
	cmd.Args[0] = string(name)
	cmd.Dir = dir
	cmd.Stdout = f
	cmd.Stderr = f
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cluster: start %s (%s): %w", name, path, err)
	}
	p := &process{name: name, path: path, args: args, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// pid is the process's id, which is also its process group's id.
func (p *process) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has ended and been reaped.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// exitError describes how the process ended, with the tail of its log.
func (p *process) exitError() error {
	return fmt.Errorf("cluster: %s exited early (%v); last lines of %s:\n%s", p.name, p.waitErr, p.logPath, tailFile(p.logPath, 30))
}

// signalGroup sends sig to the process's whole group. A group that no longer
// exists is not an error.
func (p *process) signalGroup(sig syscall.Signal) error {
	err := syscall.Kill(-p.pid(), sig)
	if err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("cluster: signal %v to %s (pgid %d): %w", sig, p.name, p.pid(), err)
	}
	return nil
}

// stop sends SIGTERM to the group, waits up to timeout, then SIGKILLs it.
// Whatever is left in the group once the leader is gone is killed too.
func (p *process) stop(timeout time.Duration) error {
	if !p.exited() {
		if err := p.signalGroup(syscall.SIGTERM); err != nil {
			return errors.Join(err, p.kill())
		}
		select {
		case <-p.done:
		case <-time.After(timeout):
			return p.kill()
		}
	}
	return p.signalGroup(syscall.SIGKILL)
}

// kill SIGKILLs the group and waits for the process to be reaped.
func (p *process) kill() error {
	if err := p.signalGroup(syscall.SIGKILL); err != nil {
		return err
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(killWait):
		return fmt.Errorf("cluster: %s (pid %d) not reaped %v after SIGKILL", p.name, p.pid(), killWait)
	}
}

// tailFile returns up to the last n lines of a file, for error messages.
func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read: %v)", err)
	}
	const maxBytes = 64 << 10
	if len(b) > maxBytes {
		b = b[len(b)-maxBytes:]
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
