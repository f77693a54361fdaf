package node

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// snapshot is the machine state a run may change: Cleanup undoes what
// differs from the state before, Verify reports what still does.
// It is saved next to the node's directory, so that a run killed before
// its Cleanup is cleaned up by the next one.
type snapshot struct {
	Sysctls  map[string]string
	Links    map[string]bool
	Netns    map[string]bool
	Mounts   map[string]bool
	Iptables map[string]map[string]bool // "iptables"/"ip6tables" -> "table|rule" or "table|:chain"
	Cgroups  map[string]bool            // /sys/fs/cgroup/<controller>/<top-level dir>
	Paths    map[string]bool
}

// hostPaths are the places outside Config.Dir that containerd, runc, the
// CNI plugins, the kubelet and kube-proxy write to; those a run created are
// removed.
var hostPaths = []string{
	"/lib/modules", "/run/xtables.lock", "/run/netns", "/run/containerd", "/var/lib/containerd",
	"/var/lib/cni", "/var/lib/kubelet", "/var/log/pods", "/var/log/containers", "/etc/cni",
	"/opt/cni", "/opt/containerd", "/run/runc", "/var/run/netns", "/etc/kubernetes", "/run/kubernetes",
}

func takeSnapshot(n *Node) (*snapshot, error) {
	s := &snapshot{Sysctls: map[string]string{}, Links: map[string]bool{}, Netns: map[string]bool{}, Mounts: map[string]bool{},
		Iptables: map[string]map[string]bool{}, Cgroups: map[string]bool{}, Paths: map[string]bool{}}
	for _, k := range sysctls {
		if v, ok := readSysctl(k); ok {
			s.Sysctls[k] = v
		}
	}
	ifaces, err := os.ReadDir("/sys/class/net")
	if err != nil {
		return nil, err
	}
	for _, e := range ifaces {
		s.Links[e.Name()] = true
	}
	if es, err := os.ReadDir("/run/netns"); err == nil {
		for _, e := range es {
			s.Netns[e.Name()] = true
		}
	}
	ms, err := mountPoints()
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		s.Mounts[m] = true
	}
	for _, bin := range []string{"iptables", "ip6tables"} {
		s.Iptables[bin] = iptablesState(bin)
	}
	ctrls, _ := os.ReadDir("/sys/fs/cgroup")
	for _, c := range ctrls {
		if !c.IsDir() {
			continue
		}
		subs, _ := os.ReadDir(filepath.Join("/sys/fs/cgroup", c.Name()))
		for _, d := range subs {
			if d.IsDir() {
				s.Cgroups[filepath.Join("/sys/fs/cgroup", c.Name(), d.Name())] = true
			}
		}
	}
	for _, p := range hostPaths {
		if _, err := os.Lstat(p); err == nil {
			s.Paths[p] = true
		}
	}
	return s, nil
}

// mountPoints lists the mount points of this mount namespace, unescaped.
func mountPoints() ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if fs := strings.Fields(sc.Text()); len(fs) > 4 {
			out = append(out, unescapeMount(fs[4]))
		}
	}
	return out, sc.Err()
}

func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// iptablesState is every rule and user chain of every table, as
// "table|-A ..." and "table|:CHAIN", counters left out.
func iptablesState(bin string) map[string]bool {
	m := map[string]bool{}
	out, err := exec.Command(bin + "-save").Output()
	if err != nil {
		return m
	}
	table := ""
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, "*"):
			table = line[1:]
		case strings.HasPrefix(line, "-A "):
			m[table+"|"+line] = true
		case strings.HasPrefix(line, ":"):
			name := strings.Fields(line[1:])
			if len(name) > 1 && name[1] == "-" { // user chain (built-ins have a policy)
				m[table+"|:"+name[0]] = true
			}
		}
	}
	return m
}

// Stop stops the kubelet and containerd. The shims and the containers
// outlive containerd; Cleanup kills them (no ctr here: a `ctr tasks delete`
// once never returned during a teardown). Safe to call more than once.
func (n *Node) Stop() {
	if n.kubelet != nil && !n.kubelet.exited() {
		n.logf("node: stopping the kubelet")
		n.kubelet.stop(20 * time.Second)
	}
	if n.containerd != nil && !n.containerd.exited() {
		n.logf("node: stopping containerd")
		n.containerd.stop(20 * time.Second)
	}
}

// Cleanup undoes, after Stop, what the run changed on the machine: it kills
// what still runs of the node (shims, container processes), unmounts
// everything below the node's directory, removes network namespaces, links
// (LinkName, cni0, veths), iptables rules and chains, cgroups and host paths
// the run created, restores the sysctls, and removes the node's directory.
func (n *Node) Cleanup() error {
	var errs []error
	b := n.before
	// Processes: shims and container processes are not our children.
	for i := 0; i < 20; i++ {
		pids := n.leftoverProcs()
		if len(pids) == 0 {
			break
		}
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		time.Sleep(500 * time.Millisecond)
	}
	// Mounts, deepest first.
	ms, err := mountPoints()
	if err != nil {
		errs = append(errs, err)
	}
	var mine []string
	for _, m := range ms {
		if !b.Mounts[m] && n.ours("mount", m) {
			mine = append(mine, m)
		}
	}
	sort.Slice(mine, func(i, j int) bool { return len(mine[i]) > len(mine[j]) })
	for _, m := range mine {
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("umount %s: %w", m, err))
		}
	}
	// Network namespaces, then links (deleting a namespace takes its veth
	// end, and so the pair, with it).
	if es, err := os.ReadDir("/run/netns"); err == nil {
		for _, e := range es {
			if !b.Netns[e.Name()] {
				p := filepath.Join("/run/netns", e.Name())
				_ = syscall.Unmount(p, syscall.MNT_DETACH)
				if err := os.Remove(p); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	if ifaces, err := os.ReadDir("/sys/class/net"); err == nil {
		for _, e := range ifaces {
			if !b.Links[e.Name()] && n.ours("link", e.Name()) {
				if _, err := run("ip", "link", "delete", e.Name()); err != nil && linkExists(e.Name()) {
					errs = append(errs, err)
				}
			}
		}
	}
	for _, bin := range []string{"iptables", "ip6tables"} {
		if err := restoreIptables(bin, b.Iptables[bin]); err != nil {
			errs = append(errs, err)
		}
	}
	// cgroups, children first.
	ctrls, _ := os.ReadDir("/sys/fs/cgroup")
	for _, c := range ctrls {
		subs, _ := os.ReadDir(filepath.Join("/sys/fs/cgroup", c.Name()))
		for _, d := range subs {
			p := filepath.Join("/sys/fs/cgroup", c.Name(), d.Name())
			if d.IsDir() && !b.Cgroups[p] && n.ours("cgroup", p) {
				if err := removeCgroup(p); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	for k, v := range b.Sysctls {
		if now, ok := readSysctl(k); ok && now != v {
			if err := writeSysctl(k, v); err != nil {
				errs = append(errs, fmt.Errorf("sysctl %s: %w", k, err))
			}
		}
	}
	for _, p := range hostPaths {
		if !b.Paths[p] {
			if err := os.RemoveAll(p); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := os.RemoveAll(n.Dir); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		_ = os.Remove(n.snapshotPath())
	}
	return errors.Join(errs...)
}

func linkExists(name string) bool {
	_, err := os.Stat(filepath.Join("/sys/class/net", name))
	return err == nil
}

// restoreIptables deletes the rules added to chains that existed before,
// then flushes and deletes the chains that did not.
func restoreIptables(bin string, before map[string]bool) error {
	now := iptablesState(bin)
	byTable := map[string][]string{}
	var chains = map[string][]string{}
	for k := range now {
		if before[k] {
			continue
		}
		table, item, _ := strings.Cut(k, "|")
		if strings.HasPrefix(item, ":") {
			chains[table] = append(chains[table], item[1:])
		}
	}
	for k := range now {
		if before[k] {
			continue
		}
		table, item, _ := strings.Cut(k, "|")
		if rest, ok := strings.CutPrefix(item, "-A "); ok {
			chain, _, _ := strings.Cut(rest, " ")
			if !contains(chains[table], chain) {
				byTable[table] = append(byTable[table], "-D "+rest)
			}
		}
	}
	var script strings.Builder
	for _, table := range tablesOf(byTable, chains) {
		fmt.Fprintf(&script, "*%s\n", table)
		for _, d := range byTable[table] {
			script.WriteString(d + "\n")
		}
		for _, c := range chains[table] {
			fmt.Fprintf(&script, "-F %s\n", c)
		}
		for _, c := range chains[table] {
			fmt.Fprintf(&script, "-X %s\n", c)
		}
		script.WriteString("COMMIT\n")
	}
	if script.Len() == 0 {
		return nil
	}
	cmd := exec.Command(bin+"-restore", "--noflush")
	cmd.Stdin = strings.NewReader(script.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s-restore: %w: %s\n%s", bin, err, out, script.String())
	}
	return nil
}

func tablesOf(a, b map[string][]string) []string {
	set := map[string]bool{}
	for t := range a {
		set[t] = true
	}
	for t := range b {
		set[t] = true
	}
	var out []string
	for t := range set {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// removeCgroup removes a cgroup directory and its children, deepest first.
func removeCgroup(root string) error {
	var dirs []string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
	var errs []error
	for _, d := range dirs {
		if err := syscall.Rmdir(d); err != nil && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("rmdir %s: %w", d, err))
		}
	}
	return errors.Join(errs...)
}

// ours tells whether a mount, link or cgroup the run found new is one the
// node makes (other programs on the machine may make theirs meanwhile):
// mounts below the node's directory or the runtime's host paths, the link
// of the node's address, the bridge and the veths, the kubelet's kubepods
// cgroups.
func (n *Node) ours(kind, name string) bool {
	switch kind {
	case "mount":
		for _, p := range append([]string{n.Dir}, hostPaths...) {
			if name == p || strings.HasPrefix(name, p+"/") {
				return true
			}
		}
		return false
	case "link":
		return name == LinkName || name == "cni0" || strings.HasPrefix(name, "veth")
	case "cgroup":
		return strings.HasPrefix(filepath.Base(name), "kubepods")
	}
	return true
}

// leftoverProcs are the processes that belong to the node: those whose
// command line or executable names the node's directory (containerd, its
// shims, container processes running from their rootfs) or a node binary,
// and those in a cgroup the run created.
func (n *Node) leftoverProcs() []int {
	self := os.Getpid()
	var pids []int
	es, _ := os.ReadDir("/proc")
	for _, e := range es {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		exe, _ := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		cg, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cgroup"))
		if n.isNodeProc(string(cmdline), exe, string(cg)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func (n *Node) isNodeProc(cmdline, exe, cgroup string) bool {
	if strings.Contains(cmdline, n.Dir) || strings.HasPrefix(exe, n.Dir) {
		return true
	}
	for _, b := range NodeBinaries {
		if exe == filepath.Join(n.BinDir, b) {
			return true
		}
	}
	for _, line := range strings.Split(cgroup, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && strings.HasPrefix(parts[2], "/kubepods") {
			return true
		}
	}
	return false
}

// Verify lists what of the run is still on the machine (nothing after a
// good Cleanup).
func (n *Node) Verify() error {
	now, err := takeSnapshot(n)
	if err != nil {
		return err
	}
	b := n.before
	var left []string
	if pids := n.leftoverProcs(); len(pids) > 0 {
		left = append(left, fmt.Sprintf("processes %v", pids))
	}
	diff := func(what string, before, after map[string]bool) {
		var extra []string
		for k := range after {
			if !before[k] && n.ours(what, k) {
				extra = append(extra, k)
			}
		}
		sort.Strings(extra)
		if len(extra) > 0 {
			if len(extra) > 10 {
				extra = append(extra[:10], fmt.Sprintf("… %d more", len(extra)-10))
			}
			left = append(left, what+": "+strings.Join(extra, ", "))
		}
	}
	diff("link", b.Links, now.Links)
	diff("network namespace", b.Netns, now.Netns)
	diff("mount", b.Mounts, now.Mounts)
	diff("iptables", b.Iptables["iptables"], now.Iptables["iptables"])
	diff("ip6tables", b.Iptables["ip6tables"], now.Iptables["ip6tables"])
	diff("cgroup", b.Cgroups, now.Cgroups)
	diff("path", b.Paths, now.Paths)
	for k, v := range b.Sysctls {
		if now.Sysctls[k] != v {
			left = append(left, fmt.Sprintf("sysctl %s=%s (was %s)", k, now.Sysctls[k], v))
		}
	}
	if _, err := os.Stat(n.Dir); err == nil {
		left = append(left, n.Dir)
	}
	if len(left) > 0 {
		return fmt.Errorf("node: left on the machine: %s", strings.Join(left, "; "))
	}
	return nil
}
