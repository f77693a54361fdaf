package controllermanager

import (
	"testing"
	"time"
)

func TestPacedIsZeroUnderUpstreamWriteTiming(t *testing.T) {
	if got := (&ControllerContext{}).Paced(time.Second); got != time.Second {
		t.Errorf("Paced(1s) = %v, want 1s by default", got)
	}
	if got := (&ControllerContext{UpstreamWriteTiming: true}).Paced(time.Second); got != 0 {
		t.Errorf("Paced(1s) = %v under UpstreamWriteTiming, want 0", got)
	}
}
