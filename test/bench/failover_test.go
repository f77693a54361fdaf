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

// TestScaleOutageSpread: a tenth of the nodes go silent, a tenth of every
// zone, at every size.
func TestScaleOutageSpread(t *testing.T) {
	for _, nodes := range []int{20, 500, 2000} {
		down, zoneSize, zoneDown := 0, map[int]int{}, map[int]int{}
		for i := range nodes {
			zoneSize[scaleZone(i)]++
			if scaleOutageNode(i) {
				down++
				zoneDown[scaleZone(i)]++
			}
		}
		if down*10 != nodes {
			t.Errorf("%d nodes: %d silent, want a tenth", nodes, down)
		}
		for z, n := range zoneSize {
			if zoneDown[z]*10 != n {
				t.Errorf("%d nodes: zone %d has %d of %d silent", nodes, z, zoneDown[z], n)
			}
		}
	}
}

func TestSumGauge(t *testing.T) {
	body := []byte(`# TYPE apiserver_longrunning_requests gauge
apiserver_longrunning_requests{component="apiserver",group="",resource="pods",scope="cluster",subresource="",verb="WATCH",version="v1"} 3
apiserver_longrunning_requests{component="apiserver",group="apps",resource="deployments",scope="cluster",subresource="",verb="WATCH",version="v1"} 2
apiserver_longrunning_requests{component="apiserver",group="",resource="pods",scope="namespace",subresource="exec",verb="CONNECT",version="v1"} 7
`)
	got, err := sumGauge(body, "apiserver_longrunning_requests", `verb="WATCH"`)
	if err != nil || got != 5 {
		t.Errorf("sumGauge = %v, %v; want 5", got, err)
	}
}
