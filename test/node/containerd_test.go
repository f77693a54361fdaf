package node

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestShimRuntimePath: a containerd given by path runs the shim built
// beside it, never one found on PATH; the host's containerd keeps its own.
func TestShimRuntimePath(t *testing.T) {
	dir := t.TempDir()
	ctrd := filepath.Join(dir, "containerd")
	n := &Node{Config: Config{Containerd: ctrd}}
	if got := n.shimRuntimePath(); got != "" {
		t.Errorf("no shim beside containerd: %q, want nothing", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "containerd-shim-runc-v2"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	want := `runtime_path = "` + filepath.Join(dir, "containerd-shim-runc-v2") + `"`
	if got := n.shimRuntimePath(); !strings.Contains(got, want) {
		t.Errorf("shim beside containerd: %q, want %q", got, want)
	}
	if got := (&Node{}).shimRuntimePath(); got != "" {
		t.Errorf("host containerd: %q, want nothing", got)
	}
}

// TestRequireStatic: the images have no C library, so a dynamically
// linked binary is refused before it is packed (the DRA specs' exec of
// /hostpathplugin failed that way).
func TestRequireStatic(t *testing.T) {
	if err := requireStatic("/bin/sh"); err == nil || !strings.Contains(err.Error(), "dynamically linked") {
		t.Errorf("/bin/sh: %v, want a dynamically linked error", err)
	}
	if err := requireStatic(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing file passed")
	}
}
