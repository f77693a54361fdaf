package kubeadm

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Snapshot is the part of the machine a run changes. Taken before the run
// and saved beside the nodes' directory, so that a run killed before its
// cleanup is cleaned up by the next one.
type Snapshot struct {
	Links, Netns, Cgroups, Paths, Mounts []string
}

// hostPaths are the places outside DefaultDir that a run may create.
func hostPaths() []string {
	return append(slices.Clone(nodePaths), "/lib/modules", nsDir, "/run/netns")
}

// TakeSnapshot records the links, network namespaces, cgroups, paths and
// mounts there are now.
func TakeSnapshot() (*Snapshot, error) {
	s := &Snapshot{}
	es, err := os.ReadDir("/sys/class/net")
	if err != nil {
		return nil, err
	}
	for _, e := range es {
		s.Links = append(s.Links, e.Name())
	}
	if es, err := os.ReadDir("/run/netns"); err == nil {
		for _, e := range es {
			s.Netns = append(s.Netns, e.Name())
		}
	}
	for _, c := range cgroupControllers() {
		subs, _ := os.ReadDir(filepath.Join("/sys/fs/cgroup", c))
		for _, d := range subs {
			if d.IsDir() {
				s.Cgroups = append(s.Cgroups, filepath.Join("/sys/fs/cgroup", c, d.Name()))
			}
		}
	}
	for _, p := range append(hostPaths(), DefaultDir) {
		if _, err := os.Lstat(p); err == nil {
			s.Paths = append(s.Paths, p)
		}
	}
	if s.Mounts, err = mounts(); err != nil {
		return nil, err
	}
	return s, nil
}

func mounts() ([]string, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 {
			out = append(out, f[4])
		}
	}
	return out, nil
}

func snapshotPath() string { return DefaultDir + ".before.json" }

// Save writes the snapshot beside DefaultDir.
func (s *Snapshot) Save() error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return os.WriteFile(snapshotPath(), b, 0o600)
}

// PreviousSnapshot is the snapshot of a run that did not clean up, or nil.
func PreviousSnapshot() (*Snapshot, error) {
	b, err := os.ReadFile(snapshotPath())
	if os.IsNotExist(err) {
		if _, err := os.Stat(DefaultDir); err == nil {
			return nil, fmt.Errorf("kubeadm: %s exists but no %s: remove it by hand once nothing runs or is mounted below it", DefaultDir, snapshotPath())
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s := &Snapshot{}
	return s, json.Unmarshal(b, s)
}

// nodeProcs are the processes of the run: in a node's cgroup (the node's
// containerd and kubelet, the shims, every container) or in one of its
// namespaces.
func nodeProcs() []int {
	var pids []int
	self := os.Getpid()
	es, _ := os.ReadDir("/proc")
	for _, e := range es {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		cg, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cgroup"))
		if strings.Contains(string(cg), ":/kcm-e2e-") {
			pids = append(pids, pid)
			continue
		}
		if l, err := os.Readlink(filepath.Join("/proc", e.Name(), "ns", "net")); err == nil && ownNetns(l) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// ownNetns reports whether a /proc/PID/ns/net link names one of the
// nodes' network namespaces.
func ownNetns(link string) bool {
	es, _ := os.ReadDir("/run/netns")
	for _, e := range es {
		if !strings.HasPrefix(e.Name(), "kcm-") {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat(filepath.Join("/run/netns", e.Name()), &st) == nil && link == fmt.Sprintf("net:[%d]", st.Ino) {
			return true
		}
	}
	return false
}

// Cleanup undoes what the run did: it kills every process of the nodes,
// removes their namespaces, the links, cgroups and paths the run created,
// and the nodes' directory.
func Cleanup(s *Snapshot) error {
	var errs []error
	for i := 0; i < 40; i++ {
		pids := nodeProcs()
		if len(pids) == 0 {
			break
		}
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if pids := nodeProcs(); len(pids) > 0 {
		errs = append(errs, fmt.Errorf("processes still running: %v", pids))
	}
	// Namespaces: the bind mounts that hold them, then the files.
	if es, err := os.ReadDir(nsDir); err == nil {
		for _, e := range es {
			p := filepath.Join(nsDir, e.Name())
			_ = syscall.Unmount(p, syscall.MNT_DETACH)
			if err := os.Remove(p); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if es, err := os.ReadDir("/run/netns"); err == nil {
		for _, e := range es {
			if !slices.Contains(s.Netns, e.Name()) && strings.HasPrefix(e.Name(), "kcm-") {
				if err := sh("ip", "netns", "delete", e.Name()); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	if es, err := os.ReadDir("/sys/class/net"); err == nil {
		for _, e := range es {
			if !slices.Contains(s.Links, e.Name()) && (e.Name() == Bridge || strings.HasPrefix(e.Name(), "kcmv-")) {
				// A veth goes with its peer's namespace, maybe meanwhile.
				if err := sh("ip", "link", "delete", e.Name()); err != nil && linkExists(e.Name()) {
					errs = append(errs, err)
				}
			}
		}
	}
	for _, c := range cgroupControllers() {
		subs, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup", c, "kcm-e2e-*"))
		for _, p := range subs {
			if !slices.Contains(s.Cgroups, p) {
				if err := removeCgroupTree(p); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	if err := os.RemoveAll(DefaultDir); err != nil {
		errs = append(errs, err)
	}
	// Paths the run created; some are mounts here (nsDir, and /run/netns,
	// which ip netns mounts): unmounted first.
	for _, p := range hostPaths() {
		if slices.Contains(s.Paths, p) {
			continue
		}
		for i := 0; i < 5 && syscall.Unmount(p, syscall.MNT_DETACH) == nil; i++ {
		}
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		_ = os.Remove(snapshotPath())
	}
	return errors.Join(errs...)
}

func linkExists(name string) bool {
	_, err := os.Lstat(filepath.Join("/sys/class/net", name))
	return err == nil
}

// removeCgroupTree removes a cgroup directory, children first; an emptied
// cgroup may take a moment to be removable.
func removeCgroupTree(root string) error {
	var dirs []string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	slices.Reverse(dirs)
	for _, d := range dirs {
		var err error
		for i := 0; i < 20; i++ {
			if err = syscall.Rmdir(d); err == nil || errors.Is(err, syscall.ENOENT) {
				err = nil
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			return fmt.Errorf("rmdir %s: %w", d, err)
		}
	}
	return nil
}

// Verify reports what still differs from the snapshot.
func Verify(before *Snapshot) error {
	now, err := TakeSnapshot()
	if err != nil {
		return err
	}
	var left []string
	for _, d := range []struct {
		what        string
		before, now []string
	}{
		{"link", before.Links, now.Links}, {"network namespace", before.Netns, now.Netns},
		{"cgroup", before.Cgroups, now.Cgroups}, {"path", before.Paths, now.Paths}, {"mount", before.Mounts, now.Mounts},
	} {
		for _, x := range d.now {
			if !slices.Contains(d.before, x) {
				left = append(left, d.what+" "+x)
			}
		}
	}
	if pids := nodeProcs(); len(pids) > 0 {
		left = append(left, fmt.Sprintf("processes %v", pids))
	}
	if len(left) > 0 {
		return fmt.Errorf("kubeadm: the run left %s", strings.Join(left, ", "))
	}
	return nil
}
