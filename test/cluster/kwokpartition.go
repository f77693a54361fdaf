package cluster

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"syscall"
)

// KwokPartition is the component name of the kwok instance that manages
// the Nodes annotated KwokNodeAnnotation=value (StartKwokPartition).
func KwokPartition(value string) Component { return Component("kwok-" + value) }

// StartKwokPartition starts another kwok, with the main one's stages and
// flags, managing only the Nodes annotated KwokNodeAnnotation=value, and
// waits for its /healthz. Large clusters spread their Nodes over several
// (kwok's README puts one instance at about 1,000 nodes); a partition
// paused with PauseComponent is a rack that lost power: its Nodes stop
// heartbeating and their pods stop changing.
func (c *Cluster) StartKwokPartition(ctx context.Context, value string) error {
	if value == KwokNodeAnnotationValue || value == "" {
		return fmt.Errorf("cluster: kwok partition %q: the main kwok manages that value", value)
	}
	c.opMu.Lock()
	defer c.opMu.Unlock()
	name := KwokPartition(value)
	if p := c.proc(name); p != nil && !p.exited() {
		return fmt.Errorf("cluster: %s already runs (pid %d)", name, p.pid())
	}
	stages, err := kwokStages(c.opts.KwokStages)
	if err != nil {
		return err
	}
	if stages, err = c.adjustStages(stages); err != nil {
		return err
	}
	ports, err := allocatePorts(1)
	if err != nil {
		return err
	}
	args := partitionArgs(c.kwokArgs(stages), value, ports[0])
	c.opts.Logf("cluster: starting %s on 127.0.0.1:%d", name, ports[0])
	p, err := c.start(name, c.opts.Kwok, args)
	if err != nil {
		return err
	}
	url := "http://127.0.0.1:" + strconv.Itoa(ports[0]) + "/healthz"
	if err := waitFor(ctx, c.opts.StartTimeout, string(name)+" /healthz", p, httpOK(insecureHTTP(), url)); err != nil {
		return fmt.Errorf("cluster: %s not ready: %w", name, err)
	}
	return nil
}

// partitionArgs is the main kwok's command line for another annotation
// value and port.
func partitionArgs(main []string, value string, port int) []string {
	out := make([]string, 0, len(main))
	for _, a := range main {
		switch {
		case strings.HasPrefix(a, "--manage-nodes-with-annotation-selector="):
			a = "--manage-nodes-with-annotation-selector=" + KwokNodeAnnotation + "=" + value
		case strings.HasPrefix(a, "--server-address="):
			a = "--server-address=127.0.0.1:" + strconv.Itoa(port)
		}
		out = append(out, a)
	}
	return out
}

// PauseComponent stops a running component's process group (SIGSTOP)
// until ResumeComponent: it holds its connections but does nothing.
func (c *Cluster) PauseComponent(name Component) error {
	return c.signalComponent(name, syscall.SIGSTOP)
}

// ResumeComponent continues a paused component (SIGCONT).
func (c *Cluster) ResumeComponent(name Component) error {
	return c.signalComponent(name, syscall.SIGCONT)
}

func (c *Cluster) signalComponent(name Component, sig syscall.Signal) error {
	p := c.proc(name)
	if p == nil || p.exited() {
		return fmt.Errorf("cluster: %s is not running", name)
	}
	return p.signalGroup(sig)
}
