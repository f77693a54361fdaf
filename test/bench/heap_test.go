package bench

import "testing"

func TestParseHeapInUse(t *testing.T) {
	body := []byte("# HELP go_memstats_heap_inuse_bytes x\n# TYPE go_memstats_heap_inuse_bytes gauge\ngo_memstats_heap_inuse_bytes 1.048576e+08\ngo_memstats_heap_inuse_bytes_total 1\n")
	got, err := parseHeapInUse(body)
	if err != nil || got != 100 {
		t.Errorf("parseHeapInUse = %v, %v; want 100 MiB", got, err)
	}
	if _, err := parseHeapInUse([]byte("other 1\n")); err == nil {
		t.Error("a body without the gauge parsed")
	}
}
