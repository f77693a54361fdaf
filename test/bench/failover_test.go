package bench

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestLastCachesSynced(t *testing.T) {
	start := time.Date(2026, 12, 6, 3, 30, 0, 0, time.Local)
	log := `I1206 03:29:59.000000   1 shared_informer.go:1] "Caches are synced" controller="before"
I1206 03:30:01.500000   1 shared_informer.go:1] "Caches are synced" controller="a"
I1206 03:30:03.250000   1 shared_informer.go:1] "Caches are synced" controller="b"
I1206 03:30:04.000000   1 other.go:1] "Something else"
`
	p := filepath.Join(t.TempDir(), "kcm.log")
	if err := os.WriteFile(p, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := lastCachesSynced(p, start)
	if err != nil {
		t.Fatal(err)
	}
	if want := start.Add(3250 * time.Millisecond); !got.Equal(want) {
		t.Errorf("lastCachesSynced = %v, want %v", got, want)
	}
	if _, err := lastCachesSynced(p, start.Add(time.Hour)); err == nil {
		t.Error("no line after start, yet no error")
	}
}
