package parity

import (
	"testing"
	"time"
)

func TestSubstituteTimes(t *testing.T) {
	now := time.Date(2026, 7, 1, 12, 0, 0, 500, time.FixedZone("x", 3600))
	tests := []struct {
		in, want string
		wantErr  bool
	}{
		{in: `{"expiration":"{{now}}"}`, want: `{"expiration":"2026-07-01T11:00:00Z"}`},
		{in: `{"a":"{{now +30s}}","b":"{{now -1h}}"}`, want: `{"a":"2026-07-01T11:00:30Z","b":"2026-07-01T10:00:00Z"}`},
		{in: `{"a":"{{now +soon}}"}`, wantErr: true},
		{in: `{"a":"{{later}}"}`, want: `{"a":"{{later}}"}`},
	}
	for _, tc := range tests {
		got, err := substituteTimes([]byte(tc.in), now)
		if (err != nil) != tc.wantErr || (!tc.wantErr && string(got) != tc.want) {
			t.Errorf("substituteTimes(%s) = %s, %v; want %s (error %v)", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}
