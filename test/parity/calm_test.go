package parity

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestReuseCalm: an earlier result's calm run (capture, metrics, work dir)
// is copied into a new result's directory; a result without one says
// fs.ErrNotExist, so the calm run is made instead.
func TestReuseCalm(t *testing.T) {
	from, dir := t.TempDir(), t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(from, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("upstream.yaml", "--- # Pod a/x\nkind: Pod\n")
	write("upstream.metrics.json", `{"workqueue_adds_total": {"type": "counter", "labels": ["name"]}}`)
	write("upstream.metrics.txt", "workqueue_adds_total{name=\"x\"} 1\n")
	write("upstream/audit.log", "{}\n")
	write("upstream/logs/kube-controller-manager.log", "ok\n")

	text, fams, err := reuseCalm(from, dir, "upstream")
	if err != nil {
		t.Fatal(err)
	}
	if text != "--- # Pod a/x\nkind: Pod\n" {
		t.Errorf("capture %q", text)
	}
	if f, ok := fams["workqueue_adds_total"]; !ok || f.Type != "counter" {
		t.Errorf("families %+v", fams)
	}
	for _, name := range []string{"upstream.yaml", "upstream.metrics.json", "upstream.metrics.txt", "upstream/audit.log", "upstream/logs/kube-controller-manager.log"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("not copied: %v", err)
		}
	}
	if _, _, err := reuseCalm(filepath.Join(from, "none"), t.TempDir(), "upstream"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no earlier run: %v, want fs.ErrNotExist", err)
	}
}
